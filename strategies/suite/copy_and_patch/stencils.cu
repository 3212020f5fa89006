// Strategy 17's stencils, images and call images: the device code nvcc compiles ahead of time, into
// a cubin for each part (strategies/CMakeLists.txt: -DCDL_STENCILS, -DCDL_IMAGES, -DCDL_CALLS=N),
// which the engine reads (learn.cpp) and, for the images, copies, patches and loads (write.cpp).
// Compiled without contraction (-fmad=false), so that each operation stays one instruction.
#include "strategies/suite/copy_and_patch/stencils.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

namespace cdl::copy_and_patch::stencil {

// The same on the GPU: the comparisons, the mask and the select written in PTX, which ptxas keeps
// as the one instruction each (C++ would give a predicate and FSEL).
#define CDL_SET(name, cmp)                                              \
  __device__ __forceinline__ float name(float a, float b) {             \
    float r;                                                            \
    asm("set." #cmp ".f32.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); \
    return r;                                                           \
  }
CDL_SET(set_lt, lt)
CDL_SET(set_le, le)
CDL_SET(set_gt, gt)
CDL_SET(set_ge, ge)
CDL_SET(set_eq, eq)
CDL_SET(set_neu, neu)  // C's !=: true where either is NaN
template <int O>
__device__ __forceinline__ float apply(float a, float b, float c, float constant) {
  const float w = has_constant(O) ? constant : b;  // the second operand: the constant or a register
  if constexpr (O == add || O == addr) return a + w;
  if constexpr (O == sub || O == subr) return a - w;
  if constexpr (O == rsub) return constant - a;
  if constexpr (O == mul || O == mulr) return a * w;
  if constexpr (O == min || O == minr) return fminf(a, w);
  if constexpr (O == max || O == maxr) return fmaxf(a, w);
  if constexpr (O == fmac) return fmaf(a, constant, b);
  if constexpr (O == fmar) return fmaf(a, b, constant);
  if constexpr (O == fnmar) return fmaf(-a, b, constant);
  if constexpr (O == lt || O == ltr) return set_lt(a, w);
  if constexpr (O == le || O == ler) return set_le(a, w);
  if constexpr (O == gt) return set_gt(a, w);
  if constexpr (O == ge) return set_ge(a, w);
  if constexpr (O == eq || O == eqr) return set_eq(a, w);
  if constexpr (O == ne || O == ner) return set_neu(a, w);
  if constexpr (O == fmarr) return fmaf(a, b, c);
  if constexpr (O == fnmarr) return fmaf(-a, b, c);
  if constexpr (O == mask || O == sel) {
    const unsigned p = __float_as_uint(a), q = __float_as_uint(b), t = __float_as_uint(c);
    unsigned r;
    if constexpr (O == mask)
      asm("prmt.b32 %0, %1, 0, 0xaaaa;" : "=r"(r) : "r"(p));  // byte 2's sign, four times
    else
      asm("lop3.b32 %0, %1, %2, %3, 0xca;" : "=r"(r) : "r"(p), "r"(q), "r"(t));  // a ? b : c, bit by bit
    return __uint_as_float(r);
  }
}

// The vec form of lesson::map_kernel: four elements a thread, read and written as one float4
// (x and y 16-byte aligned: the launcher's check; the last thread's missing elements read as 0
// and not written); body(xj, v) gives the op's value for each of the four.
template <class Body>
__device__ __forceinline__ void map_vec(const float* __restrict__ x, float* __restrict__ y, std::size_t n,
                                        int k, Body body) {
  const std::size_t i = lanes * (std::size_t(blockIdx.x) * blockDim.x + threadIdx.x);
  if (i >= n) return;
  float v[lanes], acc[lanes] = {};
  if (i + lanes <= n) {
    const float4 q = *reinterpret_cast<const float4*>(x + i);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    for (int l = 0; l < lanes; ++l) v[l] = i + l < n ? x[i + l] : 0.0f;
  }
#pragma unroll 1
  for (int j = 0; j < k; ++j) {
    float xj[lanes], r[lanes];
    for (int l = 0; l < lanes; ++l) xj[l] = fmaf(float(j), delta, v[l]);
    body(xj, r);
    for (int l = 0; l < lanes; ++l) acc[l] += r[l];
  }
  if (i + lanes <= n)
    *reinterpret_cast<float4*>(y + i) = make_float4(acc[0], acc[1], acc[2], acc[3]);
  else
    for (int l = 0; l < lanes; ++l)
      if (i + l < n) y[i + l] = acc[l];
}

#if defined(CDL_STENCILS) || defined(CDL_IMAGES) || defined(CDL_CALLS)
// Step s of S: chain s % P gets f(its value, x, marker s); in an image (P chains) the last P - 1
// steps fold chains 1.. into chain 0 (r0 += r_c * marker), so that everything after the region
// waits for its last step and the compiler keeps every step inside the loop. The empty asm after
// each step tells the compiler that every chain may have changed there, so that no step's code
// depends on its neighbours (without it, c - a chains alternate signs) and each stays one
// instruction.
template <int P, int S, int s, class Op, int lane = 0,
          int first = 0>  // (a call image's segment: from `first`)
__device__ __forceinline__ void step(float (&r)[chains], float x, Op op_of) {
  const float c = __uint_as_float(marker_bits + lane * lane_markers + s);
  if constexpr (P == 1 || s - first < S - (P - 1))
    r[(s - first) % P] = op_of(std::integral_constant<int, s>{}, r[(s - first) % P], x, c);
  else
    r[0] = fmaf(r[s - first - (S - P)], c, r[0]);
  asm volatile(""
               : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3]), "+f"(r[4]), "+f"(r[5]), "+f"(r[6]),
                 "+f"(r[7]));
}
template <int P, int S, class Op>
__device__ __forceinline__ void region(float (&r)[chains], float x, Op op_of) {
  [&]<int... s>(std::integer_sequence<int, s...>) { (step<P, S, s>(r, x, op_of), ...); }
  (std::make_integer_sequence<int, S>{});
}

// The vec images: a region for each of the four elements (lane l's markers l * 256 + s), their
// steps in one sequence, step s of every lane before step s + 1 of any, so that the compiler may
// interleave four independent chains as nvcc does with its own.
template <int P, int S, class Op>
__device__ __forceinline__ void vec_region(const float (&xj)[lanes], float (&out)[lanes], Op op_of) {
  float r[lanes][chains];
  for (int l = 0; l < lanes; ++l)
    for (float& w : r[l]) w = xj[l];
  [&]<int... s>(std::integer_sequence<int, s...>) {
    ((step<P, S, s, Op, 0>(r[0], xj[0], op_of), step<P, S, s, Op, 1>(r[1], xj[1], op_of),
      step<P, S, s, Op, 2>(r[2], xj[2], op_of), step<P, S, s, Op, 3>(r[3], xj[3], op_of)),
     ...);
  }
  (std::make_integer_sequence<int, S>{});
  for (int l = 0; l < lanes; ++l) out[l] = r[l][0];
}

// lesson::map_kernel, the region for the op.
template <int P, int S, class Op>
__device__ __forceinline__ void map(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k,
                                    Op op_of) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 1
  for (int j = 0; j < k; ++j) {
    const float xj = x[i] + float(j) * delta;
    float r[chains];
    for (float& v : r) v = xj;
    region<P, S>(r, xj, op_of);
    acc += r[0];
  }
  y[i] = acc;
}

// Operation O on the chain's value: with the step's marker, or with a second register made for the
// step (x + marker: a new value each step, so that no chain of min(r, w) folds to one instruction),
// and for the fused three-register operations x as the addend; a select picks between the chain and
// that register by a mask made from x and its own marker.
template <int O>
__device__ __forceinline__ float with_marker(float a, float x, float c) {
  if constexpr (has_constant(O))
    return apply<O>(a, x, 0.0f, c);
  else if constexpr (O == mask)
    return apply<O>(a, 0.0f, 0.0f, c);
  else if constexpr (O == sel)
    return apply<O>(apply<mask>(apply<gt>(x, 0.0f, 0.0f, __uint_as_float(__float_as_uint(c) + helper_marker)),
                                0.0f, 0.0f, c),
                    a, x + c, c);
  else
    return apply<O>(a, x + c, x, c);
}
template <int O>
struct every {  // every step operation O (a mask's chain starts from x + marker 0: step 0 is found by
                // it; where ptxas may merge two steps of O, every other step is an add)
  template <int s>
  __device__ __forceinline__ float operator()(std::integral_constant<int, s>, float a, float x,
                                              float c) const {
    if constexpr ((O == mask && s == 0) || (merges(O, O) && s % 2 == 0))
      return with_marker<add>(a, x, c);
    else
      return with_marker<O>(a, x, c);
  }
};
template <int O>
struct pairs {  // step s: add, O, 0, O, 1, O, ...: every operation before O and after it (an add in
                // place of one ptxas may merge with O)
  template <int s>
  __device__ __forceinline__ float operator()(std::integral_constant<int, s>, float a, float x,
                                              float c) const {
    constexpr int p = s / 2 - 1;
    return with_marker < s == 0 ? add : s % 2 == 1 ? O : merges(O, p) || merges(p, O) ? add : p > (a, x, c);
  }
};

#define CDL_KERNEL(name, P, S, ...)                                                                  \
  extern "C" __global__ void name(const float* __restrict__ x, float* __restrict__ y, std::size_t n, \
                                  int k) {                                                           \
    map<P, S>(x, y, n, k, __VA_ARGS__{});                                                            \
  }
#ifdef CDL_IMAGES
// The images ops are written into: every step an `add` or a fold, each found by its marker; as many
// chains as half the steps, up to 8, their registers the pool an op's values are given.
CDL_KERNEL(cdl_image_4, 2, 4, every<add>)
CDL_KERNEL(cdl_image_8, 4, 8, every<add>)
CDL_KERNEL(cdl_image_16, chains, 16, every<add>)
CDL_KERNEL(cdl_image_32, chains, 32, every<add>)
CDL_KERNEL(cdl_image_64, chains, 64, every<add>)
#define CDL_VEC_KERNEL(name, P, S)                                                                         \
  extern "C" __global__ void name(const float* __restrict__ x, float* __restrict__ y, std::size_t n,       \
                                  int k) {                                                                 \
    map_vec(x, y, n, k,                                                                                    \
            [](const float(&xj)[lanes], float(&out)[lanes]) { vec_region<P, S>(xj, out, every<add>{}); }); \
  }
#define CDL_VEC_IMAGE(steps, P) CDL_VEC_KERNEL(cdl_image_vec_##steps, P, steps)
CDL_VEC_IMAGES(CDL_VEC_IMAGE)
#elif defined(CDL_CALLS)
// The call images (a cubin for each count of calls, loaded only for an op that calls a function):
// the vec images' lanes, their steps in `calls` + 1 segments of S, and after each segment but the
// last a slot that applies one function to every lane's chain 0 (a division: chain 0 over chain 1):
// a switch on the slot's word, each case nvcc's own inlined code. The switch stays inside the k loop
// (its word is in memory nvcc cannot see patched); chains 1.. live across the slots, their registers
// those a value of the op keeps across a call. Where ptxas still copies a step (into a case, or
// after a slot, made again from x), the learning refuses that image.
struct words {
  unsigned of[max_calls];
};
constexpr words marked() {  // slot g's word: its marker, slot_marker + g
  words out{};
  for (int g = 0; g < max_calls; ++g) out.of[g] = slot_marker + unsigned(g);
  return out;
}
__constant__ words slot_words = marked();
template <int g>
__device__ __forceinline__ void slot(float (&r)[lanes][chains]) {
  switch (slot_words.of[g]) {
#define CDL_SLOT_CASE(name, fn)                            \
  case fn_##name:                                          \
    for (int l = 0; l < lanes; ++l) r[l][0] = fn(r[l][0]); \
    break;
    CDL_SLOT_FUNCTIONS(CDL_SLOT_CASE)
    case fn_div:
      for (int l = 0; l < lanes; ++l) r[l][0] = r[l][0] / r[l][1];
      break;
    default: __builtin_unreachable();  // every word is patched before the image is loaded
  }
}
template <int P, int first,
          int... s>  // a segment: steps of each chain in turn, then chains 1.. folded into 0
__device__ __forceinline__ void segment(float (&r)[lanes][chains], const float (&xj)[lanes],
                                        std::integer_sequence<int, s...>) {
  constexpr int S = sizeof...(s);
  ((step<P, S, first + s, every<add>, 0, first>(r[0], xj[0], every<add>{}),
    step<P, S, first + s, every<add>, 1, first>(r[1], xj[1], every<add>{}),
    step<P, S, first + s, every<add>, 2, first>(r[2], xj[2], every<add>{}),
    step<P, S, first + s, every<add>, 3, first>(r[3], xj[3], every<add>{})),
   ...);
}
// Segment g then slot g, for each slot: a function of its own rather than a lambda, which nvcc may
// leave a call (r then lives in local memory, and ptxas makes x again after each slot).
template <int P, int S, int... g>
__device__ __forceinline__ void segments(float (&r)[lanes][chains], const float (&xj)[lanes],
                                         std::integer_sequence<int, g...>) {
  ((segment<P, g * S>(r, xj, std::make_integer_sequence<int, S>{}), slot<g>(r)), ...);
}
template <int P, int S, int calls>
__device__ __forceinline__ void call_region(const float (&xj)[lanes], float (&out)[lanes]) {
  // With one slot, ptxas would rather compute chains 1.. again after it from x (which the loop
  // keeps) than keep their registers across the slot's code, and a value of the op could then live
  // across no register. A shuffle of x with itself is x, but ptxas does not compute a shuffle
  // twice, so chains that start from one keep their registers across the slot.
  float r[lanes][chains];
  for (int l = 0; l < lanes; ++l)
    for (int c = 0; c < chains; ++c) r[l][c] = calls == 1 && c > 0 ? __shfl_xor_sync(~0u, xj[l], 0) : xj[l];
  segments<P, S>(r, xj, std::make_integer_sequence<int, calls>{});
  segment<P, calls * S>(r, xj, std::make_integer_sequence<int, S>{});
  for (int l = 0; l < lanes; ++l) out[l] = r[l][0];
}
// The region as map_vec's body. For Blackwell (sm_100 to sm_120) nvcc leaves the body of the largest
// regions a call unless it is forced inline (x then goes through local memory, and the learning
// finds no maker of it); for the others it inlines the body of its own accord, and forcing it there
// would only reorder their code.
#if __CUDA_ARCH__ >= 1000
#define CDL_CALL_BODY_INLINE __forceinline__
#else
#define CDL_CALL_BODY_INLINE
#endif
template <int P, int S, int calls>
struct call_body {
  __device__ CDL_CALL_BODY_INLINE void operator()(const float (&xj)[lanes], float (&out)[lanes]) const {
    call_region<P, S, calls>(xj, out);
  }
};
#define CDL_CALL_KERNEL(calls, P, S, most)                                                                   \
  extern "C" __global__ void cdl_call_vec_##calls##_##P##_##S(const float* __restrict__ x,                   \
                                                              float* __restrict__ y, std::size_t n, int k) { \
    if constexpr (calls <= most) map_vec(x, y, n, k, call_body<P, S, calls>{});                              \
  }
// The slots' functions as nvcc compiled them there, over an array: what the fuzz on the GPU checks
// a patched image's calls against (the host's sinf is not the GPU's to the bit).
extern "C" __global__ void cdl_functions(unsigned f, float* v, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (f) {
#define CDL_FUNCTION_CASE(name, fn) \
  case fn_##name:                   \
    v[i] = fn(v[i]);                \
    break;
    CDL_SLOT_FUNCTIONS(CDL_FUNCTION_CASE)
  }
}
// The images with CDL_CALLS slots (a cubin for each count), one of each shape in call_shapes, of
// no code where the shape is not built for that many.
#define CDL_CALL_KERNEL_OF(calls, P, S, most) CDL_CALL_KERNEL(calls, P, S, most)  // calls: the count
#define CDL_CALL_IMAGE(P, S, most) CDL_CALL_KERNEL_OF(CDL_CALLS, P, S, most)
CDL_CALL_SHAPES(CDL_CALL_IMAGE)
#else  // the stencils, read but never loaded
// One stencil per operation: one chain of 8 steps of that operation.
#define CDL_OP_KERNEL(o) CDL_KERNEL(cdl_op_##o, 1, learn_steps, every<o>)
CDL_STENCIL_OPS(CDL_OP_KERNEL)
// For each operation, one chain through it and every other in both orders: the cycles each result
// takes to the next.
#define CDL_PAIRS_KERNEL(o) CDL_KERNEL(cdl_pairs_##o, 1, pair_steps, pairs<o>)
CDL_STENCIL_OPS(CDL_PAIRS_KERNEL)
#endif
#endif
}  // namespace cdl::copy_and_patch::stencil
