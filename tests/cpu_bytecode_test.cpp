// The expression language encoded as data (common/bytecode.hpp): every construct, the catalogue's
// ops, the encoder's limits, and a fuzz run of programs through parser, encoder and interpreter
// against the language's float64 interpreter, and of mutated encodings through the guard.
#include "common/bytecode.hpp"
#include "common/expression.hpp"
#include "common/ops.cuh"
#include "common/polynomial.hpp"
#include "expression_oracle.hpp"
#include "random_programs.hpp"

#include "strategies/suite/interpreter_loop.cuh"  // the kernels' loop, run here on the host

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace cdl {
namespace {

// The interpreter kernel's steps on one lane, on the host.
double run_lowered(const bytecode::steps& s, double x) {
  const double lanes[1] = {x};
  double acc[1] = {0}, slot[bytecode::max_slots][1] = {};
  interpreter::run_steps<double, 1>(s.code.data(), int(s.code.size()), s.constants.data(), lanes, acc, slot);
  return acc[0];
}

void expect_near(double got, double want, const std::string& what) {
  if (std::isnan(want) || std::isinf(want)) {
    EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << what;
    return;
  }
  EXPECT_NEAR(got, want, 1e-9 * (1 + std::fabs(want))) << what;
}

// The encoded program, and its steps where it fits the kernel's slots, against the tests' own
// reading of the language (expression_oracle.hpp), in double: equal within a few roundings (a fused
// multiply-add rounds once where the oracle rounds twice). Returns whether the steps ran; where a
// comparison is too near its edge for two float64 evaluations to agree on it, neither is compared.
bool expect_same(const std::string& text, double x) {
  const expr::program p = expr::parse(text);
  const bytecode::program b = bytecode::encode(p);
  EXPECT_TRUE(bytecode::valid(b)) << text << "\n" << bytecode::to_string(b);
  const oracle::value reference = oracle::at(text, x, oracle::double_edge);
  const double want = reference.v;
  if (!reference.fragile)
    expect_near(bytecode::run(b, x), want, text + " at " + std::to_string(x) + "\n" + bytecode::to_string(b));
  if (b.registers > bytecode::max_slots + 1) return false;
  const bytecode::steps s = bytecode::lower(b);
  const double steps = run_lowered(s, x);
  if (!reference.fragile)
    expect_near(steps, want,
                text + " at " + std::to_string(x) + ", as steps:\n" + bytecode::to_string(s) +
                    bytecode::to_string(b));
  return true;
}

TEST(Bytecode, EveryConstructRunsAsTheLanguageDefinesIt) {
  for (const char* text : test::language_constructs)
    for (const double x : {0.0, 0.25, 0.5, 1.0, 3.0}) expect_same(text, x);
}

// The op-length family: each polynomial's text is the functor's polynomial (the language's float64
// interpreter against polynomial_value), and its steps (Horner's steps run as one run of the
// interpreter's fast path, whatever their number) compute it too; a polynomial holds no value but
// the accumulator.
TEST(Bytecode, ThePolynomialsOfEveryLengthRunAsTheirDefinition) {
  for (int steps : op_lengths) {
    const std::string text = polynomial_text(steps);
    const expr::program p = expr::parse(text);
    for (const double x : {0.25, 0.5, 1.0, 1.75}) {
      EXPECT_NEAR(expr::evaluate(p, x), polynomial_value(steps, x), 1e-12 * polynomial_value(steps, x))
          << text;
      expect_same(text, x);
    }
    const bytecode::steps s = bytecode::lower(bytecode::encode(p));
    EXPECT_EQ(s.slots, 0) << text;
    EXPECT_EQ(int(s.constants.size()), steps == 1 ? 1 : steps / 2 + 1) << text;
    EXPECT_LE(int(s.code.size()), std::max(1, steps / 2 + 1)) << "a multiply and an add are one step\n"
                                                              << bytecode::to_string(s);
  }
}

// 03's functors (their coefficients constants of the front end's) are the same polynomials.
TEST(Bytecode, ThePolynomialFunctorsAreTheReference) {
  static_assert(std::size(op_lengths) == 5, "a length added: add its functor here");
  const auto same = [](auto op, int steps) {
    for (const double x : {0.25, 0.5, 1.0, 1.75})
      EXPECT_DOUBLE_EQ(op(x), polynomial_value(steps, x)) << steps;
  };
  same(polynomial<1>{}, 1);
  same(polynomial<4>{}, 4);
  same(polynomial<16>{}, 16);
  same(polynomial<30>{}, 30);
  same(polynomial<64>{}, 64);
}

TEST(Bytecode, TheCataloguesOpsEncodeAndRunInBothTypes) {
  for (std::size_t i = 0; i < map_op_catalogue.size(); ++i) {
    const op_info& o = map_op_catalogue[i];
    const bytecode::program b = bytecode::encode(expr::parse(std::string(o.source)));
    for (const double x : {0.1, 0.5, 0.75, 1.0, 3.0}) {
      EXPECT_TRUE(expect_same(std::string(o.source), x)) << o.name << ": fits the kernel's slots";
      const float f = bytecode::run(b, float(x));
      const float want = visit_op(map_op(i), [x](auto op) { return op(float(x)); });
      EXPECT_NEAR(f, want, 4e-7 * (1 + std::fabs(want))) << o.name << " at " << x;
    }
  }
}

TEST(Bytecode, ValuesAreNotInstructionsAndRegistersAreReused) {
  // x * x + 2 * x + 1: one product (x * x) fused into the addition of 2 * x, then + 1; the numbers
  // are operands, x is register 0, and no more than two other registers are live.
  const bytecode::program b = bytecode::encode(expr::parse("x * x + 2 * x + 1"));
  EXPECT_EQ(b.code.size(), 3u) << bytecode::to_string(b);
  EXPECT_EQ(b.code[1].code, bytecode::op::fma) << bytecode::to_string(b);
  EXPECT_EQ(b.constants.size(), 2u);
  EXPECT_LE(b.registers, 3);
  // A chain of twenty additions needs one register beside x, not twenty.
  std::string chain = "x";
  for (int i = 0; i < 20; ++i) chain = "(" + chain + " + " + std::to_string(i) + ")";
  const bytecode::program c = bytecode::encode(expr::parse(chain));
  EXPECT_EQ(c.registers, 2) << bytecode::to_string(c);
  EXPECT_EQ(c.code.size(), 20u);
}

// The kernel reads a number in operand b once for all of its lanes, and a division is long: a
// number moves to b where the op commutes, and a division by a power of two becomes a product.
TEST(Bytecode, NumbersGoWhereTheKernelReadsThemOnceAndExactDivisionsBecomeProducts) {
  for (const char* text : {"2 * x", "2 + x", "x * x + 2 * x + 1"}) {
    const bytecode::program b = bytecode::encode(expr::parse(text));
    for (const bytecode::instruction& in : b.code)
      EXPECT_FALSE(in.a & bytecode::constant_bit) << text << "\n" << bytecode::to_string(b);
  }
  const bytecode::program quarter = bytecode::encode(expr::parse("x / 4"));
  ASSERT_EQ(quarter.code.size(), 1u);
  EXPECT_EQ(quarter.code[0].code, bytecode::op::multiply) << bytecode::to_string(quarter);
  EXPECT_EQ(quarter.constants.at(quarter.code[0].b & ~bytecode::constant_bit), 0.25);
  for (const char* inexact : {"x / 3", "x / 0.3", "4 / x"})
    EXPECT_EQ(bytecode::encode(expr::parse(inexact)).code[0].code, bytecode::op::divide) << inexact;
}

// The kernel's steps: the op's work, with a load or a save only where a value must wait.
TEST(Bytecode, StepsReadXAndNumbersInPlaceAndSaveOnlyWhatWaits) {
  const auto lowered = [](const char* text) { return bytecode::lower(bytecode::encode(expr::parse(text))); };
  const bytecode::steps quadratic = lowered("x * x + 2 * x + 1");
  EXPECT_EQ(quadratic.code.size(), 3u) << bytecode::to_string(quadratic);
  for (const bytecode::step& st : quadratic.code)
    EXPECT_TRUE(st.f != bytecode::form::load && st.f != bytecode::form::save)
        << bytecode::to_string(quadratic);
  const bytecode::steps sine = lowered("sin(x)");
  ASSERT_EQ(sine.code.size(), 1u);
  EXPECT_EQ(sine.code[0].f, bytecode::form::unary_x);
  // sin(x) waits in a slot while cos(x) is computed: one save, no load.
  const bytecode::steps both = lowered("exp(sin(x) * cos(x))");
  EXPECT_EQ(both.code.size(), 5u) << bytecode::to_string(both);
  // The slots a kernel must have: none for the quadratic op, one and two for these.
  EXPECT_EQ(quadratic.slots, 0);
  EXPECT_EQ(both.slots, 1);
  // A comparison of x with a number, read only by a select, is folded into it: the threshold op is
  // its two branches, one waiting in a slot, and the select.
  const bytecode::steps threshold = lowered("x > 0.5 ? 2 * x : x / 2");
  ASSERT_EQ(threshold.code.size(), 4u) << bytecode::to_string(threshold);
  EXPECT_EQ(threshold.code[3].f, bytecode::form::select_x_if) << bytecode::to_string(threshold);
  EXPECT_EQ(threshold.code[3].code, bytecode::op::greater);
  EXPECT_EQ(threshold.slots, 2);
  // A folded select counts as a slot: the kernels without slots leave it out.
  EXPECT_EQ(lowered("x > 0.5 ? 2 : x").slots, 1) << bytecode::to_string(lowered("x > 0.5 ? 2 : x"));
  // Compared with something other than a number, the comparison stays a step.
  for (const char* kept : {"x > sin(x) ? 2 * x : x", "0.5 < x ? 2 * x : x"})
    for (const bytecode::step& st : lowered(kept).code)
      EXPECT_TRUE(st.f != bytecode::form::select_x_if && st.f != bytecode::form::select_x_else) << kept;
  // The else branch computed first (inside the then branch): the select reads it from its slot.
  const bytecode::steps otherwise = lowered("c = x / 4; x <= 0.5 ? sin(x) + c : c");
  EXPECT_EQ(otherwise.code.back().f, bytecode::form::select_x_else) << bytecode::to_string(otherwise);
  EXPECT_EQ(lowered("x").code.size(), 1u);  // the result is x: loaded
  EXPECT_EQ(lowered("2").code[0].f, bytecode::form::load);
  EXPECT_THROW(lowered("a = sin(x); b = cos(x); c = exp(x); d = sqrt(x); e = x * 3; a * b + c * d + e * a"),
               error);
}

void expect_refused(const std::string& text, const std::string& words) {
  try {
    const bytecode::program b = bytecode::encode(expr::parse(text));
    ADD_FAILURE() << text << " encoded:\n" << bytecode::to_string(b);
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Bytecode, WhatTheInterpreterCannotHoldIsRefusedSayingWhy) {
  // Eight values alive at once beside a sum: each vi is read by the sum and again by the product.
  std::string text, sum = "v1", product = "v1";
  for (int i = 1; i <= 8; ++i) text += "v" + std::to_string(i) + " = sin(x * " + std::to_string(i) + "); ";
  for (int i = 2; i <= 8; ++i) {
    sum = "(" + sum + " + v" + std::to_string(i) + ")";
    product = "(" + product + " * v" + std::to_string(i) + ")";
  }
  expect_refused(text + sum + " * " + product, "registers");
  std::string longer = "x";
  for (int i = 0; i <= bytecode::max_instructions; ++i) longer = "sin(" + longer + ")";
  expect_refused(longer, "instructions");
  std::string numbers = "x";
  for (int i = 0; i <= bytecode::max_constants; ++i) numbers += " + " + std::to_string(i + 2);
  expect_refused(numbers, "numbers");
}

TEST(Bytecode, FuzzedProgramsRunAsTheInterpreterOrAreRefusedAndMutatedCodeIsGuarded) {
  std::uint64_t state = 0x2545f4914f6cdd1dull;
  int encoded = 0, refused = 0, mutated_valid = 0, lowered = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string text =
        "t = " + test::random_value(state, 3, false) + "; " + test::random_value(state, 1 + round % 5);
    const expr::program p = expr::parse(text);
    bytecode::program b;
    try {
      b = bytecode::encode(p);
      ++encoded;
    } catch (const error&) {
      ++refused;
      continue;
    }
    for (const double x : {0.3, 1.7}) lowered += expect_same(text, x);
    // The bytes changed at random: the guard refuses what would read or write outside the
    // program's registers and constants, and what it lets through runs to a number or NaN.
    for (int m = 0; m < 4; ++m) {
      bytecode::program bad = b;
      if (bad.code.empty()) break;
      auto* bytes = reinterpret_cast<unsigned char*>(bad.code.data());
      bytes[test::next(state) % (bad.code.size() * sizeof(bytecode::instruction))] =
          (unsigned char)test::next(state);
      if (!bytecode::valid(bad)) continue;
      ++mutated_valid;
      (void)bytecode::run(bad, 0.5);  // under the sanitizers: no read or write outside
    }
  }
  EXPECT_GT(encoded, 2000);
  EXPECT_GT(mutated_valid, 100);  // mutations the guard lets through, run
  EXPECT_GT(lowered, 2000);       // programs run as the kernel's steps too (two points each)
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace cdl
