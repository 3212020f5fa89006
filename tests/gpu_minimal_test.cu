// The smallest complete form of each strategy's mechanism (strategies/minimal.hpp, at the top of
// each strategy's file), validated like the strategies themselves: the map workload's quadratic
// op, float, k = 1, against its float64 reference, at sizes that end a block early and late.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "gpu_test.hpp"
#include "strategies/minimal.hpp"

#include <string>
#include <utility>

namespace cdl {
namespace {

using minimal_fn = void (*)(const float*, float*, std::size_t, cudaStream_t);

class MinimalForm : public gpu_param_test<std::pair<const char*, minimal_fn>> {};

TEST_P(MinimalForm, MatchesTheReference) {
  const minimal_fn run = GetParam().second;
  for (std::size_t n : {std::size_t(1), std::size_t(255), std::size_t(257), std::size_t(1000003)}) {
    const map_fixture fixture({map_op::quadratic, dtype::f32, n, 1}, default_seed);
    const validation_result r = fixture.run_and_validate(
        [run](const map_launch& a) {
          run(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.n, a.stream);
        },
        map_form::scalar);
    EXPECT_TRUE(r.passed) << GetParam().first << " n = " << n << ": " << r.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, MinimalForm,
                         ::testing::Values(std::pair{"00_inline", &minimal::inline_op},
                                           std::pair{"01_template_functor", &minimal::functor},
                                           std::pair{"02_device_lambda", &minimal::device_lambda},
                                           std::pair{"03_switch", &minimal::switch_on_id},
                                           std::pair{"04_function_pointer", &minimal::function_pointer},
                                           std::pair{"05_virtual", &minimal::virtual_call}),
                         [](const auto& info) { return std::string(info.param.first); });

}  // namespace
}  // namespace cdl
