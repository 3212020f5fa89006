// Strategy 10's tiered dispatch (strategies/suite/10_tiered_dispatch.cu): every launch of a stream is
// validated against the float64 reference, before the move to the op's own kernel, at the launch
// that moves, and after it; the op's text is new to every cache, so the compile is a real one. And
// the tiers of a user's op (16, then 17's patched kernel, then 08's optimised tier), the same way.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "gpu_test.hpp"
#include "common/bytecode.hpp"
#include "strategies/suite/interpreter.hpp"
#include "strategies/suite/tiered_dispatch.hpp"

#include <array>
#include <chrono>

namespace cdl {
namespace {

class TieredDispatch : public gpu_test {};

TEST_F(TieredDispatch, EveryLaunchIsRightBeforeAtAndAfterTheMove) {
  for (map_form form : {map_form::vec, map_form::scalar}) {
    const map_fixture fixture({map_op::quadratic, dtype::f32, std::size_t(1) << 20, 256}, default_seed);
    const jit::op_text text = jit::fresh_text(jit::builtin_op(map_op::quadratic));
    std::unique_ptr<tiered_map> tier;
    int on_switch = 0, moved_at = -1, launches = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    // Until the move, and five launches past it; a compile that never ends fails the test.
    while ((moved_at < 0 || launches < moved_at + 5) && std::chrono::steady_clock::now() < deadline) {
      bool own = false;
      const validation_result r = fixture.run_and_validate(
          [&](const map_launch& a) {
            if (!tier) tier = std::make_unique<tiered_map>(text, nvrtc_jit_build);
            own = tier->launch(a);
          },
          form);
      ASSERT_TRUE(r.passed) << "launch " << launches << (own ? " (own kernel)" : " (switch)") << ": "
                            << r.summary();
      if (own && moved_at < 0) moved_at = launches;
      on_switch += own ? 0 : 1;
      ++launches;
    }
    EXPECT_GE(moved_at, 0) << "the compile did not finish within 60 s";
    EXPECT_EQ(on_switch, moved_at) << "a launch went back to the switch after the move";
    EXPECT_TRUE(tier && tier->specialised());
  }
}

TEST_F(TieredDispatch, AnOpThatDoesNotCompileFailsAtTheLaunchThatFindsIt) {
  const map_fixture fixture({map_op::quadratic, dtype::f32, 1000, 1}, default_seed);
  tiered_map* made = nullptr;
  std::unique_ptr<tiered_map> tier;
  const auto launch = [&](const map_launch& a) {
    if (!tier)
      made = (tier = std::make_unique<tiered_map>(jit::op_text{"broken", "x *"}, nvrtc_jit_build)).get();
    tier->launch(a);
  };
  bool thrown = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!thrown && std::chrono::steady_clock::now() < deadline) {
    try {
      fixture.launch(launch, map_form::vec, nullptr);
    } catch (const std::exception& e) {
      thrown = true;
      EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(thrown && made && !made->specialised());
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
}

// A user's op through tiered_expression: every launch validated against the language's float64
// interpreter, on the first tier (the interpreter, or 17's patched kernel where the interpreter's
// kernels are not loaded yet), at each move and after it, until the optimised tier has run five
// times; the tiers only move up, and 17's patched kernel (which runs this op) takes the baseline's
// place. The op's text is new to every cache (a new constant), so both of
// 08's compiles are real ones.
TEST_F(TieredDispatch, AUsersOpIsRightOnEveryTierAndMovesOnlyUp) {
  for (map_form form : {map_form::vec, map_form::scalar}) {
    const jit::op_text text = jit::never_seen_op();
    const expr::program program = expr::parse(text.source);
    const map_fixture fixture({map_op::quadratic, dtype::f32, std::size_t(1) << 20, 16}, default_seed,
                              language_op(program));
    std::unique_ptr<tiered_expression> tiers;
    std::array<int, 4> on{};  // launches on each tier
    constexpr std::size_t top = std::size_t(tiered_expression::tier::optimised);
    int launches = 0;
    auto last = tiered_expression::tier::interpreter;
    // The first launch runs at once, with no compiler: on the interpreter where its kernels are
    // loaded, else on 17's patched kernel (which the interpreter's first launch would outlast).
    const auto first = interpreter::kernels_loaded() ? tiered_expression::tier::interpreter
                                                     : tiered_expression::tier::patched;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (on[top] < 5 && std::chrono::steady_clock::now() < deadline) {
      tiered_expression::tier ran{};
      const validation_result r = fixture.run_and_validate(
          [&](const map_launch& a) {
            if (!tiers) tiers = std::make_unique<tiered_expression>(text);
            ran = tiers->launch(a);
          },
          form);
      ASSERT_TRUE(r.passed) << "launch " << launches << " on " << to_string(ran) << ": " << r.summary();
      if (launches == 0) {
        EXPECT_EQ(ran, first) << "the first launch ran on " << to_string(ran);
      }
      ASSERT_GE(int(ran), int(last)) << "launch " << launches << " went back to " << to_string(ran);
      last = ran;
      ++on[std::size_t(ran)];
      ++launches;
    }
    EXPECT_EQ(on[top], 5) << "08's optimised tier was not ready within 60 s";
    EXPECT_EQ(on[std::size_t(tiered_expression::tier::baseline)], 0)
        << "08's baseline ran where 17 runs the op";
  }
}

TEST_F(TieredDispatch, AUsersOpTheInterpreterCannotHoldIsRefusedWhenTheDispatcherIsMade) {
  const map_fixture fixture({map_op::quadratic, dtype::f32, 1000, 1}, default_seed);
  std::string text = "x";
  for (int i = 0; i <= bytecode::max_instructions; ++i) text = "sin(" + text + ")";
  EXPECT_THROW(fixture.launch(
                   [&](const map_launch&) {
                     tiered_expression({"long", text});
                   },
                   map_form::vec, nullptr),
               error);
}

}  // namespace
}  // namespace cdl
