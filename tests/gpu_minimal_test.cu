// The smallest complete form of each strategy's mechanism (strategies/minimal.hpp, at the top of
// each strategy's file), validated like the strategies themselves: the map workload's quadratic
// op, float, k = 1, against its float64 reference, at sizes that end a block early and late.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "gpu_test.hpp"
#include "strategies/minimal.hpp"

#include <string>

namespace cdl {
namespace {

class MinimalForm : public gpu_param_test<const minimal::form*> {};

TEST_P(MinimalForm, MatchesTheReference) {
  const minimal::form& f = *GetParam();
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
