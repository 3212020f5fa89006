// 16 - An interpreter: the op as data, run by a kernel built ahead of time.
//
// Idea.    The op a user types, in 08's language, is encoded on the host into steps of a small
//          machine (common/bytecode.hpp: encode, then lower), with no compiler, and passed to a
//          kernel built with the program. A kernel cannot index registers with a number it reads
//          (they would live in local memory), so each step writes one accumulator and is one case
//          of a switch whose code names what it reads: the accumulator, x, a slot or a number
//          (run_steps, below). A step is decoded once for sixteen lanes, sixteen steps of k.
// Cost.    No compile: the encoding takes microseconds, a new op's first result is one launch.
//          Each call pays a step's fetch and branches and numbers read from memory: a few times
//          the template at k = 256, near it at k = 1 (the report's dispatch figure).
// Use it   for a user's op until a compiled kernel is ready (10's tiered dispatch), or where no
//          compiler can run.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/16_interpreter.cu common/expression.cpp \
//            common/bytecode.cpp -o 16_interpreter
// See it.  cuobjdump -res-usage 16_interpreter: no local memory beyond sin's reduction's stack;
//          cuobjdump -sass: the step loop inside the k loop, a branch chain per step.
// Suite.   strategies/suite/16_interpreter.cu: the vec form, float64. It runs this file's loop:
//          defining CDL_INTERPRETER_LOOP before including it leaves out the lesson's kernel and main.
#include "common/bytecode.hpp"

// ---- The interpreter's loop: steps (common/bytecode.hpp's `lower`) run on L lanes at once ---------
namespace cdl::interpreter {
using namespace cdl::bytecode;

// Operand b on lane l: a number is one value for every lane.
template <class T, int L>
CDL_HD inline T lane(const T (&b)[L], int l) {
  return b[l];
}
template <class T>
CDL_HD inline T lane(const T& b, int) {
  return b;
}

// Calls f with source o: an array of L lanes, named by a constant in each case, or one number.
// Whatever the byte, the read stays inside the lanes and the numbers (a slot past Slots reads x).
template <class T, int L, int Slots, class Constant, class F>
CDL_HD inline void with_source(std::uint8_t o, const Constant* constants, const T (&x)[L], const T (&acc)[L],
                               const T (&slot)[Slots > 0 ? Slots : 1][L], F&& f) {
  if (o & constant_bit) return f(T(constants[o & (max_constants - 1)]));
  static_assert(Slots <= max_slots);
  // clang-format off
  switch (o) {  // a slot past the kernel's reads x
    case 1: if constexpr (Slots >= 1) return f(slot[0]); break;
    case 2: if constexpr (Slots >= 2) return f(slot[1]); break;
    case 3: if constexpr (Slots >= 3) return f(slot[2]); break;
    case 4: if constexpr (Slots >= 4) return f(slot[3]); break;
    case acc_source: return f(acc);
    default: break;
  }
  // clang-format on
  return f(x);
}

// The steps on L lanes (the kernel's values at once; one on the host). x's lanes are made opaque at
// every step (an empty asm statement that claims to change them): otherwise the optimiser sees that
// a case reading only x and numbers computes the same values at every step, and computes every such
// case (x / x, sin(x), ...) before the loop, for every lane, whichever ones the program runs.
// Slots: the slots the kernel has (steps::slots or more); a kernel for programs that save nothing
// spends no registers on them.
template <class T, int L, int Slots = max_slots, class Constant>
CDL_HD inline void run_steps(const step* code, int length, const Constant* constants, const T (&x_in)[L],
                             T (&acc)[L], T (&slot)[Slots > 0 ? Slots : 1][L]) {
  T x[L];
  for (int l = 0; l < L; ++l) x[l] = x_in[l];
#define CDL_LANES(e) \
  for (int l = 0; l < L; ++l) acc[l] = (e)
  for (int i = 0; i < length; ++i) {
#if defined(__CUDA_ARCH__)
    for (int l = 0; l < L; ++l) {
      if constexpr (sizeof(T) == 4)
        asm volatile("" : "+f"(x[l]));
      else
        asm volatile("" : "+d"(x[l]));
    }
#endif
    const step st = code[i];
    // A run of Horner's steps (a polynomial, the commonest long op) in a loop of its own: one test
    // a step and no dispatch tree, and the lanes stay in their registers through the run, where the
    // switch below copies them at every step (`cuobjdump -sass`: the moves at the step loop's top).
    if (st.f == form::horner) {
      do {
        const T number = T(constants[code[i].c & (max_constants - 1)]);
        for (int l = 0; l < L; ++l) acc[l] = apply<op::fma, T>(acc[l], x[l], number);
      } while (++i < length && code[i].f == form::horner);
      --i;  // the step loop's ++i comes next
      continue;
    }
    const auto source = [&](std::uint8_t o, auto&& f) {
      with_source<T, L, Slots>(o, constants, x, acc, slot, f);
    };
    const auto sources = [&](auto&& f) {  // B and C: a case for each pair
      source(st.b, [&](const auto& B) { source(st.c, [&](const auto& C) { f(B, C); }); });
    };
    const auto three = [&](auto f) {  // f(acc, B, C) on every lane: the multiply-adds and the selects
      sources([&](const auto& B, const auto& C) { CDL_LANES(f(acc[l], lane(B, l), lane(C, l))); });
    };
    const auto select_x = [&](auto then_is_b) {  // the comparison's number: a constant, whatever the byte
      const T number = T(constants[st.c & (max_constants - 1)]);
      source(st.b, [&](const auto& B) {
        with_comparison(st.code, [&](auto o) {
          for (int l = 0; l < L; ++l) {
            const bool holds = apply<decltype(o)::value, T>(x[l], number, T(0)) != T(0);
            acc[l] = holds == decltype(then_is_b)::value ? lane(B, l) : acc[l];
          }
        });
      });
    };
    switch (st.f) {
      case form::load: source(st.b, [&](const auto& B) { CDL_LANES(lane(B, l)); }); break;
      case form::save:
        for (int s = 0; s < Slots; ++s)
          if (st.b == s + 1)
            for (int l = 0; l < L; ++l) slot[s][l] = acc[l];
        break;
      case form::binary:
        source(st.b, [&](const auto& B) {
          with_binary(st.code,
                      [&](auto o) { CDL_LANES((apply<decltype(o)::value, T>(acc[l], lane(B, l), T(0)))); });
        });
        break;
      case form::binary_x:
        source(st.b, [&](const auto& B) {
          with_binary(st.code,
                      [&](auto o) { CDL_LANES((apply<decltype(o)::value, T>(x[l], lane(B, l), T(0)))); });
        });
        break;
      case form::reversed:
        source(st.b, [&](const auto& B) {
          with_binary(st.code,
                      [&](auto o) { CDL_LANES((apply<decltype(o)::value, T>(lane(B, l), acc[l], T(0)))); });
        });
        break;
      case form::unary:
        with_unary(st.code, [&](auto o) { CDL_LANES((apply<decltype(o)::value, T>(acc[l], T(0), T(0)))); });
        break;
      case form::unary_x:
        with_unary(st.code, [&](auto o) { CDL_LANES((apply<decltype(o)::value, T>(x[l], T(0), T(0)))); });
        break;
      case form::fma_first: three([](T a, T b, T c) { return apply<op::fma, T>(a, b, c); }); break;
      case form::fma_last: three([](T a, T b, T c) { return apply<op::fma, T>(b, c, a); }); break;
      case form::select_if: three([](T a, T b, T c) { return apply<op::select, T>(a, b, c); }); break;
      case form::select_else: three([](T a, T b, T c) { return apply<op::select, T>(b, c, a); }); break;
      // Left out of the kernels without slots, whose registers its cases would raise (lower counts it
      // as a slot).
      case form::select_x_if:
        if constexpr (Slots > 0) select_x(std::true_type{});
        break;
      case form::select_x_else:
        if constexpr (Slots > 0) select_x(std::false_type{});
        break;
      default: break;
    }
  }
#undef CDL_LANES
}

}  // namespace cdl::interpreter

#ifndef CDL_INTERPRETER_LOOP
#include <chrono>

#include "strategies/lesson.cuh"

namespace bc = cdl::bytecode;

// The steps travel with the launch, in the constant bank: a warp reads each step once.
struct program {
  bc::step code[bc::max_steps];
  float constants[bc::max_constants];
  int length;
};

// lesson::map_kernel's loop, `lanes` steps of k a pass: lane s holds x + (j + s) * delta. Each of
// the slots a program saves values into is a register per lane: a kernel without them serves the
// programs that save nothing (as this one).
template <int lanes, int slots>
__global__ void interpreter_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k,
                                   const __grid_constant__ program p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v[lanes], acc[lanes] = {}, slot[slots > 0 ? slots : 1][lanes] = {}, sum = 0.0f;
  const int length = p.length < 0 ? 0 : p.length > bc::max_steps ? bc::max_steps : p.length;
#pragma unroll 1
  for (int j = 0; j < k; j += lanes) {
    for (int s = 0; s < lanes; ++s) v[s] = x[i] + float(j + s) * lesson::delta;
    cdl::interpreter::run_steps<float, lanes, slots>(p.code, length, p.constants, v, acc,
                                                     slot);  // acc = op(v)
    for (int s = 0; s < lanes; ++s)
      if (j + s < k) sum += acc[s];
  }
  y[i] = sum;
}

// Sixteen steps of k a pass where k has them; at k = 1, one.
template <int slots>
void launch(const lesson::problem& p, int k, const program& device) {
  const auto kernel = k >= 16 ? interpreter_kernel<16, slots> : interpreter_kernel<1, slots>;
  kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k, device);
}

int main() {
  lesson::problem p;
  const auto start = std::chrono::steady_clock::now();
  const bc::program encoded = bc::encode(cdl::expr::parse("x * x + 2 * x + 1"));  // the text a user typed
  const bc::steps steps = bc::lower(encoded);
  program device{};
  std::copy(steps.code.begin(), steps.code.end(), device.code);
  std::copy(steps.constants.begin(), steps.constants.end(), device.constants);
  device.length = int(steps.code.size());
  std::printf("parsed, encoded and lowered in %.1f us, no compiler:\n%s\n",
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
              bc::to_string(steps).c_str());
  return lesson::compare(p, {{"interpreter", [&](int k) {
                                if (steps.slots == 0)
                                  launch<0>(p, k, device);
                                else
                                  launch<bc::max_slots>(p, k, device);
                              }}});
}
#endif  // CDL_INTERPRETER_LOOP
