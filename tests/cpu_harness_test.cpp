// Inputs, validation and timing statistics: the harness's host-side pieces.
#include "common/inputs.hpp"
#include "common/map_workload.hpp"
#include "common/reference_cache.hpp"
#include "common/skeletons/elementwise.cuh"
#include "common/timing.hpp"
#include "common/validation.hpp"
#include "common/warm_threads.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <filesystem>
#include <latch>
#include <limits>
#include <thread>
#include <vector>

namespace cdl {
namespace {

TEST(Inputs, AreSeededInRangeAndNonZero) {
  const auto a = uniform_inputs<float>(100000, 7), b = uniform_inputs<float>(100000, 7);
  const auto c = uniform_inputs<float>(100000, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) {
    ASSERT_GE(v, float(input_lo));
    ASSERT_LT(v, float(input_hi));
  }
}

TEST(Inputs, DoNotDependOnTheThreadCount) {
  // Element i is a function of (seed, i): a small and a large request agree on their prefix.
  const auto small = uniform_inputs<double>(10, 3), large = uniform_inputs<double>(1 << 20, 3);
  for (std::size_t i = 0; i < small.size(); ++i) EXPECT_EQ(small[i], large[i]);
}

std::vector<reference_value> reference_of(const std::vector<double>& values) {
  std::vector<reference_value> r;
  for (double v : values) r.push_back({v, std::fabs(v)});
  return r;
}

TEST(Validation, PassesAnExactResult) {
  const std::vector<float> got = {1, 2, 3};
  const auto r = validate<float>(got, reference_of({1, 2, 3}), 1e-6);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.checked, 3u);
  EXPECT_EQ(r.first_bad, -1);
}

TEST(Validation, CatchesAWrongValueAndNamesTheFirstBadIndex) {
  std::vector<float> got(100, 1.0f);
  got[7] = 1.001f;
  got[42] = -1.0f;
  const auto r = validate<float>(got, reference_of(std::vector<double>(100, 1.0)), 1e-6);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failures, 2u);
  EXPECT_EQ(r.first_bad, 7);
  EXPECT_FLOAT_EQ(float(r.first_bad_got), 1.001f);
  EXPECT_NEAR(r.max_rel_error, 2.0, 1e-12);
  EXPECT_NE(r.summary().find("WRONG RESULT"), std::string::npos);
}

TEST(Validation, CatchesAnUnwrittenElement) {
  // Outputs are poisoned before every run; an element the kernel skipped keeps the poison.
  std::vector<float> got(1000, 2.0f);
  got[999] = poison_value<float>();
  const auto r = validate<float>(got, reference_of(std::vector<double>(1000, 2.0)), 1e-3);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.first_bad, 999);
  EXPECT_EQ(r.unwritten, 1u);
  EXPECT_TRUE(std::isinf(r.max_rel_error));
  EXPECT_NE(r.summary().find("never written"), std::string::npos);
}

TEST(Validation, ANaNTheOpComputesPassesWhereTheReferenceIsNaNAndThePoisonNever) {
  const std::vector<reference_value> nan_ref(2, {std::nan(""), std::nan("")});
  // The NaNs arithmetic makes: the GPU's (0x7fffffff), negated, and x86's (0xffc00000).
  for (const std::uint32_t bits : {0x7fffffffu, 0xffffffffu, 0xffc00000u}) {
    const float computed = std::bit_cast<float>(bits);
    EXPECT_TRUE(validate<float>(std::vector<float>{computed, computed}, nan_ref, 1e-6).passed) << bits;
  }
  EXPECT_TRUE(validate<double>(std::vector<double>(2, std::nan("")), nan_ref, 1e-6).passed);
  // The poison is never a computed NaN, in either type, where the reference is NaN too.
  const auto f = validate<float>(std::vector<float>{std::nanf(""), poison_value<float>()}, nan_ref, 1e-6);
  EXPECT_FALSE(f.passed);
  EXPECT_EQ(f.first_bad, 1);
  EXPECT_EQ(f.unwritten, 1u);
  const auto d = validate<double>(std::vector<double>{poison_value<double>(), 0.0}, nan_ref, 1e-6);
  EXPECT_FALSE(d.passed);
  EXPECT_EQ(d.failures, 2u);  // the poison, and a number where the reference is NaN
  EXPECT_EQ(d.unwritten, 1u);
  EXPECT_TRUE(std::isnan(poison_value<float>()) && std::isnan(poison_value<double>()));
}

TEST(Validation, ToleranceIsRelativeToTheScale) {
  // A sum with cancellation: value 1e-3, but terms of magnitude 2; the bound follows the terms.
  const std::vector<reference_value> ref = {{1e-3, 2.0}};
  EXPECT_TRUE(validate<double>(std::vector<double>{1e-3 + 1.9e-6}, ref, 1e-6).passed);
  EXPECT_FALSE(validate<double>(std::vector<double>{1e-3 + 2.1e-6}, ref, 1e-6).passed);
}

TEST(Validation, TheSameInfinityAgreesAndANaNOnOneSideNever) {
  const double inf = INFINITY;
  const std::vector<reference_value> ref{{inf, inf}, {-inf, inf}, {1.0, 1.0}};
  EXPECT_TRUE(validate<float>(std::vector<float>{INFINITY, -INFINITY, 1.0f}, ref, 1e-6).passed);
  const auto swapped = validate<float>(std::vector<float>{-INFINITY, INFINITY, 1.0f}, ref, 1e-6);
  EXPECT_FALSE(swapped.passed);
  EXPECT_EQ(swapped.failures, 2u);
  const auto finite = validate<float>(std::vector<float>{3.4e38f, -INFINITY, 1.0f}, ref, 1e-6);
  EXPECT_FALSE(finite.passed);
  EXPECT_EQ(finite.first_bad, 0);
  // A NaN where the reference is a number fails, and a number where the reference is NaN.
  EXPECT_FALSE(validate<float>(std::vector<float>{std::nanf(""), -INFINITY, 1.0f}, ref, 1e-6).passed);
  const std::vector<reference_value> nan_ref{{std::nan(""), 0.0}};
  EXPECT_FALSE(validate<float>(std::vector<float>{1.0f}, nan_ref, 1e-6).passed);
}

TEST(Validation, SizeMismatchFails) {
  const std::vector<float> got = {1, 2};
  EXPECT_FALSE(validate<float>(got, reference_of({1, 2, 3}), 1).passed);
}

TEST(Validation, ToleranceGrowsWithTermsAndOpError) {
  const double eps = epsilon_of<float>();
  EXPECT_LT(tolerance_for(eps, 1, 1), tolerance_for(eps, 8, 1));
  EXPECT_LT(tolerance_for(eps, 1, 1), tolerance_for(eps, 1, 256));
  EXPECT_LT(map_tolerance({map_op::exp_sin_cos, dtype::f32, 1, 256}), 2e-4);  // still catches 0.1% errors
}

TEST(TimingStats, MedianAndQuantiles) {
  const timing_stats t = timing_stats::of({5, 1, 4, 2, 3});
  EXPECT_EQ(t.repetitions, 5);
  EXPECT_DOUBLE_EQ(t.median_ms, 3);
  EXPECT_DOUBLE_EQ(t.min_ms, 1);
  EXPECT_DOUBLE_EQ(t.max_ms, 5);
  EXPECT_DOUBLE_EQ(t.p10_ms, 1.4);
  EXPECT_DOUBLE_EQ(t.p90_ms, 4.6);
  EXPECT_NEAR(t.relative_spread(), 3.2 / 3, 1e-12);
}

// The references the GPU test processes share: computed once, read back whole, recomputed when an
// entry is damaged, never confused between problems, and not used for small work or when unset.
TEST(ReferenceCache, ComputesOnceAndRecoversFromADamagedEntry) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "cdl_reference_cache_test";
  fs::remove_all(dir);
  ASSERT_EQ(::setenv("CDL_REFERENCE_CACHE", dir.c_str(), 1), 0);
  int computed = 0;
  const auto compute = [&](double v) {
    return [&computed, v] {
      ++computed;
      return std::vector<reference_value>{{v, 1}, {2 * v, 2}};
    };
  };
  const double big = reference_cache_min_work;
  const auto first = shared_reference("map op=sine n=2", 1, big, compute(3));
  const auto again = shared_reference("map op=sine n=2", 1, big, compute(99));
  EXPECT_EQ(computed, 1);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].value, 6);
  EXPECT_EQ(again[1].scale, 2);
  EXPECT_EQ(shared_reference("map op=sine n=2", 2, big, compute(5))[0].value, 5) << "another seed";
  EXPECT_EQ(shared_reference("map op=square n=2", 1, big, compute(7))[0].value, 7) << "another problem";
  EXPECT_EQ(computed, 3);
  // Every entry cut short: each is computed again, and the rewritten entry then serves.
  std::size_t damaged = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".ref") {
      fs::resize_file(e.path(), fs::file_size(e.path()) - 8);
      ++damaged;
    }
  EXPECT_EQ(damaged, 3u);
  EXPECT_EQ(shared_reference("map op=sine n=2", 1, big, compute(4))[0].value, 4);
  EXPECT_EQ(shared_reference("map op=sine n=2", 1, big, compute(8))[0].value, 4);
  EXPECT_EQ(computed, 4);
  // Small work is computed every time; so is everything with the variable unset.
  shared_reference("map op=sine n=2", 1, big / 2, compute(1));
  ASSERT_EQ(::unsetenv("CDL_REFERENCE_CACHE"), 0);
  shared_reference("map op=sine n=2", 1, big, compute(1));
  EXPECT_EQ(computed, 6);
  fs::remove_all(dir);
}

// The vec form runs whole 16-byte vectors from aligned pointers, or nothing: any other request
// falls back to scalar, with the grid of the form that runs.
// Strategy 10's compile threads: a thread is made only when none is idle, so a job never waits for
// another, and one that has finished serves the next.
TEST(WarmThreads, ReuseAnIdleThreadAndNeverQueueAJobBehindAnother) {
  warm_threads threads;
  const auto wait_until_idle = [&] {
    while (threads.idle() == 0) std::this_thread::yield();
  };
  for (int job = 0; job < 100; ++job) {
    std::promise<void> done;
    threads.run([&] { done.set_value(); });
    done.get_future().wait();
    wait_until_idle();  // the thread has finished the job and waits for the next
  }
  EXPECT_EQ(threads.started(), 1u);
  // Two jobs that each wait for the other finish only if each has a thread of its own.
  std::latch both(2);
  std::promise<void> a, b;
  threads.run([&] {
    both.arrive_and_wait();
    a.set_value();
  });
  threads.run([&] {
    both.arrive_and_wait();
    b.set_value();
  });
  EXPECT_EQ(a.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(b.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_LE(threads.started(), 2u);
}

TEST(LaunchGeometry, VecOnlyForWholeVectorsFromAlignedPointers) {
  using skeleton::elementwise_launch_geometry;
  alignas(16) static double storage[4];
  const void* aligned = storage;
  const void* off = reinterpret_cast<const char*>(storage) + sizeof(float);
  const std::size_t per_vec_block = std::size_t(skeleton::elementwise_block) * skeleton::vecs_per_thread * 4;
  auto g = elementwise_launch_geometry(map_form::vec, 1000004, sizeof(float), {aligned, aligned});
  EXPECT_EQ(g.form, map_form::vec);
  EXPECT_EQ(g.grid, (1000004 + per_vec_block - 1) / per_vec_block);
  g = elementwise_launch_geometry(map_form::vec, 1000003, sizeof(float), {aligned, aligned});
  EXPECT_EQ(g.form, map_form::scalar) << "a partial vector";
  EXPECT_EQ(g.grid, (1000003 + skeleton::elementwise_block - 1) / skeleton::elementwise_block);
  EXPECT_EQ(elementwise_launch_geometry(map_form::vec, 1000004, sizeof(float), {aligned, off}).form,
            map_form::scalar)
      << "a pointer off 16 bytes";
  EXPECT_EQ(elementwise_launch_geometry(map_form::vec, 6, sizeof(double), {aligned}).form, map_form::vec);
  EXPECT_EQ(elementwise_launch_geometry(map_form::vec, 7, sizeof(double), {aligned}).form, map_form::scalar);
  EXPECT_EQ(elementwise_launch_geometry(map_form::staged, 7, sizeof(double), {aligned}).form,
            map_form::staged);
}

}  // namespace
}  // namespace cdl
