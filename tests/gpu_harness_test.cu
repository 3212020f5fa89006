// The harness on a real GPU: the validator must fail kernels that are wrong, and the device
// queries and floors must be sane. A validator that passes everything would make every other
// GPU test vacuous, so this is the test that gives them meaning.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "common/timing.hpp"
#include "gpu_test.hpp"
#include "strategies/suite/expression_jit.hpp"
#include "strategies/suite/interpreter.hpp"

namespace cdl {
namespace {

const map_launch_fn correct = [] { return find_map_entry("01_template_functor/scalar").launch; }();

// Broken on purpose: computes every element but the last, which stays poisoned.
void skips_last_element(const map_launch& a) {
  map_launch shorter = a;
  shorter.n = a.n - 1;
  correct(shorter);
}

__global__ void scale_one_element(float* y, std::size_t i, float factor) { y[i] *= factor; }

// Broken on purpose: right everywhere except one element that is 0.1% off.
void writes_one_wrong_value(const map_launch& a) {
  correct(a);
  scale_one_element<<<1, 1, 0, a.stream>>>(static_cast<float*>(a.y), a.n / 2, 1.001f);
  CDL_CHECK_LAUNCH();
}

class Validator : public gpu_test {};

// What the validator says of a launch that left the last of 100003 elements unwritten.
void expect_last_unwritten(const validation_result& r) {
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(r.unwritten, 1u);
  EXPECT_EQ(r.first_bad, 100002);
}

TEST_F(Validator, FailsAKernelThatSkipsAnElement) {
  const map_fixture fixture({map_op::sine, dtype::f32, 100003, 1}, default_seed);
  expect_last_unwritten(fixture.run_and_validate(skips_last_element, map_form::scalar));
}

TEST_F(Validator, FailsAKernelThatWritesAWrongValue) {
  const map_fixture fixture({map_op::quadratic, dtype::f32, 100003, 16}, default_seed);
  const validation_result r = fixture.run_and_validate(writes_one_wrong_value, map_form::scalar);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(r.first_bad, 100003 / 2);
}

// An op whose float64 reference is NaN everywhere (the inputs are below 100): the NaN the kernel
// computes is a result, and passes, where an element left unwritten still fails; compiled (08) and
// interpreted (16), float32 and float64, each form.
TEST_F(Validator, PassesANaNTheOpComputesAndFailsAnUnwrittenElementBesideIt) {
  const jit::op_text op{"nan", "sqrt(x - 100)"};
  const expr::program program = expr::parse(op.source);
  const map_launcher compiled = [&](const map_launch& a) { expression_jit::launch_map(a, op); };
  const map_launcher interpreted = [&](const map_launch& a) { interpreter::launch_map(a, op); };
  for (dtype t : {dtype::f32, dtype::f64}) {
    const map_fixture f({map_op::quadratic, t, 100003, 3}, default_seed, language_op(program));
    for (const map_launcher* launch : {&compiled, &interpreted}) {
      for (map_form form : {map_form::scalar, map_form::vec}) {
        const validation_result r = f.run_and_validate(*launch, form);
        EXPECT_TRUE(r.passed) << to_string(t) << " " << to_string(form) << ": " << r.summary();
      }
      expect_last_unwritten(f.run_and_validate(
          [&](const map_launch& a) {
            map_launch shorter = a;
            shorter.n = a.n - 1;
            (*launch)(shorter);
          },
          map_form::scalar));
    }
  }
}

TEST_F(Validator, PassesTheCorrectKernelOnTheSameFixture) {
  const map_fixture fixture({map_op::quadratic, dtype::f32, 100003, 16}, default_seed);
  EXPECT_TRUE(fixture.run_and_validate(correct, map_form::scalar).passed);
}

class Harness : public gpu_test {};

TEST_F(Harness, DeviceInfoIsSane) {
  const device_info& d = query_device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GT(d.peak_bandwidth_gbs, 0);
  EXPECT_GT(d.driver_version, 0);
}

TEST_F(Harness, CopyBandwidthIsBelowThePeak) {
  const double copy = measure_copy_bandwidth_gbs(std::size_t(256) << 20, 5);
  EXPECT_GT(copy, 0);
  EXPECT_LT(copy, 1.05 * query_device().peak_bandwidth_gbs);
}

TEST_F(Harness, EventTimingMeasuresGpuWork) {
  const map_fixture small({map_op::exp_sin_cos, dtype::f32, 1 << 20, 1}, default_seed);
  const map_fixture large({map_op::exp_sin_cos, dtype::f32, 1 << 20, 64}, default_seed);
  const auto time = [&](const map_fixture& f) {
    return time_launches([&](cudaStream_t s) { f.launch(correct, map_form::scalar, s); }, {1, 5, true})
        .median_ms;
  };
  EXPECT_GT(time(large), 4 * time(small)) << "64x the work should take clearly longer";
}

TEST_F(Harness, OversizedAllocationSaysHowMuchIsFree) {
  try {
    device_buffer<std::byte> huge(std::size_t(1) << 50);
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("free of"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cdl
