// Base fixture for tests that need a GPU: without one they are skipped, with the reason, so
// a CPU-only machine reports them as skipped rather than passed.
#pragma once

#include "common/device_info.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cdl {

class gpu_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu_available(&why)) GTEST_SKIP() << why;
  }
};

template <class Param>
class gpu_param_test : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu_available(&why)) GTEST_SKIP() << why;
  }
};

}  // namespace cdl
