// What the interpreter's CPU and GPU tests run (tests/cpu_bytecode_test.cpp,
// tests/gpu_interpreter_test.cpp): a program of each construct of 08's language, and random programs.
#pragma once

#include <cstdint>
#include <string>

namespace cdl::test {

inline constexpr const char* language_constructs[] = {
    "x",
    "2",
    "-x",
    "x + 1",
    "x - 1",
    "x * 3",
    "x / 4",
    "x * x + 2 * x + 1",
    "1 + x * x",
    "x < 1 ? 2 : 3",
    "x <= 1 ? x : -x",
    "x > 1 ? 1 : 0",
    "x >= 0.5 ? sin(x) : cos(x)",
    "x == 1 ? 5 : x",
    "x != 1 ? 5 : x",
    "exp(x)",
    "sqrt(x)",
    "min(x, 0.7)",
    "max(x, 0.7)",
    "s = sin(x); c = cos(x); exp(s * c)",
    "a = x * x; b = a * a; b * b + a",
    "unused = sin(x); x * 2",
    "T(2) * x",
};

inline std::uint64_t next(std::uint64_t& state) {
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

// A random value of the language: nested operations over x, numbers and the temporary t.
inline std::string random_value(std::uint64_t& s, int depth, bool t_defined = true) {
  if (depth == 0 || next(s) % 5 == 0) {
    switch (next(s) % 4) {
      case 0: return std::to_string(double(next(s) % 1000) / 100.0);
      case 1: return t_defined ? "t" : "x";
      default: return "x";
    }
  }
  const std::string a = random_value(s, depth - 1, t_defined), b = random_value(s, depth - 1, t_defined);
  switch (next(s) % 11) {
    case 0: return "(" + a + " + " + b + ")";
    case 1: return "(" + a + " - " + b + ")";
    case 2: return "(" + a + " * " + b + ")";
    case 3: return "(" + a + " / " + b + ")";
    case 4: return "-" + a;
    case 5: return "sin(" + a + ")";
    case 6: return "exp(" + a + " / 8)";
    case 7: return "sqrt(" + a + " * " + a + ")";
    case 8: return "min(" + a + ", " + b + ")";
    case 9: return "max(" + a + ", " + b + ")";
    default: return "(" + a + " < " + b + " ? " + b + " : " + a + ")";
  }
}

}  // namespace cdl::test
