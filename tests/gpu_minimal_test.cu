// The smallest complete form of each strategy's mechanism (strategies/minimal.hpp, at the top of
// each strategy's file), validated like the strategies themselves: the map workload's quadratic
// op, float, k = 1, against its float64 reference, at sizes that end a block early and late; 09's
// tiled blur against the image workload's box blur of radius 1, at sizes that end a tile early.
// The JIT forms (06, 07, 08, 10) are compiled into this test only (CDL_MINIMAL_JIT: see
// strategies/minimal.hpp); 10's must have run launches on the switch before its own kernel.
#include "gpu_test.hpp"
#include "strategies/minimal.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace cdl {
namespace {

class MinimalForm : public gpu_param_test<const minimal::form*> {};

using map_run = std::function<void(const float* x, float* y, std::size_t n, cudaStream_t stream)>;

// The function a form runs on the map: its own, or, for a JIT form, the one built into this test.
map_run map_run_of(const minimal::form& f) {
  if (f.run) return f.run;
  const std::string_view s = f.strategy;
  if (s == "06_nvrtc_jit") return minimal::nvrtc_jit;
  if (s == "07_jit_lto") return minimal::jit_lto;
  if (s == "08_expression_jit") return minimal::nvvm_jit;
  if (s == "10_tiered_dispatch")
    return [](const float* x, float* y, std::size_t n, cudaStream_t stream) {
      EXPECT_GE(minimal::tiered(x, y, n, stream), 1) << "the first launch waited for the compile";
    };
  return nullptr;
}

TEST_P(MinimalForm, MatchesTheReference) {
  const minimal::form& f = *GetParam();
  if (f.run_image) {  // 09's blur against the image workload's box blur of radius 1
    const std::pair<int, int> sizes[] = {{1, 1}, {17, 3}, {40, 1}, {100, 70}, {1920, 1080}};
    for (const auto& [w, h] : sizes) {
      const image_fixture fixture({image_op::box_blur, w, h, 1}, default_seed);
      static const minimal::form* current = nullptr;  // an image launch is a plain function pointer
      current = &f;
      const validation_result r = fixture.run_and_validate(
          [](const image_launch& a) { current->run_image(a.in, a.out, a.width, a.height, a.stream); },
          image_form::tiled);
      EXPECT_TRUE(r.passed) << f.strategy << " (" << f.file << ":" << f.line << ") " << w << "x" << h << ": "
                            << r.summary();
    }
    return;
  }
  const map_run run = map_run_of(f);
  ASSERT_TRUE(run) << f.strategy << " has a form with nothing to run it";
  for (std::size_t n : {std::size_t(1), std::size_t(255), std::size_t(257), std::size_t(1000003)}) {
    const map_fixture fixture({map_op::quadratic, dtype::f32, n, 1}, default_seed);
    const validation_result r = fixture.run_and_validate(
        [&run](const map_launch& a) {
          run(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.n, a.stream);
        },
        map_form::scalar);
    EXPECT_TRUE(r.passed) << f.strategy << " (" << f.file << ":" << f.line << ") n = " << n << ": "
                          << r.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, MinimalForm, ::testing::ValuesIn(minimal::all),
                         [](const auto& info) { return std::string(info.param->strategy); });

}  // namespace
}  // namespace cdl
