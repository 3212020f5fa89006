// 16 - An interpreter: the op as data, run by a kernel built ahead of time.
//
// Idea.    The op a user types, in 08's language, is encoded on the host into steps of a small
//          machine (common/bytecode.hpp: encode, then lower), with no compiler, and passed to a
//          kernel built with the program, which runs them for each element: a loop over the steps,
//          each a switch on what it does. A kernel cannot index registers with a number it reads
//          (they would live in local memory), so the machine has one accumulator that every step
//          writes, and each case of the switch names what it reads: the accumulator, x, one of
//          four slots (a value kept for later) or a number.
// Cost.    No compile: the encoding takes microseconds, a new op's first result is one launch.
//          Each step of each element pays its fetch, the branches to its case and its numbers
//          read from memory, where a compiled kernel has one instruction: a few times the template
//          where the op is the work (k = 256), near it where memory is (k = 1).
// Use it   for a user's op until a compiled kernel is ready (10's tiered dispatch), or where no
//          compiler can run.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/16_interpreter.cu common/expression.cpp \
//            common/bytecode.cpp -o 16_interpreter
// See it.  cuobjdump -sass 16_interpreter: inside the k loop the step loop, its switch a chain of
//          compares and branches; cuobjdump -res-usage: no local memory beyond sin's reduction's.
// Read on. The suite's form (strategies/suite/16_interpreter.cu, its loop interpreter_loop.cuh)
//          decodes a step once for a thread's whole batch of elements and k steps (up to sixteen
//          values), keeps only the slots a program uses, and runs a polynomial's steps in a loop of
//          their own; the report's op-length sweep measures what each buys.
#include "common/bytecode.hpp"
#include "strategies/lesson.cuh"

#include <chrono>

namespace bc = cdl::bytecode;

// The steps travel with the launch, in the constant bank: a warp reads each step once.
struct program {
  bc::step code[bc::max_steps];
  float constants[bc::max_constants];
  int length;
};

// The program on one element: a step at a time, a switch on its form, then on its op (with_binary
// and with_unary: a case for each op, bytecode.hpp). The slots are four registers, each read and
// written by a case that names it.
__device__ float run(const program& p, float x) {
  float acc = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f;
  const auto source = [&](std::uint8_t o) -> float {  // B or C: a number, x, a slot or acc
    if (o & bc::constant_bit) return p.constants[o & (bc::max_constants - 1)];
    switch (o) {
      case 1: return s1;
      case 2: return s2;
      case 3: return s3;
      case 4: return s4;
      case bc::acc_source: return acc;
      default: return x;
    }
  };
  const int length = p.length < 0 ? 0 : p.length > bc::max_steps ? bc::max_steps : p.length;
  for (int i = 0; i < length; ++i) {
    const bc::step st = p.code[i];
    const float b = source(st.b), c = source(st.c);
    const auto binary = [&](float l, float r) {
      bc::with_binary(st.code, [&](auto o) { acc = bc::apply<decltype(o)::value>(l, r, 0.0f); });
    };
    const auto unary = [&](float a) {
      bc::with_unary(st.code, [&](auto o) { acc = bc::apply<decltype(o)::value>(a, 0.0f, 0.0f); });
    };
    const auto compared = [&] {  // x against the step's number, by its comparison
      bool holds = false;
      bc::with_comparison(st.code,
                          [&](auto o) { holds = bc::apply<decltype(o)::value>(x, c, 0.0f) != 0.0f; });
      return holds;
    };
    switch (st.f) {
      case bc::form::load: acc = b; break;
      case bc::form::save:
        if (st.b == 1) s1 = acc;
        if (st.b == 2) s2 = acc;
        if (st.b == 3) s3 = acc;
        if (st.b == 4) s4 = acc;
        break;
      case bc::form::binary: binary(acc, b); break;
      case bc::form::binary_x: binary(x, b); break;
      case bc::form::reversed: binary(b, acc); break;
      case bc::form::unary: unary(acc); break;
      case bc::form::unary_x: unary(x); break;
      case bc::form::fma_first: acc = acc * b + c; break;
      case bc::form::fma_last: acc = b * c + acc; break;
      case bc::form::select_if: acc = acc != 0.0f ? b : c; break;
      case bc::form::select_else: acc = b != 0.0f ? c : acc; break;
      case bc::form::select_x_if: acc = compared() ? b : acc; break;
      case bc::form::select_x_else: acc = compared() ? acc : b; break;
      case bc::form::horner: acc = acc * x + c; break;
      default: break;
    }
  }
  return acc;
}

// lesson::map_kernel's loop with the interpreter in place of the op.
__global__ void interpreter_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k,
                                   const __grid_constant__ program p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) acc += run(p, x[i] + float(j) * lesson::delta);
  y[i] = acc;
}

int main() {
  lesson::problem p;
  const auto start = std::chrono::steady_clock::now();
  const bc::steps steps =
      bc::lower(bc::encode(cdl::expr::parse("x * x + 2 * x + 1")));  // the text a user typed
  program device{};
  std::copy(steps.code.begin(), steps.code.end(), device.code);
  std::copy(steps.constants.begin(), steps.constants.end(), device.constants);
  device.length = int(steps.code.size());
  std::printf("parsed, encoded and lowered in %.1f us, no compiler:\n%s\n",
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
              bc::to_string(steps).c_str());
  return lesson::compare(p, {{"interpreter", [&](int k) {
                                interpreter_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k,
                                                                                         device);
                              }}});
}
