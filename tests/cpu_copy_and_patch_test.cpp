// Strategy 17 with no GPU: the ops its suite form patches (every op-length polynomial, a new op's
// text as the JIT stages make it, the catalogue's ops it has stencils for) are written into the
// build's stencils, scalar and vec images both, and their machine code, decoded on the host,
// computes their steps; an op or a
// type it cannot run is refused with the reason and the routes to use.
#include "common/polynomial.hpp"
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
        jit::builtin_op(map_op::square).source, std::string("min(max(x, -1), 1) / 4 - x * x")}) {
    EXPECT_EQ(copy_and_patch::check_on_host(text), "") << text;
    EXPECT_EQ(copy_and_patch::scalar_only(text), "") << text << ": no vec image";
  }
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

}  // namespace
}  // namespace cdl
