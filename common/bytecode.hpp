// Strategy 08's language as data: a program (common/expression.hpp) encoded on the host, in
// microseconds and with no compiler, into a few instructions of a small register machine that a
// precompiled kernel can interpret (issue 50's first tier). What the encoder does to make the
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
  not_equal,  // 1 or 0
  select,     // a != 0 ? b : c
  sin,
  cos,
  exp,
  sqrt,
  min,
  max,
  count_  // not an op: how many there are
};

inline constexpr int max_registers = 8;  // register 0 holds x
inline constexpr int max_instructions = 64;
inline constexpr int max_constants = 32;
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

// The interpreter, for host and device: p's code on one element, in T. A program must be valid.
template <class T, class Code, class Constant>
CDL_HD inline T run(const Code* code, int length, const Constant* constants, std::uint8_t result, T x) {
  using std::cos, std::exp, std::sin, std::sqrt;  // float's own overloads for T = float
  T r[max_registers] = {x};
  const auto get = [&](std::uint8_t operand) -> T {
    return operand & constant_bit ? T(constants[operand & ~constant_bit]) : r[operand];
  };
  for (int i = 0; i < length; ++i) {
    const auto& in = code[i];
    const T a = get(in.a), b = get(in.b);
    T v;
    switch (in.code) {
      case op::add: v = a + b; break;
      case op::subtract: v = a - b; break;
      case op::multiply: v = a * b; break;
      case op::divide: v = a / b; break;
      case op::fma: v = a * b + get(in.c); break;
      case op::negate: v = -a; break;
      case op::less: v = a < b; break;
      case op::less_equal: v = a <= b; break;
      case op::greater: v = a > b; break;
      case op::greater_equal: v = a >= b; break;
      case op::equal: v = a == b; break;
      case op::not_equal: v = a != b; break;
      case op::select: v = a != T(0) ? b : get(in.c); break;
      case op::sin: v = sin(a); break;
      case op::cos: v = cos(a); break;
      case op::exp: v = exp(a); break;
      case op::sqrt: v = sqrt(a); break;
      case op::min: v = b < a ? b : a; break;
      case op::max: v = a < b ? b : a; break;
      default: v = a; break;
    }
    r[in.dst] = v;
  }
  return get(result);
}

template <class T>
T run(const program& p, T x) {
  return run<T>(p.code.data(), int(p.code.size()), p.constants.data(), p.result, x);
}

}  // namespace cdl::bytecode
