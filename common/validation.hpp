// Validation: every element of a device result against a float64 CPU reference.
//
// A reference element carries its value and a scale: the sum of the magnitudes of the terms
// that produced it (of a term of a user's op, its magnitude with nothing cancelled:
// expr::evaluate_bounded). The tolerance is relative to that scale, so it stays meaningful for
// sums with cancellation, and it grows with the number of roundings (op accuracy + terms summed).
//
// An output is poisoned before every run with a NaN of its own bit pattern (a signalling NaN with a
// payload, below), and an element that still holds it was never written: it fails, whatever the
// reference says. Every other NaN is one the kernel computed, and it passes exactly where the
// float64 reference is NaN too (an op like sqrt(x - 100)); a NaN anywhere else fails.
#pragma once

#include "types.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

namespace cdl {

struct reference_value {
  double value = 0;
  double scale = 0;  // sum of |terms|; the error bound is relative to this
};

struct validation_result {
  bool passed = false;
  std::uint64_t checked = 0;
  std::uint64_t failures = 0;
  std::int64_t first_bad = -1;  // index of the first failing element, -1 if none
  double first_bad_got = 0;
  double first_bad_expected = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // |got - value| / scale, the quantity compared to the tolerance
  double tolerance = 0;
  std::uint64_t unwritten = 0;  // failures that still hold the poison: elements never written

  std::string summary() const;
};

// Relative tolerance for a result built from `terms` evaluations of an op accurate to
// `op_ulps` epsilons, each rounding once into a running sum. The factor 4 is headroom for the
// reference's own rounding and for FMA contraction, and is far below any real bug (a wrong
// op or index is off by O(1), an unwritten element is NaN).
double tolerance_for(double epsilon, int op_ulps, int terms);

template <class T>
constexpr double epsilon_of() {
  return std::numeric_limits<T>::epsilon();
}
inline double epsilon_of(dtype t) { return t == dtype::f32 ? epsilon_of<float>() : epsilon_of<double>(); }

// The poison: a signalling NaN (the quiet bit clear) with a payload. IEEE 754 arithmetic that
// returns a NaN returns a quiet one (the GPU's is 0x7fffffff, with its sign flipped by a negation;
// x86's 0xffc00000), so no op computes this pattern; only a copy of it could, and no kernel here
// reads its output. Every byte 0xFF, the usual memset, is the GPU's own NaN negated: -sqrt(-1).
inline constexpr std::uint32_t poison_f32 = 0x7fa0dead;
inline constexpr std::uint64_t poison_f64 = 0x7ff4deaddeaddeadull;
template <class T>
bool is_poison(T v) {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<std::uint32_t>(v) == poison_f32;
  else
    return std::bit_cast<std::uint64_t>(v) == poison_f64;
}
template <class T>
T poison_value() {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<T>(poison_f32);
  else
    return std::bit_cast<T>(poison_f64);
}

template <class T>
validation_result validate(std::span<const T> got, std::span<const reference_value> expected,
                           double tolerance);

}  // namespace cdl
