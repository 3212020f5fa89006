// The smallest complete form of each strategy's mechanism (strategies/minimal.hpp, at the top of
// each strategy's file), validated like the strategies themselves: the map workload's quadratic
// op, float, k = 1, against its float64 reference, at sizes that end a block early and late; 09's
// tiled blur against the image workload's box blur of radius 1, at sizes that end a tile early.
// The JIT strategies (06, 07, 08, 10) have their lessons instead (tests/docs/test_run_lines.py).
#include "gpu_test.hpp"
#include "strategies/minimal.hpp"

#include <string>
#include <utility>

namespace cdl {
namespace {

class MinimalForm : public gpu_param_test<const minimal::form*> {};

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
  ASSERT_TRUE(f.run) << f.strategy << " has a form with nothing to run it";
  for (std::size_t n : {std::size_t(1), std::size_t(255), std::size_t(257), std::size_t(1000003)}) {
    const map_fixture fixture({map_op::quadratic, dtype::f32, n, 1}, default_seed);
    const validation_result r = fixture.run_and_validate(
        [&f](const map_launch& a) {
          f.run(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.n, a.stream);
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
