// Validation: every element of a device result against a float64 CPU reference.
//
// A reference element carries its value and a scale: the sum of the magnitudes of the terms
// that produced it. The tolerance is relative to that scale, so it stays meaningful for sums
// with cancellation, and it grows with the number of roundings (op accuracy + terms summed).
// NaN never passes, which is how an element the kernel never wrote (poisoned with NaN before
// the launch) is caught.
#pragma once

#include "types.hpp"

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

// Fills the bytes of a device output with 0xFF before a run: NaN for float and double.
inline constexpr int poison_byte = 0xFF;

template <class T>
validation_result validate(std::span<const T> got, std::span<const reference_value> expected,
                           double tolerance);

}  // namespace cdl
