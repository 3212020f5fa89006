// Strategy 16's loop as the suite runs it: the steps of a program (common/bytecode.hpp's `lower`) on
// L lanes at once, a thread's elements times several steps of the map's k loop, so that a step's
// fetch and dispatch are paid once for all of them; the slots a kernel keeps (a register per lane
// each) chosen by the program; a run of Horner's steps (a polynomial) in a loop of its own. The
// lesson (strategies/16_interpreter.cu) runs the same steps plainly, an element and a step at a
// time; the kernels around this loop are in interpreter_kernels.cuh.
#pragma once

#include "common/bytecode.hpp"

#include <type_traits>

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
