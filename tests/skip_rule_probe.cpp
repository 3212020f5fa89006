// A test program for the GPU tests' exit-status rule (gpu_test_main.cpp), run by
// tests/skip_rule_test.py with a filter choosing which of its tests run: those that skip, those that
// fail, those that pass, or a mix.
#include <gtest/gtest.h>

TEST(Probe, Skips) { GTEST_SKIP() << "no GPU here (the probe's reason)"; }
TEST(Probe, SkipsToo) { GTEST_SKIP() << "no GPU here (the probe's reason)"; }
TEST(Probe, Fails) { FAIL() << "a failure the rule must not call a skip"; }
TEST(Probe, Passes) { SUCCEED(); }
