// The expression language as data: a program (common/expression.hpp) encoded on the host, in
// microseconds and with no compiler, into a few instructions of a small register machine that a
// precompiled kernel can interpret (the interpreter's lesson runs them). What the encoder does to make the
// interpreter's work per element small:
//   - only what the result needs is encoded (a binding nothing reads is dropped);
//   - x stays in register 0; every other value gets a register from a short list, reused as soon as
//     its last reader has run, so a program needs as few registers as it holds values at once;
//   - a number is an operand of its own (a constant index), never an instruction;
//   - a product added to something, and read nowhere else, is one fused multiply-add (as nvcc
//     contracts a * b + c in the other strategies' kernels);
//   - a number goes to operand b where the op commutes (the kernel reads it once for every value),
//     and a division by a power of two is the exact product with its inverse.
// The encoder refuses a program the interpreter cannot hold (more registers, instructions or
// constants than the limits below), with a message saying which. `valid` is the interpreter's
// guard: whatever the bytes say, a program it accepts reads and writes inside its registers and
// constants.
#pragma once

#include "expression.hpp"
#include "portable.cuh"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <string>
#include <vector>

namespace cdl::bytecode {

enum class op : std::uint8_t {
  add,
  subtract,
  multiply,
  divide,
  fma,  // a * b + c
  negate,
  less,
  less_equal,
  greater,
  greater_equal,
  equal,
  not_equal,                               // 1 or 0
  select,                                  // a != 0 ? b : c
  CDL_EXPR_FUNCTIONS(CDL_EXPR_ENUMERATOR)  // sin, cos, exp, sqrt, min, max
  count_                                   // not an op: how many there are
};

inline constexpr int max_registers = 8;  // register 0 holds x
inline constexpr int max_instructions = 64;
inline constexpr int max_constants = 64;
// An operand: a register (0 .. max_registers - 1), or a constant (constant_bit | its index).
inline constexpr std::uint8_t constant_bit = 0x80;

struct instruction {
  op code;
  std::uint8_t dst, a, b, c;           // operands a program does not use are 0
  std::uint8_t unused[3] = {0, 0, 0};  // 8 bytes: one load
};
static_assert(sizeof(instruction) == 8);

struct program {
  std::vector<instruction> code;
  std::vector<double> constants;  // each number of the source once, in the element type when run
  std::uint8_t result = 0;        // the operand that holds the result after the last instruction
  int registers = 1;              // registers the code uses, x's included
};

// The program encoded, or cdl::error naming the limit it exceeds.
program encode(const expr::program& p);
// Whether every operand of p is inside its registers and constants, and every op is one above: the
// interpreters run only programs it accepts.
bool valid(const program& p);
std::string to_string(const program& p);  // one instruction a line, for a reader and a failing test

// What each op computes, for host and device: one definition, which every interpreter uses.
template <op O, class T>
CDL_HD inline T apply(T a, T b, T c) {
  using std::cos, std::exp, std::sin, std::sqrt;  // float's own overloads for T = float
  if constexpr (O == op::add)
    return a + b;
  else if constexpr (O == op::subtract)
    return a - b;
  else if constexpr (O == op::multiply)
    return a * b;
  else if constexpr (O == op::divide)
    return a / b;
  else if constexpr (O == op::fma)
    return a * b + c;
  else if constexpr (O == op::negate)
    return -a;
  else if constexpr (O == op::less)
    return a < b;
  else if constexpr (O == op::less_equal)
    return a <= b;
  else if constexpr (O == op::greater)
    return a > b;
  else if constexpr (O == op::greater_equal)
    return a >= b;
  else if constexpr (O == op::equal)
    return a == b;
  else if constexpr (O == op::not_equal)
    return a != b;
  else if constexpr (O == op::select)
    return a != T(0) ? b : c;
  else if constexpr (O == op::sin)
    return sin(a);
  else if constexpr (O == op::cos)
    return cos(a);
  else if constexpr (O == op::exp)
    return exp(a);
  else if constexpr (O == op::sqrt)
    return sqrt(a);
  else if constexpr (O == op::min)
    return b < a ? b : a;
  else
    return a < b ? b : a;  // max
}

// Calls f(std::integral_constant<op, code>) for the op code names: a switch whose every case knows
// its op when it is compiled. Unary and binary apart, so that a caller instantiates only its own
// kind (sin's code is long). A byte that names no op of the kind calls nothing and returns false.
// clang-format off
#define CDL_OP(o) case op::o: f(std::integral_constant<op, op::o>{}); return true;
template <class F>
CDL_HD inline bool with_unary(op code, F&& f) {
  switch (code) {
    CDL_OP(negate) CDL_OP(sin) CDL_OP(cos) CDL_OP(exp) CDL_OP(sqrt)
    default: return false;
  }
}
template <class F>
CDL_HD inline bool with_binary(op code, F&& f) {
  switch (code) {
    CDL_OP(add) CDL_OP(subtract) CDL_OP(multiply) CDL_OP(divide) CDL_OP(min) CDL_OP(max)
    CDL_OP(less) CDL_OP(less_equal) CDL_OP(greater) CDL_OP(greater_equal) CDL_OP(equal) CDL_OP(not_equal)
    default: return false;
  }
}
template <class F>
CDL_HD inline bool with_comparison(op code, F&& f) {
  switch (code) {
    CDL_OP(less) CDL_OP(less_equal) CDL_OP(greater) CDL_OP(greater_equal) CDL_OP(equal) CDL_OP(not_equal)
    default: return false;
  }
}
#undef CDL_OP
// clang-format on

// The register machine's interpreter, for host and device: p's code on one element, in T. A program
// must be valid. The reference the kernel's form below is tested against.
template <class T, class Code, class Constant>
CDL_HD inline T run(const Code* code, int length, const Constant* constants, std::uint8_t result, T x) {
  T r[max_registers] = {x};
  const auto get = [&](std::uint8_t operand) -> T {
    return operand & constant_bit ? T(constants[operand & ~constant_bit]) : r[operand];
  };
  for (int i = 0; i < length; ++i) {
    const auto& in = code[i];
    const T a = get(in.a), b = get(in.b), c = get(in.c);
    T v = a;
    const auto one = [&](auto o) { v = apply<decltype(o)::value>(a, b, c); };
    if (in.code == op::fma)
      one(std::integral_constant<op, op::fma>{});
    else if (in.code == op::select)
      one(std::integral_constant<op, op::select>{});
    else if (!with_unary(in.code, one))
      with_binary(in.code, one);
    r[in.dst] = v;
  }
  return get(result);
}

template <class T>
T run(const program& p, T x) {
  return run<T>(p.code.data(), int(p.code.size()), p.constants.data(), p.result, x);
}

// ---- The interpreter kernel's form ------------------------------------------------------------------
// A kernel cannot index its registers with a number it reads (they would live in local memory), so
// it names each register in a case of a switch. Read through a switch per operand, a register
// machine pays a copy of the operand's values and a chain of branches per operand; so the kernel
// runs steps that each write one accumulator, each step one case whose code names what it reads: the
// accumulator, x, a slot, or a number. `lower` turns a program into such steps.
enum class form : std::uint8_t {
  load,         // acc = B
  save,         // slot B = acc
  binary,       // acc = acc op B
  binary_x,     // acc = x op B
  reversed,     // acc = B op acc
  unary,        // acc = op(acc)
  unary_x,      // acc = op(x)
  fma_first,    // acc = acc * B + C
  fma_last,     // acc = B * C + acc
  select_if,    // acc = acc != 0 ? B : C
  select_else,  // acc = B != 0 ? C : acc
  // A select whose condition compares x with a number, and is read nowhere else: the comparison
  // folded into the select (code is the comparison, C the number), one step where it took three.
  select_x_if,    // acc = x code C ? B : acc
  select_x_else,  // acc = x code C ? acc : B
  // acc = acc * x + C, C a number: a fma_first whose sources are x and a number, the step of a
  // polynomial by Horner's rule, which the interpreter's loop runs apart from the others.
  horner,
  count_
};
inline constexpr int max_slots = 4;
inline constexpr int max_steps = 3 * max_instructions;  // a load and a save around each instruction, at most
// A source B or C: x (0), a slot (1 .. max_slots), the accumulator as it was before the step
// (acc_source), or a number (constant_bit | its index). Any other byte reads x.
inline constexpr std::uint8_t acc_source = max_slots + 1;

struct step {
  form f;
  op code;  // the op of the binary and unary forms
  std::uint8_t b, c;
};
static_assert(sizeof(step) == 4);

struct steps {
  std::vector<step> code;  // after the last, the accumulator holds the result
  std::vector<double> constants;
  // The slots the code uses, at least one where it has a folded select: a kernel built with fewer
  // runs it wrong, one built with more spends registers.
  int slots = 0;
};

// p's code as steps (its numbers kept), or cdl::error when p holds more values at once than the
// accumulator and the slots.
steps lower(const program& p);
std::string to_string(const steps& s);

}  // namespace cdl::bytecode
