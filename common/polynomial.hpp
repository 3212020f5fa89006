// The op-length family: a polynomial by Horner's rule of a given number of steps (operations of
// the expression language: steps / 2 multiplies and as many additions; one step is x * 0.5), the coefficient
// of x^i being 1 / (i + 2). A user's op is often longer than the catalogue's (one to seven steps),
// and what a step costs is where an interpreter and a compiled kernel (from the op's text, or a switch
// over ops built in) part: the op-length sweep runs each length through each. The language's text
// (polynomial_text) and the functor (polynomial<steps>) come from the one coefficient function.
#pragma once

#include "portable.cuh"

#include <string>

namespace cdl {

inline constexpr int op_lengths[] = {1, 4, 16, 30, 64};

CDL_HD constexpr double polynomial_coefficient(int i) { return 1.0 / double(i + 2); }

// The polynomial of `steps` steps at x, in double: the float64 reference, on the host.
inline double polynomial_value(int steps, double x) {
  if (steps == 1) return x * 0.5;
  double acc = polynomial_coefficient(steps / 2);
  for (int i = steps / 2 - 1; i >= 0; --i) acc = acc * x + polynomial_coefficient(i);
  return acc;
}

// The same as an op type (for a switch over the lengths): its steps written out by template recursion
// and every coefficient a constant of the front end's (polynomial_coefficient is constexpr), so that
// no compiler computes a coefficient at run time, whatever it unrolls.
template <int Steps>
struct polynomial {
  template <int I, class T>
  static CDL_HD T horner(T acc, T x) {
    if constexpr (I < 0)
      return acc;
    else
      return horner<I - 1>(acc * x + T(polynomial_coefficient(I)), x);
  }
  template <class T>
  CDL_HD T operator()(T x) const {
    if constexpr (Steps == 1)
      return x * T(0.5);
    else
      return horner<Steps / 2 - 1>(T(polynomial_coefficient(Steps / 2)), x);
  }
};

// The same polynomial in the expression language, each coefficient printed exactly (17 digits).
std::string polynomial_text(int steps);

}  // namespace cdl
