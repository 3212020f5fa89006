// The expression language's meaning, from outside the code that implements it: hand-written values
// for unary minus, every operator's precedence and associativity and constants on either side of a
// comparison, and random programs, each read by the tests' own evaluator (expression_oracle.hpp,
// apart from common/expression.cpp) and by the suite's float64 interpreter and bytecode, which must
// agree with it.
#include "common/bytecode.hpp"
#include "common/expression.hpp"
#include "expression_oracle.hpp"
#include "random_programs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace cdl {
namespace {

struct known {
  const char* text;
  double x, value;  // worked out by hand
};

// Each line a rule of the grammar at a boundary: what binds tighter, which side groups first.
constexpr known cases[] = {
    {"-x + 1", 3, -2},  // unary minus takes its operand, not the sum
    {"-x * 3", 2, -6},
    {"--x", 2, 2},
    {"+x - -1", 2, 3},
    {"1 - -x * 2", 3, 7},
    {"2 - 3 - 4", 0, -5},  // left-associative
    {"2 - x + 4", 3, 3},
    {"8 / 2 / 4", 0, 1},
    {"8 / 2 * 4", 0, 16},
    {"2 * 3 / 4", 0, 1.5},
    {"2 + 3 * 4", 0, 14},  // * before +
    {"2 * 3 + 4 * 5", 0, 26},
    {"(2 + 3) * 4", 0, 20},
    {"x - 2 * x - 3", 5, -8},
    {"1 / x + x / 4 - 2", 2, -1},
    {"2 <= x ? 1 : 0", 3, 1},  // a constant on the left of a comparison
    {"2 <= x ? 1 : 0", 1, 0},
    {"2 <= x ? 1 : 0", 2, 1},
    {"x <= 2 ? 1 : 0", 3, 0},  // and on the right
    {"2 < x ? 1 : 0", 2, 0},
    {"2 > x ? 1 : 0", 1, 1},
    {"2 >= x ? 1 : 0", 2, 1},
    {"2 == x ? 1 : 0", 2, 1},
    {"2 != x ? 1 : 0", 2, 0},
    {"x + 1 > 2 * x ? 1 : 0", 0.5, 1},       // a comparison of sums
    {"x < 0 ? -1 : x < 1 ? 0 : 1", 0.5, 0},  // right-associative selects
    {"x < 0 ? -1 : x < 1 ? 0 : 1", 2, 1},
    {"x < 1 ? x < 0 ? -1 : 0 : 1", -3, -1},
    {"(x < 1) ? 10 : 20", 0, 10},
    {"-x < -1 ? 1 : 0", 2, 1},
    {"min(x, 1) - max(x, 1)", 3, -2},
    {"min(2 - x, x - 2)", 5, -3},
    {"t = x * 2; u = t - 1; u * u - t", 2, 5},
    {"t = -x; t * t + t", 3, 6},
    {"T(2) * x - x / T(4)", 4, 7},
    {"sqrt(x * x + 16)", 3, 5},
    {"exp(x - x) + sin(0) - cos(0)", 1, 0},
};

TEST(Language, HandWorkedValuesAreWhatTheOracleAndTheSuiteCompute) {
  for (const known& c : cases) {
    const std::string what = std::string(c.text) + " at x = " + std::to_string(c.x);
    EXPECT_DOUBLE_EQ(oracle::at(c.text, c.x).v, c.value) << what << " (the tests' evaluator)";
    const expr::program p = expr::parse(c.text);
    EXPECT_DOUBLE_EQ(expr::evaluate(p, c.x), c.value) << what << " (common/expression.cpp)";
    const bytecode::program b = bytecode::encode(p);
    EXPECT_NEAR(bytecode::run(b, c.x), c.value, 1e-12 * (1 + std::fabs(c.value))) << what << " (bytecode)";
  }
}

// Random programs of the language: the suite's float64 interpreter against the tests' evaluator, at
// points where no comparison is too near its edge to tell.
TEST(Language, RandomProgramsMeanWhatTheOracleReads) {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  int compared = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::string text =
        "t = " + test::random_value(state, 3, false) + "; " + test::random_value(state, 1 + round % 6);
    const expr::program p = expr::parse(text);
    for (const double x : {-1.75, -0.3, 0.4, 1.3, 2.9}) {
      const oracle::value want = oracle::at(text, x, oracle::double_edge);
      if (want.fragile) continue;
      ++compared;
      EXPECT_TRUE(oracle::agrees(expr::evaluate(p, x), want, 0x1p-52)) << text << " at x = " << x;
    }
  }
  EXPECT_GT(compared, 12000);  // most points are not at an edge
}

// The oracle's judgement of a float result past float's largest: the value itself beyond it must be
// an infinity of its sign; where only a part is (its magnitude), no value is judged; in double the
// same values are ordinary.
TEST(Language, TheOracleJudgesAFloatPastItsLargestAsAnInfinity) {
  const oracle::value big{1e100, 1e100, false}, cancelled{0.5, 1e100, false};
  EXPECT_TRUE(oracle::agrees(INFINITY, big, 0x1p-23));
  EXPECT_FALSE(oracle::agrees(-INFINITY, big, 0x1p-23));
  EXPECT_FALSE(oracle::agrees(3e38, big, 0x1p-23));
  EXPECT_TRUE(oracle::agrees(NAN, cancelled, 0x1p-23));
  EXPECT_FALSE(oracle::agrees(INFINITY, big, 0x1p-52));
  EXPECT_TRUE(oracle::agrees(1e100, big, 0x1p-52));
  EXPECT_FALSE(oracle::agrees(NAN, cancelled, 0x1p-52));
}

// A number float cannot hold is named (a float32 op would compute with an infinity or a zero in its
// place); one it holds, however small or large, is not.
TEST(Language, ANumberFloatCannotHoldIsNamed) {
  EXPECT_EQ(expr::number_float_cannot_hold(expr::parse("x * 3.4e38 + 1e-45")), "");
  EXPECT_NE(expr::number_float_cannot_hold(expr::parse("x * 1e39")).find("1e+39: past float's largest"),
            std::string::npos);
  EXPECT_NE(expr::number_float_cannot_hold(expr::parse("x + 1e-50")).find("1e-50: below float's least"),
            std::string::npos);
  EXPECT_EQ(expr::number_float_cannot_hold(expr::parse("x + 0")), "");
}

}  // namespace
}  // namespace cdl
