// What the tests of the routes that take a user's op run (the interpreter's, copy-and-patch's, the
// language's): a program of each construct of 08's language, and random programs.
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

// A random op of the whole language, for the fuzzes of the routes that take a user's op: every
// operator and function, nested selects of any comparison, temporaries read once or more, numbers of
// either sign and of many magnitudes; `depth` its nesting.
inline std::string random_op(std::uint64_t& s, int depth, int temporaries = 0) {
  const auto pick = [&](unsigned n) { return unsigned(next(s) % n); };
  static const char* numbers[] = {"0.5", "1.5", "-2", "3", "0.25", "-0.75", "7", "1e-3", "2.5e2", "0.1"};
  if (depth == 0 || pick(5) == 0) {
    if (temporaries > 0 && pick(3) == 0) return "t" + std::to_string(pick(unsigned(temporaries)));
    return pick(2) ? "x" : numbers[pick(10)];
  }
  const auto sub = [&] { return random_op(s, depth - 1, temporaries); };
  static const char* compares[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
  static const char* functions[] = {"sin", "cos", "exp", "sqrt"};
  switch (pick(12)) {
    case 0: return "(" + sub() + " + " + sub() + ")";
    case 1: return "(" + sub() + " - " + sub() + ")";
    case 2: return sub() + " * " + sub();
    case 3: return "(" + sub() + ") / (" + sub() + ")";
    case 4: return "(" + sub() + ") / " + numbers[pick(10)];
    case 5: return "min(" + sub() + ", " + sub() + ")";
    case 6: return "max(" + sub() + ", " + sub() + ")";
    case 7: return "-" + sub();
    case 8: return std::string(functions[pick(4)]) + "(" + sub() + ")";
    case 9: return "(" + sub() + compares[pick(6)] + sub() + " ? " + sub() + " : " + sub() + ")";
    case 10: return "(" + sub() + " * x + " + numbers[pick(10)] + ")";
    default: return std::string(functions[pick(4)]) + "(x * " + numbers[pick(10)] + ")";
  }
}
// A random program: up to three temporaries, each from those before it, then the result.
inline std::string random_program(std::uint64_t& s, int depth) {
  std::string text;
  const int temporaries = int(next(s) % 4);
  for (int t = 0; t < temporaries; ++t)
    text.append("t").append(std::to_string(t)).append(" = ").append(random_op(s, depth, t)).append("; ");
  return text + random_op(s, depth, temporaries);
}

}  // namespace cdl::test
