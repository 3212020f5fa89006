// Strategy 16's interpreter kernel beyond the registry's built-in ops (which the map's registry
// tests cover at their edge sizes): every construct of 08's language, a program of all of them at
// edge sizes and with k steps not a multiple of the lanes a pass, a fuzz run against the language's
// float64 interpreter, and random bytes, which the kernel must run without a fault whatever they say.
#include "common/bytecode.hpp"
#include "common/device_buffer.hpp"
#include "gpu_test.hpp"
#include "random_programs.hpp"
#include "strategies/suite/interpreter.hpp"

#include <cmath>
#include <cstring>

namespace cdl {
namespace {

class Interpreter : public gpu_test {};

// The program against the language's float64 interpreter, in both of the map's forms.
void expect_matches(const std::string& text, const map_problem& p) {
  const expr::program program = expr::parse(text);
  const map_fixture fixture(p, default_seed, language_op(program));
  const jit::op_text op{"language", text};
  for (map_form form : {map_form::scalar, map_form::vec}) {
    const validation_result r =
        fixture.run_and_validate([&](const map_launch& a) { interpreter::launch_map(a, op); }, form);
    EXPECT_TRUE(r.passed) << text << " " << p.describe() << " " << to_string(form) << ": " << r.summary();
  }
}

TEST_F(Interpreter, EveryConstructMatchesTheLanguagesInterpreter) {
  for (const char* text : test::language_constructs)
    for (dtype t : {dtype::f32, dtype::f64}) expect_matches(text, {map_op::quadratic, t, 4100, 1});
}

// Sizes: 1 and 5 (no whole vectors: vec runs scalar), 36 (nine vectors, part of a block), and a
// million; k = 1 (one step a pass), 16 (whole passes of several steps) and 11 (a last pass that
// is partly past k).
TEST_F(Interpreter, AProgramOfEveryConstructMatchesAtEdgeSizesAndPartialPasses) {
  // Every kind of step: x's and the accumulator's ops, a number on either side, an fma, a select of
  // two saved values, within the four slots.
  const std::string text =
      "x > 0.5 ? min(sin(x), x * x) * 3 + exp(-x) / 3 : max(sin(x) * cos(x), 0.125) + sqrt(x)";
  for (dtype t : {dtype::f32, dtype::f64})
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(36), std::size_t(1000004)})
      for (int k : {1, 11, 16}) expect_matches(text, {map_op::quadratic, t, n, k});
}

TEST_F(Interpreter, AWrongProgramIsCaught) {
  const expr::program other = expr::parse("x * x + 1");  // the reference of another op
  const map_fixture fixture({map_op::quadratic, dtype::f32, 4096, 1}, default_seed, language_op(other));
  const jit::op_text op{"language", "x * x + 2"};
  const validation_result r =
      fixture.run_and_validate([&](const map_launch& a) { interpreter::launch_map(a, op); }, map_form::vec);
  EXPECT_FALSE(r.passed) << r.summary();
}

// Random programs (tests/random_programs.hpp) through parser, encoder and kernel, in float64 on
// every element of a small map, against the language's float64 interpreter: the kernel's sin and
// exp are CUDA's, within an ulp or two of the host's, so the bound is loose but far below any
// wrong instruction's error.
TEST_F(Interpreter, FuzzedProgramsMatchTheLanguagesInterpreter) {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  constexpr std::size_t n = 256;
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.25 + 1.5 * double(i) / n;
  device_buffer<double> dx(n), dy(n);
  dx.copy_from(x);
  int ran = 0;
  for (int round = 0; round < 400; ++round) {
    const std::string text =
        "t = " + test::random_value(state, 3, false) + "; " + test::random_value(state, 1 + round % 5);
    bytecode::steps b;
    try {
      b = bytecode::lower(bytecode::encode(expr::parse(text)));
    } catch (const error&) {
      continue;  // past the interpreter's limits: the CPU test checks the refusal
    }
    ++ran;
    interpreter::launch_map(
        {map_op::quadratic, dtype::f64, map_form::scalar, dx.data(), dy.data(), n, 1, nullptr}, b);
    CDL_CUDA_CHECK(cudaDeviceSynchronize());
    dy.copy_to(y);
    const expr::program p = expr::parse(text);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = expr::evaluate(p, x[i]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[i])) << text << " at " << x[i] << ": " << y[i];
      } else if (std::isinf(want)) {
        ASSERT_EQ(y[i], want) << text << " at " << x[i];
      } else {
        ASSERT_NEAR(y[i], want, 1e-6 * (1 + std::fabs(want))) << text << " at " << x[i] << "\n"
                                                              << bytecode::to_string(b);
      }
    }
  }
  EXPECT_GT(ran, 300);
}

// Bytes at random in every field of every step: the kernel's own guards keep every read and write
// inside the steps, the numbers and the lanes (compute-sanitizer's memcheck checks
// this test too), every element is written, and nothing past the output is.
TEST_F(Interpreter, RandomBytesRunWithoutAFaultAndWriteOnlyTheOutput) {
  std::uint64_t state = 0x243f6a8885a308d3ull;
  constexpr std::size_t n = 4096, guard = 256;
  std::vector<float> x(n, 0.5f), y(n + guard);
  device_buffer<float> dx(n), dy(n + guard);
  dx.copy_from(x);
  for (int round = 0; round < 200; ++round) {
    bytecode::steps b;
    b.code.resize(1 + test::next(state) % bytecode::max_steps);
    for (bytecode::step& st : b.code)
      for (std::size_t byte = 0; byte < sizeof st; ++byte)
        reinterpret_cast<unsigned char*>(&st)[byte] = (unsigned char)test::next(state);
    b.constants.resize(test::next(state) % (bytecode::max_constants + 1), 1.5);
    b.slots = test::next(state) % 2 ? bytecode::max_slots : 0;  // the kernels with slots and without
    CDL_CUDA_CHECK(cudaMemset(dy.data(), 0xfe, dy.bytes()));    // a value no program here computes
    for (map_form form : {map_form::scalar, map_form::vec}) {
      interpreter::launch_map({map_op::quadratic, dtype::f32, form, dx.data(), dy.data(), n,
                               int(1 + test::next(state) % 12), nullptr},
                              b);
      CDL_CUDA_CHECK(cudaDeviceSynchronize());
    }
    dy.copy_to(y);
    for (std::size_t i = n; i < n + guard; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &y[i], sizeof bits);
      ASSERT_EQ(bits, 0xfefefefeu) << "round " << round << ": element " << i << ", past the output, written";
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &y[i], sizeof bits);
      ASSERT_NE(bits, 0xfefefefeu) << "round " << round << ": element " << i << " not written";
    }
  }
}

}  // namespace
}  // namespace cdl
