// Strategy 10's cost model for a user's op (tiered_total_ms, strategies/suite/tiered_dispatch.hpp),
// which cdl_run --launches prints beside the routes it times: which tier serves each launch.
#include "strategies/suite/tiered_dispatch.hpp"

#include <gtest/gtest.h>

using namespace cdl;

namespace {
// The interpreter's first launch 0.1 ms, then 0.05 each; 17 ready after 0.5 ms of making, then 0.04
// each; 08 ready 25 ms after that, then 0.03 each.
const tier_figures interpreter{0.1, 0.05}, patched{0.54, 0.04}, optimised{25.03, 0.03};
}  // namespace

TEST(TieredModel, EachLaunchTakesTheTierServingWhenItStarts) {
  EXPECT_DOUBLE_EQ(tiered_total_ms(interpreter, patched, optimised, 0), 0);
  EXPECT_DOUBLE_EQ(tiered_total_ms(interpreter, patched, optimised, 1), 0.1);
  // Launches 2-9 start before 0.5 ms (at 0.1, 0.15, ... 0.45): the interpreter's; the 10th starts at
  // 0.5, on 17.
  EXPECT_NEAR(tiered_total_ms(interpreter, patched, optimised, 9), 0.1 + 8 * 0.05, 1e-12);
  EXPECT_NEAR(tiered_total_ms(interpreter, patched, optimised, 10), 0.5 + 0.04, 1e-12);
  // 17 serves until 25.5 ms: 625 launches from 0.5 ms; every one after is 08's.
  EXPECT_NEAR(tiered_total_ms(interpreter, patched, optimised, 9 + 625), 25.5, 1e-9);
  EXPECT_NEAR(tiered_total_ms(interpreter, patched, optimised, 9 + 625 + 100), 25.5 + 100 * 0.03, 1e-9);
}

TEST(TieredModel, ATierReadyBeforeTheFirstLaunchEndsServesTheSecond) {
  const tier_figures instant{0.04, 0.04};  // made in no time
  EXPECT_NEAR(tiered_total_ms(interpreter, instant, instant, 3), 0.1 + 2 * 0.04, 1e-12);
  // A stream shorter than the interpreter's time to the next tier never leaves it.
  EXPECT_NEAR(tiered_total_ms(interpreter, patched, optimised, 5), 0.1 + 4 * 0.05, 1e-12);
}
