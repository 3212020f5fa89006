// Seeded inputs. Element i is a function of (seed, i) alone (a counter-based generator), so
// inputs are identical whatever the thread count and any element can be regenerated.
//
// Inputs are drawn from [input_lo, input_hi): non-zero, so an unwritten or zeroed output
// cannot pass, and positive, so the ops' expressions stay well conditioned and a tolerance
// relative to the result is meaningful.
#pragma once

#include "parallel.hpp"

#include <cstdint>
#include <vector>

namespace cdl {

inline constexpr double input_lo = 0.25;
inline constexpr double input_hi = 1.75;
inline constexpr std::uint64_t default_seed = 20261122;

// splitmix64 of (seed, i): a well-mixed 64-bit value, then its top 53 bits as a double in [0, 1).
inline double uniform01(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

template <class T>
std::vector<T> uniform_inputs(std::size_t n, std::uint64_t seed, double lo = input_lo, double hi = input_hi) {
  std::vector<T> v(n);
  parallel_for(n, worker_count(n), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) v[i] = T(lo + (hi - lo) * uniform01(seed, i));
  });
  return v;
}

}  // namespace cdl
