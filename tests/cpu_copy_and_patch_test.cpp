// Strategy 17 with no GPU: the ops its suite form patches (every op-length polynomial, a new op's
// text as the JIT stages make it, the catalogue's ops it has stencils for, conditions) are written
// into the build's images, scalar and vec both, and their machine code, decoded on the host,
// computes their steps; an op or a type it cannot run is refused with the reason and the routes to
// use.
#include "common/polynomial.hpp"
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"
#include "expression_oracle.hpp"
#include "random_programs.hpp"
#include "strategies/suite/copy_and_patch.hpp"
#include "strategies/suite/copy_and_patch/stencils.hpp"
#include "strategies/suite/jit_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace cdl {
namespace {

TEST(CopyAndPatch, EveryOpLengthPolynomialIsPatchedIntoMachineCodeThatComputesIt) {
  for (int steps : op_lengths) {
    EXPECT_EQ(copy_and_patch::check_on_host(polynomial_text(steps)), "") << steps;
    EXPECT_EQ(copy_and_patch::scalar_only(polynomial_text(steps)), "") << steps << " steps: no vec image";
  }
}

TEST(CopyAndPatch, ANewOpAndTheCatalogueOpsItHasStencilsForArePatched) {
  for (const std::string& text :
       {jit::never_seen_op().source, jit::builtin_op(map_op::quadratic).source,
        jit::builtin_op(map_op::square).source, jit::builtin_op(map_op::threshold).source,
        std::string("min(max(x, -1), 1) / 4 - x * x")}) {
    EXPECT_EQ(copy_and_patch::check_on_host(text), "") << text;
    EXPECT_EQ(copy_and_patch::scalar_only(text), "") << text << ": no vec image";
  }
}

// Every comparison, with a constant on either side or two registers, NaN's among the values
// (x != x), nested selects and constant arms: each a compare, a mask and a select, or the compare
// scaled (the next test).
TEST(CopyAndPatch, ConditionsAreACompareAMaskAndASelect) {
  for (const char* text :
       {"x != x ? 1 : (x < -x ? x : 2 <= x ? -3 : x)", "x >= 1 ? (x == 2 ? 0 : x * x) : 0.5 > x ? x : x + 1",
        "(x - 1) * (x + 1) > x ? x : -x", "3 >= 2 ? x : 0", "x == x * 1 ? x : 7"})
    EXPECT_EQ(copy_and_patch::check_on_host(text), "") << text;
}

// A select of two constants, or of one value times two constants, is the compare's 1.0 or 0.0
// scaled (m * (k1 - k2) + k2, times the value), with no mask, where that is exact to the bit: it
// computes what the select does for every x, NaN, the infinities and -0 among them. Where it would
// not be exact (k2 = -0: 0 + -0 is +0), the mask and the select remain.
TEST(CopyAndPatch, ASelectOfConstantsIsTheCompareScaledWhereThatIsExact) {
  using names = std::vector<std::string>;
  EXPECT_EQ(copy_and_patch::steps_on_host("x > 0.5 ? 2 * x : x / 2"), (names{"gt", "mul", "add", "mulr"}));
  EXPECT_EQ(copy_and_patch::steps_on_host("x < 1 ? 3 : -2"), (names{"lt", "mul", "add"}));
  const names masked = copy_and_patch::steps_on_host("x < 1 ? 3 : -0.0");
  EXPECT_NE(std::find(masked.begin(), masked.end(), "sel"), masked.end());
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (float x : {-inf, -3.0f, -0.0f, 0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 7.0f, 1e30f, inf, nan}) {
    const auto same = [](float a, float b) {
      return a == b ? std::signbit(a) == std::signbit(b) : a != a && b != b;
    };
    // (each value plus the sum's 0.0, as the map adds it)
    EXPECT_TRUE(
        same(copy_and_patch::value_on_host("x > 0.5 ? 2 * x : x / 2", x), 0.0f + (x > 0.5f ? 2 * x : x / 2)))
        << x;
    EXPECT_TRUE(same(copy_and_patch::value_on_host("x < 1 ? 3 : -2", x), 0.0f + (x < 1 ? 3.0f : -2.0f))) << x;
    EXPECT_TRUE(same(copy_and_patch::value_on_host("x < 1 ? 3 : -0.0", x), 0.0f + (x < 1 ? 3.0f : -0.0f)))
        << x;
  }
}

TEST(CopyAndPatch, RefusesWhatItHasNoStencilForWithTheReasonAndTheRoutes) {
  // a division by a constant whose reciprocal overflows; more calls than the largest call image's slots
  std::string calls = "x";
  for (int n = 0; n <= copy_and_patch::stencil::max_calls; ++n)
    calls = (n % 2 ? "sin(" : "cos(") + calls + ")";
  for (const std::string& text : {std::string("x / 1e-39"), calls}) {
    const std::string why = copy_and_patch::check_on_host(text);
    EXPECT_NE(why.find("refused"), std::string::npos) << text << ": " << why;
  }
  const std::string why = copy_and_patch::refusal("x * x", dtype::f64);
  EXPECT_NE(why.find("float alone"), std::string::npos) << why;
  EXPECT_NE(why.find("16_interpreter"), std::string::npos) << why;
}

// An op that calls functions runs in a call image: its slots run nvcc's sinf, cosf, expf, sqrtf and
// division, the values it keeps across a call in the registers nvcc kept there; the vec form alone.
TEST(CopyAndPatch, CallsAFunctionFromASlotInTheVecFormAlone) {
  for (const char* text :
       {"sin(x)", "exp(sin(x) * cos(x))", "sqrt(x * x + 1)", "exp(exp(x))", "cos(x) + 2", "x * sin(x)",
        "cos(x) * cos(x) - sin(x) * sin(x)", "x * x + (x * 3 + sin(x))", "x / (x + 1)", "1 / x", "sin(x) / x",
        "(x * x - 1) / sqrt(x * x + 1)", "x / x",
        // selects around calls
        "x > 0.5 ? sqrt(x) : x * x", "x > 0 ? sin(x) : cos(x)", "sin(x) > 0.5 ? exp(x) : x / 3",
        // four calls; five and seven, in images of six and eight slots whose first pass
        "sin(cos(exp(sqrt(x))))", "sin(cos(exp(sqrt(sin(x)))))",
        "sin(x) + cos(x + 1) + exp(x + 2) + sqrt(x + 3) + sin(x + 4) + cos(x + 5) + exp(x * 6)"}) {
    EXPECT_EQ(copy_and_patch::check_on_host(text), "") << text;
    EXPECT_NE(copy_and_patch::vec_alone(text).find("vec form alone"), std::string::npos) << text;
  }
  EXPECT_EQ(copy_and_patch::vec_alone("x * x"), "");
  using names = std::vector<std::string>;
  EXPECT_EQ(copy_and_patch::steps_on_host("exp(sin(x) * cos(x))"), (names{"call", "call", "mulr", "call"}));
}

// In the dispatch sweep 17 runs the catalogue's ops its stencils hold, in float (those that call a
// function in the vec form alone), and refuses the rest at the registry's listing, with no GPU: the
// tests and the benchmarks leave those out.
TEST(CopyAndPatch, TheRegistryRefusesWhatTheStencilsDoNotHold) {
  for (const map_entry& e : get_registry().map) {
    if (e.strategy != "17_copy_and_patch") {
      EXPECT_EQ(e.refuses, nullptr) << e.name();
      continue;
    }
    for (std::size_t op = 0; op < map_op_catalogue.size(); ++op)
      for (dtype t : {dtype::f32, dtype::f64}) {
        const std::string why = e.refusal(unlaunched(map_op(op), t, e.form));
        const bool calls = map_op(op) == map_op::sine || map_op(op) == map_op::exp_sin_cos;
        const bool held = t == dtype::f32 && (!calls || e.form == map_form::vec);
        EXPECT_EQ(why.empty(), held) << e.name() << " " << info(map_op(op)).name << " " << to_string(t)
                                     << ": " << why;
      }
  }
}

// What 17's machine code computes, decoded and run on the host, against the tests' own evaluator of
// the language (not 17's steps): each element mapped over three steps of x, in the scalar image and
// the vec image's lanes, within float's rounding at the value's magnitude; points where a comparison
// is too near its edge for float and float64 to agree are left out. Returns how many were compared.
int expect_machine_means(const std::string& text) {
  std::vector<float> xs;
  for (int i = 0; i < 24; ++i) xs.push_back(-3.9f + 0.33f * float(i));
  int compared = 0;
  for (const bool vec : {false, true}) {
    const std::vector<float> got = copy_and_patch::machine_on_host(text, xs, 3, vec);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const oracle::value want = oracle::mapped(text, xs[i], 3, map_delta);
      if (want.fragile) continue;
      ++compared;
      EXPECT_TRUE(oracle::agrees(got[i], want, 0x1p-23))
          << text << (vec ? " (vec)" : " (scalar)") << " at x = " << xs[i] << ": " << got[i]
          << ", the oracle " << want.v;
    }
  }
  return compared;
}

TEST(CopyAndPatch, ItsMachineCodeComputesWhatTheLanguageMeans) {
  for (const char* text : {"-x + 1",
                           "-x * 3",
                           "2 - x - 4 * x",
                           "8 / 2 * x",
                           "x - 2 * x - 3",
                           "2 <= x ? 1 : 0",
                           "x <= 2 ? 1 : 0",
                           "2 > x ? x : -x",
                           "3 >= x ? 5 : 7",
                           "1 == x ? 2 : 3",
                           "-1 != x ? x : 0",
                           "x < 0 ? -1 : x < 1 ? 0 : 1",
                           "min(2 - x, x - 2)",
                           "max(x, -x) / 4",
                           "t = x * 2; u = t - 1; u * u - t",
                           "x * x + 2 * x + 1",
                           "x > 0.5 ? 2 * x : x / 2",
                           "sin(x)",
                           "exp(sin(x) * cos(x))",
                           "sqrt(x * x + 1)",
                           "-x * sin(x)",
                           "x > 0.5 ? sqrt(x) : x * x",
                           "sin(x) > 0.5 ? exp(x) : x / 3",
                           "x * x * x",
                           "(x + 1) * (x - 1)"})
    EXPECT_GT(expect_machine_means(text), 0) << text;
}

TEST(CopyAndPatch, RandomOpsItTakesComputeWhatTheLanguageMeans) {
  std::uint64_t state = 0x51ed270b27f4c6e3ull;
  int taken = 0, compared = 0;
  for (int round = 0; round < 400; ++round) {  // every other a program with temporaries
    const std::string text = round % 2 ? test::random_program(state, 1 + round % 4)
                                       : test::random_value(state, 1 + round % 5, false);
    if (!copy_and_patch::refusal_on_host(text, dtype::f32).empty()) continue;
    ++taken;
    compared += expect_machine_means(text);
  }
  EXPECT_GT(taken, 100);
  EXPECT_GT(compared, 5000);
}

// Each instruction the patch writes issues no sooner than what it reads is ready, by the latencies
// the stencils taught, read back from the image's own bytes; the check itself fails where the stalls
// are cut short.
TEST(CopyAndPatch, EveryDependentInstructionWaitsForWhatItReads) {
  std::vector<std::string> ops = {jit::never_seen_op().source, "x > 0.5 ? 2 * x : x / 2", "sin(x)",
                                  "exp(sin(x) * cos(x))", "x * sin(x) + cos(x) * 2"};
  for (int steps : op_lengths) ops.push_back(polynomial_text(steps));
  for (const std::string& text : ops) {
    EXPECT_EQ(copy_and_patch::schedule_on_host(text), "") << text;
    EXPECT_NE(copy_and_patch::schedule_on_host(text, 15), "") << text << ": no stall, and the check passed";
  }
}

}  // namespace
}  // namespace cdl
