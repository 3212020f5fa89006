// Strategy 17 with no GPU: the ops its suite form patches (every op-length polynomial, a new op's
// text as the JIT stages make it, the catalogue's ops it has stencils for, conditions) are written
// into the build's images, scalar and vec both, and their machine code, decoded on the host,
// computes their steps; an op or a type it cannot run is refused with the reason and the routes to
// use.
#include "common/polynomial.hpp"
#include "common/registry.hpp"
#include "strategies/suite/copy_and_patch.hpp"
#include "strategies/suite/jit_kernels.hpp"

#include <gtest/gtest.h>

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
// (x != x), nested selects and constant arms: each a compare, a mask and a select.
TEST(CopyAndPatch, ConditionsAreACompareAMaskAndASelect) {
  for (const char* text :
       {"x != x ? 1 : (x < -x ? x : 2 <= x ? -3 : x)", "x >= 1 ? (x == 2 ? 0 : x * x) : 0.5 > x ? x : x + 1",
        "(x - 1) * (x + 1) > x ? x : -x", "3 >= 2 ? x : 0", "x == x * 1 ? x : 7"})
    EXPECT_EQ(copy_and_patch::check_on_host(text), "") << text;
}

TEST(CopyAndPatch, RefusesWhatItHasNoStencilForWithTheReasonAndTheRoutes) {
  for (const char* text : {"sqrt(x)", "sin(x) + 1", "x / 3"}) {
    const std::string why = copy_and_patch::check_on_host(text);
    EXPECT_NE(why.find("refused"), std::string::npos) << text << ": " << why;
  }
  const std::string why = copy_and_patch::refusal("x * x", dtype::f64);
  EXPECT_NE(why.find("float alone"), std::string::npos) << why;
  EXPECT_NE(why.find("16_interpreter"), std::string::npos) << why;
}

// In the dispatch sweep 17 runs the catalogue's ops its stencils hold, in float, and refuses the
// rest at the registry's listing, with no GPU: the tests and the benchmarks leave those out.
TEST(CopyAndPatch, TheRegistryRefusesWhatTheStencilsDoNotHold) {
  for (const map_entry& e : get_registry().map) {
    if (e.strategy != "17_copy_and_patch") {
      EXPECT_EQ(e.refuses, nullptr) << e.name();
      continue;
    }
    for (std::size_t op = 0; op < map_op_catalogue.size(); ++op)
      for (dtype t : {dtype::f32, dtype::f64}) {
        const std::string why = e.refusal(unlaunched(map_op(op), t, e.form));
        const bool held =
            t == dtype::f32 && (map_op(op) == map_op::quadratic || map_op(op) == map_op::square ||
                                map_op(op) == map_op::threshold);
        EXPECT_EQ(why.empty(), held) << e.name() << " " << info(map_op(op)).name << " " << to_string(t)
                                     << ": " << why;
      }
  }
}

}  // namespace
}  // namespace cdl
