// Strategies 06, 07 and 08 on the GPU beyond the registry's built-in ops (which every workload's
// registry test covers): a user's expression, validated against the host compiler's build of
// the same text or the expression language's interpreter, and evidence that 07's link inlined
// the op.
#include "common/inputs.hpp"
#include "common/jit_cache.hpp"
#include "gpu_test.hpp"
#include "strategies/suite/expression_jit.hpp"
#include "strategies/suite/jit_kernels.hpp"
#include "strategies/suite/user_op.hpp"

namespace cdl {
namespace {

class JitUserOp : public gpu_test {};

TEST_F(JitUserOp, ExpressionAndBodyMatchTheirHostBuildThrough06And07) {
  for (const jit::op_text& op :
       {jit::op_text{"user", "x * x + 2.0f * x + 1.0f"},
        jit::op_text{"user_body", "const T s = sin(x);\nreturn s * s + T(0.5) * x;"}}) {
    const host_op reference(op);
    for (dtype t : {dtype::f32, dtype::f64})
      for (int k : {1, 16}) {
        const map_problem p{map_op::quadratic, t, 1000004, k};  // whole vectors: vec runs vec
        const map_fixture fixture(p, default_seed, custom_map_op{reference.function(), 16});
        for (jit::build_fn build : {nvrtc_jit_build, jit_lto_build})
          for (map_form form : {map_form::scalar, map_form::vec}) {
            const validation_result r =
                fixture.run_and_validate([&](const map_launch& a) { jit::launch_map(build, a, op); }, form);
            EXPECT_TRUE(r.passed) << op.source << " " << p.describe() << ": " << r.summary();
          }
      }
  }
}

// One program of 08's language through all three run-time strategies (06 and 07 compile the C++
// it prints), against its float64 interpreter: every construct of the language, both types, edge
// sizes (1 and 5: no whole vectors, so vec falls back to scalar; 36: nine vectors, a part of a
// block), and k > 1.
TEST_F(JitUserOp, AProgramOfTheLanguageMatchesItsInterpreterThrough06_07And08) {
  // No sum of terms of opposite signs for the inputs (0.25 <= x < 1.75, inputs.hpp; cos is negative
  // past pi/2): like the catalogue's ops, no cancellation, so the tolerance (relative to the
  // terms' magnitude) holds for any correct kernel.
  const std::string text =
      "s = sin(x); c = cos(x); q = exp(-x) / 3;\n"
      "x > 0.5 ? min(s, c * c) * 3 + q : (x <= 0.25 ? max(s * c, 0.125) + sqrt(x) : -s * -c + q)";
  const expr::program program = expr::parse(text);
  const jit::op_text language{"language", text}, cpp{"language_cpp", expr::to_cpp(program)};
  for (dtype t : {dtype::f32, dtype::f64})
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(36), std::size_t(1000004)})
      for (int k : {1, 16}) {
        const map_problem p{map_op::quadratic, t, n, k};
        const map_fixture fixture(p, default_seed, language_op(program));
        const std::pair<const char*, map_launcher> strategies[] = {
            {"06", [&](const map_launch& a) { jit::launch_map(nvrtc_jit_build, a, cpp); }},
            {"07", [&](const map_launch& a) { jit::launch_map(jit_lto_build, a, cpp); }},
            {"08", [&](const map_launch& a) { expression_jit::launch_map(a, language); }}};
        for (const auto& [name, launch] : strategies)
          for (map_form form : {map_form::scalar, map_form::vec}) {
            const validation_result r = fixture.run_and_validate(launch, form);
            EXPECT_TRUE(r.passed) << name << " " << p.describe() << " " << to_string(form) << ": "
                                  << r.summary();
          }
      }
}

TEST_F(JitUserOp, AWrongResultOf08IsCaught) {
  const expr::program other = expr::parse("x * x + 1");  // the reference of another op
  const map_fixture fixture({map_op::quadratic, dtype::f32, 4096, 1}, default_seed, language_op(other));
  const validation_result r = fixture.run_and_validate(
      [](const map_launch& a) {
        expression_jit::launch_map(a, {"user", "x * x"});
      },
      map_form::vec);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failures, 4096u);
}

TEST_F(JitUserOp, AWrongResultIsCaught) {
  const host_op reference({"user", "x * x + T(1)"});  // the reference of another op
  const map_fixture fixture({map_op::quadratic, dtype::f32, 4096, 1}, default_seed,
                            custom_map_op{reference.function(), 16});
  const jit::op_text op{"user", "x * x"};
  const validation_result r = fixture.run_and_validate(
      [&](const map_launch& a) { jit::launch_map(nvrtc_jit_build, a, op); }, map_form::vec);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failures, 4096u);
}

// If nvJitLink had not inlined the op into the kernel, the call would need a stack frame and
// the argument registers of the calling convention, as strategy 04's kernels do.
TEST_F(JitUserOp, LtoLinkedKernelHasTheResourcesOfTheWholeProgram) {
  const int arch = jit::device_arch();
  for (std::size_t op = 0; op < map_op_catalogue.size(); ++op) {
    const jit::op_text text = jit::builtin_op(map_op(op));
    for (const map_form form : {map_form::scalar, map_form::vec, map_form::staged}) {
      const jit::loaded whole(nvrtc_jit_build(jit::workload::map, dtype::f32, text, arch, int(form)));
      const jit::loaded lto(jit_lto_build(jit::workload::map, dtype::f32, text, arch, int(form)));
      const std::string kernel =
          jit::whole_program(jit::workload::map, dtype::f32, text, int(form)).name_expressions.at(0);
      cudaFuncAttributes a{}, b{};
      CDL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(whole.kernel(kernel))));
      CDL_CUDA_CHECK(cudaFuncGetAttributes(&b, reinterpret_cast<const void*>(lto.kernel(kernel))));
      EXPECT_EQ(b.localSizeBytes, a.localSizeBytes) << text.name << " " << kernel;
      EXPECT_LE(b.numRegs, a.numRegs + 8) << text.name << " " << kernel;
    }
  }
}

}  // namespace
}  // namespace cdl
