// 17 - Copy-and-patch: a native kernel for a user's op with no compiler, by patching machine code.
//
// Idea.    A kernel's machine code (SASS, in the cubin nvcc writes) is 16-byte instructions: an
//          opcode, register numbers in fixed fields, an immediate, and scheduling bits that tell
//          the warp scheduler how many cycles to wait before the next instruction (the hardware
//          does not wait for a fixed-latency result by itself). nvcc compiles, once at build time,
//          the images (the map kernel with a region of steps r = f(r, x, c), each a marker
//          constant) into one cubin, and into another the stencils: a kernel per operation and,
//          for each, a chain through it and every other. At start the program learns from the
//          stencils, by comparing them, each operation's instruction, which of its bytes are
//          which register, and the cycles one result takes to reach the next (Xu and Kjolstad's
//          copy-and-patch, OOPSLA 2021, learnt instead of written), and from the images where
//          their steps are. A new op is parsed (08's language), a multiply fused into the add
//          after it, its values given registers of the region, its instructions written into the
//          region with stalls computed from the learnt latencies, and the image loaded with
//          cudaLibraryLoadData: no compiler, no PTX. The vec images hold four elements a thread,
//          a region each, which nvcc interleaved; the patch keeps only the places of their steps
//          and of the instructions making each element's x, gives each of the four its own
//          registers from those nvcc used there (and any it left unused below them), and
//          interleaves the four again itself. A function (sin, cos, exp, sqrt) has no one
//          instruction: nvcc writes it as a sequence with branches. So the call images (a cubin
//          for each count of calls, up to three) hold slots between windows of steps, each slot a
//          switch over nvcc's own inlined sinf, cosf, expf and sqrtf on a word of __constant__
//          memory; the patch sets each slot's word in the image's data, writes the argument into
//          the register the slot reads, and keeps a value that lives across a call in a register
//          nvcc itself kept across that slot (its chains'), since the slot's code may write any
//          other.
// Cost.    Per new op: microseconds of patching, then the load of the image (the images' whole
//          cubin: its size sets the load's cost, which is why the stencils are a file of their
//          own; one load holds both forms), then nvcc's own instructions in a loop that is not
//          unrolled: in the vec form, four independent chains as nvcc's own vec kernel has, and
//          the region's unused places (an instruction each). A condition costs three steps
//          (compare to 1.0 or 0.0, mask, select) where nvcc writes two with a predicate; ptxas
//          writes a compare to all ones or zero as a compare into a predicate and a select, so no
//          stencil makes the mask in one. Where the arms are constants, or one value times two
//          constants, the patch rewrites the select as nvcc does (c ? 2 * x : x / 2 is x times
//          the compare's 1.0 or 0.0 scaled to 2 or 0.5: no mask), where that is exact to the bit;
//          nvcc also fuses that multiply into the sum, which the patch cannot reach: the report
//          splits 17's time over the template's into its instructions and the issue slots it
//          keeps busy, counted by Nsight Compute. A call costs nvcc's own function plus the
//          switch (a load of its word, compares and a branch, in every iteration: nvcc cannot
//          hoist what it cannot see), copies (v + -0) where a value must move into or out of a
//          slot's register, and the call image's unused places. Once a process: reading the
//          stencils, and the call images' at the first op that calls a function. The language is
//          what one instruction each can do (+ - * min max, a * c + b, division by a power of
//          two, comparisons and ?:) and up to three calls of sin, cos, exp and sqrt, in the vec
//          form alone; anything else (a division, a fourth call) is
//          refused with the route to use instead, as is an op with more live values than the
//          region's registers (the vec form's lanes have fewer each: such an op runs in the
//          scalar form) or than a call image keeps across its slots.
// Use it   where a new op must run at native speed within a millisecond: a user typing formulas,
//          the first tier of a tiered dispatch (10) in place of the interpreter (16).
// Breaks   on another architecture's encoding (the stencils are learnt per cubin, so a new toolkit
//          that moves them is learnt again) and where the learning's checks fail: it refuses then
//          (ptxas may copy a step into a slot's cases, or compute a chain again after a slot:
//          such a call image is not used, and ops it would have held are refused).
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_STENCILS -I. \
//            strategies/17_copy_and_patch.cu -o 17_stencils.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_IMAGES -I. \
//            strategies/17_copy_and_patch.cu -o 17_images.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_CALLS=1 -I. \
//            strategies/17_copy_and_patch.cu -o 17_calls_1.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_CALLS=2 -I. \
//            strategies/17_copy_and_patch.cu -o 17_calls_2.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_CALLS=3 -I. \
//            strategies/17_copy_and_patch.cu -o 17_calls_3.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/17_copy_and_patch.cu common/expression.cpp \
//            -o 17_copy_and_patch
// See it.  17_copy_and_patch --dump op.cubin, then cuobjdump -sass -fun cdl_image_vec_3 op.cubin:
//          the four FFMAs making x + j * delta, then the op's FMUL, FFMA and FADD for each of the
//          four elements, interleaved, then the four FADDs into the sums, beside nvcc's build of the
//          same op in the same form (nvcc_vec_kernel in cuobjdump -sass 17_copy_and_patch).
//          17_copy_and_patch --dump sin.cubin 'sin(x)': its call image, the slot's word patched
//          (cuobjdump -elf shows .nv.constant3), the makers writing x where the slot reads it.
// Check it. 17_copy_and_patch --check N, with no GPU: N random ops compiled, each image decoded and
//          run on the host against the op's steps. On a GPU,
//          17_copy_and_patch --fuzz N: N random ops of the language, each compiled or refused,
//          run in both forms at k = 1 and 3 (the vec form with a tail of three elements) and
//          compared bit for bit with its steps computed on the host (where
//          they differ, the decoded machine code says whether the instructions or their timing is
//          wrong; a call's value is the GPU's, from the call image's own cdl_functions kernel),
//          each launch under a time limit; and under compute-sanitizer --tool memcheck. The
//          program's own run sets sine and exp_sin_cos beside nvcc's vec kernels, bit for bit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strategies/lesson.cuh"

namespace stencil {

// The operations a step can be, each one instruction: a + c, a - c, c - a, a * c, min, max with a
// constant, a * c + b (a multiply fused into the add that follows it), a compared with a constant
// (1.0 where it holds, else 0.0: FSET.BF); then the first five's forms with a second register b and
// the comparisons of two registers; then mask (PRMT: 1.0 to all ones, 0.0 to zero) and sel (LOP3:
// a's bits pick b's, the others c's). A condition is three of them where nvcc writes FSETP and FSEL:
// no step reads or writes a predicate register, so the patch has none to give out or to prove free.
// The list, once: the enum, the names, and one stencil kernel each (cdl_op_<name>) come from it.
// clang-format off
#define CDL_STENCIL_OPS(X) \
  X(add) X(sub) X(rsub) X(mul) X(min) X(max) X(fmac) X(lt) X(le) X(gt) X(ge) X(eq) X(ne) \
  X(addr) X(subr) X(mulr) X(minr) X(maxr) X(ltr) X(ler) X(eqr) X(ner) \
  X(mask) X(sel)
// clang-format on
#define CDL_ENUMERATOR(o) o,
#define CDL_NAME(o) #o,
enum op : int { CDL_STENCIL_OPS(CDL_ENUMERATOR) count };
inline constexpr const char* names[count] = {CDL_STENCIL_OPS(CDL_NAME)};
__host__ __device__ constexpr bool has_constant(int o) { return o < addr; }
// The registers a step reads: a; b (a second value, fmac's addend, sel's if-true); c (sel's if-false).
__host__ __device__ constexpr int registers_read(int o) {
  return o == sel ? 3 : o == fmac || (o >= addr && o < mask) ? 2 : 1;
}

inline constexpr std::uint32_t marker_bits = 0x3f9e0001u;  // step s's constant: a float no code computes
inline constexpr int helper_marker = 2048;                 // sel's stencils: their masks' constants
inline constexpr int chains = 8;                           // values the region keeps apart: its registers
inline constexpr int region_sizes[] = {4, 8, 16, 32, 64};  // steps of the images an op can be written into
inline constexpr int learn_steps = 8;                      // steps of each operation's stencil
inline constexpr int pair_steps = 2 * count + 2;  // operation o's latency chain: add, o, 0, o, 1, ...
// a lane's steps in the vec images: the short sizes close, since each unused place is an instruction
inline constexpr int vec_region_sizes[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64};
inline constexpr int lanes = 4;           // the vec images' elements a thread
inline constexpr int lane_markers = 256;  // lane l's step s: marker l * 256 + s

// What each operation computes: on the host, for the emulation and the decoded machine code. A
// mask and a select work on the bits (a mask is a NaN's bits, copied, never computed with).
inline float evaluate(int o, float a, float b, float c, float constant) {
  const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
  const auto truth = [](bool t) { return t ? 1.0f : 0.0f; };
  switch (o) {
    case add: return a + constant;
    case sub: return a - constant;
    case rsub: return constant - a;
    case mul: return a * constant;
    case min: return std::fmin(a, constant);
    case max: return std::fmax(a, constant);
    case fmac: return std::fma(a, constant, b);
    case lt: return truth(a < constant);
    case le: return truth(a <= constant);
    case gt: return truth(a > constant);
    case ge: return truth(a >= constant);
    case eq: return truth(a == constant);
    case ne: return truth(a != constant);  // C's !=: true where either is NaN
    case addr: return a + b;
    case subr: return a - b;
    case mulr: return a * b;
    case minr: return std::fmin(a, b);
    case maxr: return std::fmax(a, b);
    case ltr: return truth(a < b);
    case ler: return truth(a <= b);
    case eqr: return truth(a == b);
    case ner: return truth(a != b);
    case mask: return std::bit_cast<float>(bits(a) >> 23 & 1 ? 0xffffffffu : 0u);
    case sel: return std::bit_cast<float>((bits(a) & bits(b)) | (~bits(a) & bits(c)));
  }
  return NAN;
}

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
  if constexpr (O == lt || O == ltr) return set_lt(a, w);
  if constexpr (O == le || O == ler) return set_le(a, w);
  if constexpr (O == gt) return set_gt(a, w);
  if constexpr (O == ge) return set_ge(a, w);
  if constexpr (O == eq || O == eqr) return set_eq(a, w);
  if constexpr (O == ne || O == ner) return set_neu(a, w);
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
    for (int l = 0; l < lanes; ++l) xj[l] = fmaf(float(j), lesson::delta, v[l]);
    body(xj, r);
    for (int l = 0; l < lanes; ++l) acc[l] += r[l];
  }
  if (i + lanes <= n)
    *reinterpret_cast<float4*>(y + i) = make_float4(acc[0], acc[1], acc[2], acc[3]);
  else
    for (int l = 0; l < lanes; ++l)
      if (i + l < n) y[i + l] = acc[l];
}

// The functions a call image's slots can run, each slot's chosen by a word of __constant__ memory
// that the patch sets in the image's copy (none stays for a word never patched).
#define CDL_SLOT_FUNCTIONS(X) X(sin, sinf) X(cos, cosf) X(exp, expf) X(sqrt, sqrtf)
#define CDL_FUNCTION_ENUMERATOR(name, f) fn_##name,
enum function : unsigned { no_function, CDL_SLOT_FUNCTIONS(CDL_FUNCTION_ENUMERATOR) };
inline constexpr int max_calls = 3;  // slots in the largest call image
struct call_shape {
  int chains, steps;  // a call image's chains (P), and its segments' steps (at least 2P - 1)
};
inline constexpr call_shape call_shapes[] = {{1, 1}, {1, 3}, {2, 3}, {3, 5}};
inline constexpr std::uint32_t slot_marker = 0x7eadbe00u;  // slot g's word before it is patched: + g
inline float call(unsigned f, float v) {  // the host's: not the GPU's to the bit (check() runs it)
#define CDL_HOST_FUNCTION(name, fn) \
  if (f == fn_##name) return ::fn(v);
  CDL_SLOT_FUNCTIONS(CDL_HOST_FUNCTION)
  return NAN;
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
    const float xj = x[i] + float(j) * lesson::delta;
    float r[chains];
    for (float& v : r) v = xj;
    region<P, S>(r, xj, op_of);
    acc += r[0];
  }
  y[i] = acc;
}

// Operation O on the chain's value: with the step's marker, or with a second register made for the
// step (x + marker: a new value each step, so that no chain of min(r, w) folds to one instruction);
// a select picks between the chain and that register by a mask made from x and its own marker.
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
    return apply<O>(a, x + c, 0.0f, c);
}
template <int O>
struct every {  // every step operation O (a mask's chain starts from x + marker 0: step 0 is found by it)
  template <int s>
  __device__ __forceinline__ float operator()(std::integral_constant<int, s>, float a, float x,
                                              float c) const {
    if constexpr (O == mask && s == 0)
      return with_marker<add>(a, x, c);
    else
      return with_marker<O>(a, x, c);
  }
};
template <int O>
struct pairs {  // step s: add, O, 0, O, 1, O, ...: every operation before O and after it
  template <int s>
  __device__ __forceinline__ float operator()(std::integral_constant<int, s>, float a, float x,
                                              float c) const {
    return with_marker < s == 0 ? add : s % 2 == 1 ? O : s / 2 - 1 > (a, x, c);
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
CDL_VEC_KERNEL(cdl_image_vec_1, 1, 1)
CDL_VEC_KERNEL(cdl_image_vec_2, 2, 2)
CDL_VEC_KERNEL(cdl_image_vec_3, 2, 3)
CDL_VEC_KERNEL(cdl_image_vec_4, 2, 4)
CDL_VEC_KERNEL(cdl_image_vec_5, 3, 5)
CDL_VEC_KERNEL(cdl_image_vec_6, 4, 6)
CDL_VEC_KERNEL(cdl_image_vec_8, 4, 8)
CDL_VEC_KERNEL(cdl_image_vec_12, 6, 12)
CDL_VEC_KERNEL(cdl_image_vec_16, chains, 16)
CDL_VEC_KERNEL(cdl_image_vec_32, chains, 32)
CDL_VEC_KERNEL(cdl_image_vec_64, chains, 64)
#elif defined(CDL_CALLS)
// The call images (a cubin for each count of calls, loaded only for an op that calls a function):
// the vec images' lanes, their steps in `calls` + 1 segments of S, and after each segment but the
// last a slot that applies one function to every lane's chain 0: a switch on the slot's word, each
// case nvcc's own inlined code. The switch stays inside the k loop (its word is in memory nvcc
// cannot see patched); chains 1.. live across the slots, their registers those a value of the op
// keeps across a call. Where ptxas still copies a step (into a case, or after a slot, made again
// from x), the learning refuses that image.
__constant__ unsigned slot_words[max_calls] = {slot_marker, slot_marker + 1, slot_marker + 2};
template <int g>
__device__ __forceinline__ void slot(float (&r)[lanes][chains]) {
  switch (slot_words[g]) {
#define CDL_SLOT_CASE(name, fn)                            \
  case fn_##name:                                          \
    for (int l = 0; l < lanes; ++l) r[l][0] = fn(r[l][0]); \
    break;
    CDL_SLOT_FUNCTIONS(CDL_SLOT_CASE)
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
template <int P, int S, int calls>
__device__ __forceinline__ void call_region(const float (&xj)[lanes], float (&out)[lanes]) {
  // With one slot, ptxas would rather compute chains 1.. again after it from x (which the loop
  // keeps) than keep their registers across the slot's code, and a value of the op could then live
  // across no register. A shuffle of x with itself is x, but ptxas does not compute a shuffle
  // twice, so chains that start from one keep their registers across the slot.
  float r[lanes][chains];
  for (int l = 0; l < lanes; ++l)
    for (int c = 0; c < chains; ++c) r[l][c] = calls == 1 && c > 0 ? __shfl_xor_sync(~0u, xj[l], 0) : xj[l];
  [&]<int... g>(std::integer_sequence<int, g...>) {
    ((segment<P, g * S>(r, xj, std::make_integer_sequence<int, S>{}), slot<g>(r)), ...);
  }
  (std::make_integer_sequence<int, calls>{});
  segment<P, calls * S>(r, xj, std::make_integer_sequence<int, S>{});
  for (int l = 0; l < lanes; ++l) out[l] = r[l][0];
}
#define CDL_CALL_KERNEL(calls, P, S)                                                                         \
  extern "C" __global__ void cdl_call_vec_##calls##_##P##_##S(const float* __restrict__ x,                   \
                                                              float* __restrict__ y, std::size_t n, int k) { \
    map_vec(x, y, n, k,                                                                                      \
            [](const float(&xj)[lanes], float(&out)[lanes]) { call_region<P, S, calls>(xj, out); });         \
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
// The images with CDL_CALLS slots (a cubin for each count, each loaded alone), one of each shape in
// call_shapes.
#define CDL_CALL_SHAPES(calls) \
  CDL_CALL_KERNEL(calls, 1, 1) \
  CDL_CALL_KERNEL(calls, 1, 3) CDL_CALL_KERNEL(calls, 2, 3) CDL_CALL_KERNEL(calls, 3, 5)
CDL_CALL_SHAPES(CDL_CALLS)
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
}  // namespace stencil

#if !defined(CDL_STENCILS) && !defined(CDL_IMAGES)
#include <array>
#include <bit>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "common/expression.hpp"

namespace patch {

using bytes = std::vector<unsigned char>;
using insn = std::array<unsigned char, 16>;

// --- The cubin: an ELF file whose section .text.<kernel> is that kernel's machine code ---------------

struct kernel_code {
  std::size_t offset = 0, count = 0;  // where its instructions start in the file, how many
};
struct section {
  std::size_t offset = 0, size = 0;  // in the file, in bytes
};
std::map<std::string, section> sections_of(const bytes& elf) {
  auto u16 = [&](std::size_t at) { return std::uint16_t(elf.at(at) | elf.at(at + 1) << 8); };
  auto u32 = [&](std::size_t at) { return std::uint32_t(u16(at) | std::uint32_t(u16(at + 2)) << 16); };
  auto u64 = [&](std::size_t at) { return std::uint64_t(u32(at)) | std::uint64_t(u32(at + 4)) << 32; };
  if (elf.size() < 64 || elf[0] != 0x7f || elf[1] != 'E' || elf[4] != 2)
    throw std::runtime_error("not a 64-bit ELF file: not a cubin");
  const std::uint64_t shoff = u64(0x28);
  const unsigned shentsize = u16(0x3a), shnum = u16(0x3c), names = u16(0x3e);
  const std::uint64_t strings = u64(shoff + names * shentsize + 0x18);
  std::map<std::string, section> out;
  for (unsigned s = 0; s < shnum; ++s) {
    const std::size_t h = shoff + s * shentsize;
    out[std::string(reinterpret_cast<const char*>(&elf.at(strings + u32(h))))] = {std::size_t(u64(h + 0x18)),
                                                                                  std::size_t(u64(h + 0x20))};
  }
  return out;
}
std::map<std::string, kernel_code> kernels_of(const bytes& elf) {
  std::map<std::string, kernel_code> out;
  for (const auto& [name, where] : sections_of(elf))
    if (name.rfind(".text.", 0) == 0) out[name.substr(6)] = {where.offset, where.size / 16};
  return out;
}

// --- One instruction's fields: register numbers at bytes 2 (written), 3 and 4 (read) or an immediate
// at 4-7; the scheduling bits in 13-15 (CuAssembler's description of Volta to Hopper); the learning
// below checks each against the compiler's output rather than trusting it. --------------------------

constexpr int dest_field = 2;
std::uint32_t immediate(const insn& i) { return i[4] | i[5] << 8 | i[6] << 16 | std::uint32_t(i[7]) << 24; }
void set_immediate(insn& i, std::uint32_t v) {
  for (int b = 0; b < 4; ++b) i[4 + b] = (unsigned char)(v >> 8 * b);
}
int stall(const unsigned char* i) { return (i[13] >> 1) & 15; }  // cycles before the next issues
int stall(const insn& i) { return stall(i.data()); }
void set_stall(unsigned char* i, int cycles) {
  i[13] = (unsigned char)((i[13] & ~0x1e) | (std::min(cycles, 15) << 1));
}
void clear_reuse(unsigned char* i) {
  i[15] &= (unsigned char)~0x3c;
}  // no operand kept for the next instruction
// The same instruction of operation o but for its registers (and its constant): bytes 2 and 3, then
// 4-7 (a constant) or 4 (a second register), and 8 (fmac's addend, sel's third register).
bool operand_field(int o, int f) {
  if (f == dest_field || f == 3) return true;
  if (f >= 4 && f <= 7) return stencil::has_constant(o) || (f == 4 && stencil::registers_read(o) >= 2);
  return f == 8 && (o == stencil::fmac || o == stencil::sel);
}
bool same_but_operands(const insn& a, const insn& b, int o) {
  for (int f = 0; f < 13; ++f)
    if (a[f] != b[f] && !operand_field(o, f)) return false;
  return true;
}

struct failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define LEARN_CHECK(cond, ...) \
  if (!(cond)) throw failed("the stencils do not read as expected: " + std::string(__VA_ARGS__))

// --- What the program learns from the cubin -----------------------------------------------------------

struct form {                 // an operation's instruction
  insn code{};                // as the compiler wrote it
  int a = 3, b = -1, c = -1;  // the fields of the registers it reads (stencil::registers_read)
  bool negated = false;       // the immediate is -c (a - c is written a + (-c))
};
struct image {  // an image an op is written into
  std::string kernel;
  std::vector<std::size_t> steps;  // file offsets of its steps' instructions, in the order they run
  int x = -1;                      // the register holding x + j * delta on entry
  int result = -1;                 // where the sum after the region reads the op's value
  std::vector<int> pool;           // every register the region may write
};
// A vec image (four elements a thread): the compiler interleaved the lanes' steps and gave them
// registers across lanes, so the patch keeps only the places. Inside its window (the first
// instruction making a lane's x to the last step) the places of the steps and of x's makers take
// the four makers first, then the lanes' steps in any interleaving; each lane gets its own
// registers from those the window's steps and makers wrote, so that the lanes never meet.
struct vec_image {
  std::string kernel;
  int steps = 0;                           // a lane's region
  std::size_t last = 0;                    // the window's last instruction's offset
  std::vector<std::size_t> places;         // the offsets of x's makers and the steps, in order
  insn maker[stencil::lanes]{};            // the instruction making lane l's x: j * delta + x[i + l]
  std::size_t deadline[stencil::lanes]{};  // lane l's result is read here (the window's end: after it)
  image lane[stencil::lanes];              // lane l's registers: x, result and pool, as a scalar image's
};
// A call image (an op that calls functions): the vec image's lanes, their steps in windows that
// the slots part (window g runs before slot g, window g + 1 after it), each lane's registers
// those nvcc gave its chains there: a value that lives across a slot must be in one nvcc kept
// across it (a chain's), since the slot's code may write any other.
struct call_image {
  std::string kernel;
  int calls = 0;                           // its slots
  std::vector<std::size_t> places;         // the offsets of x's makers and the steps, in order
  std::vector<int> window;                 // each place's window; -1 between two (a no-op)
  std::vector<std::size_t> window_last;    // window g's last place: what slot g reads is ready after it
  insn maker[stencil::lanes]{};            // as a vec image's
  std::size_t deadline[stencil::lanes]{};  // the last window: lane l's result is read here
  // window w: lane l's steps from here (after a slot, nvcc's own first reader of its result), and
  // before here
  std::size_t from[stencil::max_calls + 1][stencil::lanes]{}, until[stencil::max_calls + 1][stencil::lanes]{};
  std::size_t last = 0;  // the last place
  struct lane_registers {
    std::vector<int> across[stencil::max_calls];  // kept by slot g: a value of the op that lives across it
    int arg[stencil::max_calls]{}, res[stencil::max_calls]{};  // what slot g reads, and writes
    int result = -1;                                           // where the sum reads the op's value
  } lane[stencil::lanes];
};
// The call images' part of the stencils, read and learnt the first time an op calls a function:
// most ops call none, and a new process's first op need not wait for three more cubins.
struct call_stencils {
  bytes cubins[stencil::max_calls + 1];              // one for each count of calls: copied and patched
  std::size_t slot_words[stencil::max_calls + 1]{};  // where in each the slots' words are
  std::vector<call_image> images;
  std::string refusals;   // why a call image was not learnt
  std::string unread;     // why the files could not be read: every op that calls a function is refused
  std::once_flag learnt;  // calls_of() learns them once a process
};
struct stencils {
  bytes cubin;   // the images' file: each op's image is a copy of it, patched
  int arch = 0;  // the architecture they were compiled for: 90 for sm_90
  std::vector<image> images;
  std::vector<vec_image> vec_images;
  std::string prefix;  // where the cubins are: calls_of() reads the call images' from there
  std::shared_ptr<call_stencils> calls = std::make_shared<call_stencils>();
  form forms[stencil::count];
  int latency[stencil::count][stencil::count]{};  // cycles from one's result to the other's read
  int latency_margin = 0;                         // the largest latency less the least
};

insn at(const bytes& f, std::size_t offset) {
  insn i;
  std::copy_n(f.begin() + std::ptrdiff_t(offset), 16, i.begin());
  return i;
}
kernel_code find(const std::map<std::string, kernel_code>& ks, const std::string& name) {
  LEARN_CHECK(ks.count(name), name + " is not in the cubin");
  return ks.at(name);
}

int marker_of(const insn& i, bool& negated) {  // step s's marker as it appears, or -1
  const std::uint32_t imm = immediate(i), s = (imm & 0x7fffffffu) - stencil::marker_bits;
  negated = imm >> 31;
  return s < 4096 ? int(s) : -1;
}

// The register step s's marker went to: for an operation with a second register, x + marker s.
int marked_register(const bytes& cubin, const kernel_code& k, int s, const std::string& name) {
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const insn i = at(cubin, k.offset + 16 * n);
    if (marker_of(i, negated) == s) return i[dest_field];
  }
  throw failed("the stencils do not read as expected: " + name + ": no marker " + std::to_string(s));
}

// The register holding x + j * delta: what step 0 reads in field 3 (step 0 is x + marker 0 in an
// image and before an operation with a second register, op(x, marker 0) otherwise).
int x_register(const bytes& cubin, const kernel_code& k, const std::string& name) {
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const insn i = at(cubin, k.offset + 16 * n);
    if (marker_of(i, negated) == 0) return i[3];
  }
  throw failed("the stencils do not read as expected: " + name + ": no step 0");
}

// One chain's steps (P = 1), found from x: each step reads the one before, an operation with a
// constant in field 3 and found by its marker; one with a second register reads the one before
// and x + marker s (a select: in two of fields 3, 4 and 8); a mask reads it in field 3. Returns
// their instruction numbers.
std::vector<std::size_t> trace(const bytes& cubin, const kernel_code& k, const std::string& name,
                               const std::vector<int>& ops, const stencils* known) {
  std::vector<std::size_t> at_step;
  int current = x_register(cubin, k, name);
  std::size_t n = 0;
  for (std::size_t s = 0; s < ops.size(); ++s) {
    const int o = ops[s];
    const bool constant = stencil::has_constant(o), second = !constant && o != stencil::mask;
    const int w = second ? marked_register(cubin, k, int(s), name) : -1;
    auto is_step = [&](const insn& i) {
      bool negated;
      if (constant) return marker_of(i, negated) == int(s) && i[3] == current;
      if (o == stencil::mask)
        return i[3] == current && (!known || same_but_operands(i, known->forms[o].code, o));
      const int fields = o == stencil::sel ? 3 : 2, f[] = {3, 4, 8};
      for (int p = 0; p < fields; ++p)
        for (int q = 0; q < fields; ++q)
          if (p != q && i[f[p]] == current && i[f[q]] == w) return true;
      return false;
    };
    for (;; ++n) {
      LEARN_CHECK(n < k.count, name + ": step " + std::to_string(s) + " not found");
      if (is_step(at(cubin, k.offset + 16 * n))) break;
    }
    const insn i = at(cubin, k.offset + 16 * n);
    if (known)
      LEARN_CHECK(same_but_operands(i, known->forms[ops[s]].code, ops[s]),
                  name + ": step " + std::to_string(s) + " is not " + stencil::names[ops[s]]);
    at_step.push_back(n);
    current = i[dest_field];
    ++n;
  }
  return at_step;
}

// An operation's form, from its stencil's chain: the instruction, and which field holds what.
form learn_form(const bytes& cubin, const std::map<std::string, kernel_code>& ks, int o) {
  const std::string name = std::string("cdl_op_") + stencil::names[o];
  const kernel_code k = find(ks, name);
  std::vector<int> ops(stencil::learn_steps, o);
  if (o == stencil::mask) ops[0] = stencil::add;  // its chain starts from x + marker 0
  const std::vector<std::size_t> steps = trace(cubin, k, name, ops, nullptr);
  auto step = [&](std::size_t s) { return at(cubin, k.offset + 16 * steps[s]); };
  form f;
  f.code = step(1);
  if (stencil::has_constant(o)) {
    bool negated;
    marker_of(f.code, negated);
    f.negated = negated;
    if (o == stencil::fmac) f.b = 8;  // a * c + x: the addend's register, checked below
  } else if (o == stencil::sel) {     // the mask, step 0's value (if true) and x + marker 1
    for (int field : {3, 4, 8})
      if (f.code[field] == step(0)[dest_field])
        f.b = field;
      else if (f.code[field] == marked_register(cubin, k, 1, name))
        f.c = field;
      else
        f.a = field;
  } else if (o != stencil::mask) {  // step 1 reads step 0's value and x + marker 1
    f.b = f.code[3] == marked_register(cubin, k, 1, name) ? 3 : 4, f.a = 7 - f.b;
  }
  const bool ordered = o == stencil::subr || o == stencil::ltr || o == stencil::ler || o == stencil::sel;
  for (std::size_t s = 1; s < steps.size(); ++s) {
    const insn i = step(s);
    LEARN_CHECK(same_but_operands(i, f.code, o), name + ": its steps are different instructions");
    bool negated;
    LEARN_CHECK(!stencil::has_constant(o) || (marker_of(i, negated), negated == f.negated),
                name + ": its constant's sign changes");
    // a - b keeps b in its field (a < b, a select its arms); where the operation commutes the
    // compiler may swap them
    LEARN_CHECK(!ordered || (i[o == stencil::sel ? f.c : f.b] == marked_register(cubin, k, int(s), name) &&
                             (o != stencil::sel || i[f.b] == step(s - 1)[dest_field])),
                name + ": its operands' fields change");
    LEARN_CHECK(o != stencil::fmac || i[f.b] == x_register(cubin, k, name), name + ": the addend is not x");
  }
  LEARN_CHECK(o != stencil::sel || (f.b >= 0 && f.c >= 0 && f.a != f.b && f.a != f.c),
              name + ": its three registers are not in three fields");
  return f;
}

// Latencies: in the chain a, b, a, b, ... for every pair, each step waits for the one before, so
// the cycles the compiler leaves between them are what the first's result takes to reach the second.
void learn_latencies(stencils& st, const bytes& cubin, const std::map<std::string, kernel_code>& ks) {
  for (auto& row : st.latency) std::fill(std::begin(row), std::end(row), 0);
  for (int o = 0; o < stencil::count; ++o) {
    std::vector<int> ops;
    for (int s = 0; s < stencil::pair_steps; ++s)
      ops.push_back(s == 0 ? stencil::add : s % 2 ? o : s / 2 - 1);
    const std::string name = std::string("cdl_pairs_") + stencil::names[o];
    const kernel_code k = find(ks, name);
    const std::vector<std::size_t> steps = trace(cubin, k, name, ops, &st);
    for (std::size_t s = 0; s + 1 < steps.size(); ++s) {
      int cycles = 0;
      for (std::size_t n = steps[s]; n < steps[s + 1]; ++n) cycles += stall(at(cubin, k.offset + 16 * n));
      int& l = st.latency[ops[s]][ops[s + 1]];
      l = l == 0 ? cycles : std::min(l, cycles);
    }
  }
  int low = 99, high = 0;
  for (auto& row : st.latency)
    for (int l : row) {
      LEARN_CHECK(l > 0, "a pair of operations without a latency");
      low = std::min(low, l), high = std::max(high, l);
    }
  st.latency_margin = high - low;
}

// An image: its steps by their markers, in the order the compiler placed them; the registers they
// write are the pool. Nothing else between its first and last step may write one of them.
image learn_image(const bytes& cubin, const std::map<std::string, kernel_code>& ks, int steps) {
  image im;
  im.kernel = "cdl_image_" + std::to_string(steps);
  const kernel_code k = find(ks, im.kernel);
  im.x = x_register(cubin, k, im.kernel);
  std::vector<int> marker(k.count, -1), seen(steps, 0);
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const int s = marker_of(at(cubin, k.offset + 16 * n), negated);
    if (s >= 0 && s < steps && !negated) marker[n] = s, ++seen[s], im.steps.push_back(k.offset + 16 * n);
  }
  for (int s = 0; s < steps; ++s)
    LEARN_CHECK(seen[s] == 1, im.kernel + ": step " + std::to_string(s) + " is not one instruction");
  im.pool.push_back(im.x);
  for (std::size_t offset : im.steps) {
    const int r = at(cubin, offset)[dest_field];
    if (std::find(im.pool.begin(), im.pool.end(), r) == im.pool.end()) im.pool.push_back(r);
  }
  const std::size_t first = (im.steps.front() - k.offset) / 16, last = (im.steps.back() - k.offset) / 16;
  LEARN_CHECK(at(cubin, im.steps.front())[3] == im.x, im.kernel + ": its first step does not read x");
  LEARN_CHECK(marker[last] == steps - 1, im.kernel + ": its last step is not the last fold");
  for (std::size_t n = first; n <= last; ++n)
    if (marker[n] < 0)
      LEARN_CHECK(std::find(im.pool.begin(), im.pool.end(), at(cubin, k.offset + 16 * n)[dest_field]) ==
                      im.pool.end(),
                  im.kernel + ": instruction " + std::to_string(n) +
                      " among the steps writes one of their registers");
  im.result = at(cubin, im.steps.back())[dest_field];
  return im;
}

// Lane l's x maker (j * delta + its element, into the register its step 0 reads): the nearest
// instruction before step 0 that writes that register, checked to be lane 0's but for registers.
// Returns its offset; `makers[l]` is the instruction.
std::size_t find_maker(const bytes& cubin, const kernel_code& k, std::size_t step0,
                       insn (&makers)[stencil::lanes], int l, const std::string& kernel) {
  const int x = at(cubin, k.offset + 16 * step0)[3];
  std::size_t n = step0;
  while (n > 0 && at(cubin, k.offset + 16 * --n)[dest_field] != x) {
  }
  const insn maker = at(cubin, k.offset + 16 * n), first = l == 0 ? maker : makers[0];
  LEARN_CHECK(immediate(maker) == std::bit_cast<std::uint32_t>(lesson::delta) &&
                  std::equal(maker.begin(), maker.begin() + 2, first.begin()) && maker[3] == first[3],
              kernel + ": lane " + std::to_string(l) + "'s x is not made by j * delta + x as lane 0's is");
  makers[l] = maker;
  return k.offset + 16 * n;
}

// A vec image's window, its places and each lane's registers, found by the lanes' markers.
vec_image learn_vec_image(const bytes& cubin, const std::map<std::string, kernel_code>& ks, int steps) {
  constexpr int lanes = stencil::lanes;
  vec_image im;
  im.kernel = "cdl_image_vec_" + std::to_string(steps), im.steps = steps;
  const kernel_code k = find(ks, im.kernel);
  auto insn_at = [&](std::size_t n) { return at(cubin, k.offset + 16 * n); };
  std::vector<int> seen(std::size_t(lanes * steps), 0);
  std::size_t step0[lanes]{}, final_step[lanes]{}, makers[lanes]{};
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const int m = marker_of(insn_at(n), negated), l = m / stencil::lane_markers,
              s = m % stencil::lane_markers;
    if (m < 0 || negated || l >= lanes || s >= steps) continue;
    ++seen[std::size_t(l * steps + s)], im.places.push_back(k.offset + 16 * n);
    if (s == 0) step0[l] = n;
    if (s == steps - 1) final_step[l] = n;
  }
  for (int v : seen) LEARN_CHECK(v == 1, im.kernel + ": a lane's step is not one instruction");
  std::set<int> written, kept;  // the window's registers; those the lanes may not have
  int j = -1;
  for (int l = 0; l < lanes; ++l) {
    im.lane[l].x = insn_at(step0[l])[3];
    im.lane[l].result = insn_at(final_step[l])[dest_field];
    makers[l] = find_maker(cubin, k, step0[l], im.maker, l, im.kernel);
    j = im.maker[l][3];
    kept.insert(im.maker[l][8]);  // the element itself, live through the loop
  }
  for (std::size_t offset : im.places) written.insert(cubin[offset + dest_field]);
  for (std::size_t offset : makers) written.insert(cubin[offset + dest_field]);
  im.places.insert(im.places.end(), std::begin(makers), std::end(makers));
  std::sort(im.places.begin(), im.places.end());
  const std::size_t first = im.places.front();
  im.last = im.places.back();
  std::set<int> results;
  for (const image& lane : im.lane) results.insert(lane.result);
  LEARN_CHECK(results.size() == lanes, im.kernel + ": two lanes' results share a register");
  for (auto& d : im.deadline) d = im.last + 16;
  for (std::size_t n = 0; n < k.count; ++n) {
    const std::size_t offset = k.offset + 16 * n;
    if (std::find(im.places.begin(), im.places.end(), offset) != im.places.end()) continue;
    const insn i = insn_at(n);
    const bool inside = offset > first && offset < im.last;
    for (int field : {3, 4, 8}) {  // where a register an instruction reads may be
      for (int l = 0; l < lanes; ++l)
        if (inside && i[field] == im.lane[l].result) im.deadline[l] = std::min(im.deadline[l], offset);
      if (!results.count(i[field])) kept.insert(i[field]);
      LEARN_CHECK(
          !inside || results.count(i[field]) || !written.count(i[field]),
          im.kernel + ": instruction " + std::to_string(n) + " in the window reads a step's register");
    }
    if (inside) kept.insert(i[dest_field]);
  }
  // Each lane: its result's register, and every `lanes`-th of the rest; float(j) goes to the last
  // lane, whose x is made last (every maker reads it), as that lane's x.
  const int last_lane = lanes - 1;
  std::vector<int> rest;
  for (int r : written)
    if (!kept.count(r) && !results.count(r) && r != j) rest.push_back(r);
  for (int l = 0; l < lanes; ++l) {
    image& lane = im.lane[l];
    lane.kernel = im.kernel, lane.pool.clear();
    if (l == last_lane && written.count(j) && !kept.count(j) && !results.count(j))
      lane.pool.push_back(j);  // (where j is the lane's result register, it joins as that, below)
    for (std::size_t r = std::size_t(l); r < rest.size(); r += lanes) lane.pool.push_back(rest[r]);
    // x in the result's register where the lane has no other (an op of one value: x * x)
    lane.x = lane.pool.empty() ? lane.result : lane.pool.front();
    lane.pool.push_back(lane.result);
  }
  // A register below the highest the window writes that no instruction of the kernel names (a hole
  // in nvcc's allocation), nor a 64- or 128-bit operand could reach from an aligned register below
  // it that one names: nothing reads or writes it, so a lane may hold a value there. Each goes to
  // the lane with the fewest registers, before its result's.
  std::set<int> named;
  for (std::size_t n = 0; n < k.count; ++n)
    for (int field : {dest_field, 3, 4, 8}) named.insert(insn_at(n)[field]);
  for (int r = 0; r < *written.rbegin(); ++r) {
    bool reached = named.count(r) > 0;
    for (int base = std::max(r - 3, 0); base < r && !reached; ++base)
      reached = named.count(base) && (base % 4 == 0 || (base % 2 == 0 && base == r - 1));
    if (reached) continue;
    image& fewest =
        *std::min_element(std::begin(im.lane), std::end(im.lane),
                          [](const image& a, const image& b) { return a.pool.size() < b.pool.size(); });
    fewest.pool.insert(fewest.pool.end() - 1, r);
    if (fewest.x == fewest.result) fewest.x = r;
  }
  return im;
}

// An instruction's operation, without its predicate and operands: the low 12 bits.
int opcode(const insn& i) { return i[0] | (i[1] & 15) << 8; }

// What the call images' learning must know of control flow, learnt from the cubin: the branch's
// operation (each kernel ends on a branch to itself, after its last exit: the warp never runs on
// into whatever follows, then the padding, one instruction repeated), and the operations whose
// byte 2 names no register they write: the branch, and those just before a branch guarded by a
// predicate (the compares that make it).
struct control {
  int branch = -1;
  std::set<int> no_register;
};
control learn_control(const bytes& cubin, const std::map<std::string, kernel_code>& ks) {
  std::map<int, int> votes;
  for (const auto& [name, k] : ks) {
    std::size_t n = k.count;
    const insn padding = at(cubin, k.offset + 16 * (n - 1));
    while (n > 1 && at(cubin, k.offset + 16 * (n - 1)) == padding) --n;
    if (n < k.count) ++votes[opcode(at(cubin, k.offset + 16 * (n - 1)))];
  }
  LEARN_CHECK(!votes.empty(), "no kernel of the call images ends as expected");
  control c;
  c.branch = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) {
               return a.second < b.second;
             })->first;
  c.no_register.insert(c.branch);
  for (const auto& [name, k] : ks)
    for (std::size_t n = 1; n < k.count; ++n) {
      const insn i = at(cubin, k.offset + 16 * n);
      if (opcode(i) == c.branch && (i[1] >> 4 & 7) != 7)  // guarded: @P0 BRA
        c.no_register.insert(opcode(at(cubin, k.offset + 16 * (n - 1))));
    }
  return c;
}

// A call image's windows, places and registers, found by the lanes' markers: lane l's step s
// (marker l * 256 + s) is segment s / S's (S = 2P - 1): a step of each of the P chains, then
// chains 1.. folded into chain 0, so that every step of a segment comes before its slot. Slot g
// reads each lane's chain 0 as segment g's last fold left it, and writes what segment g + 1's
// first step reads; window g ends at the slot's first branch after the last of the first, and
// window g + 1 starts at the first of the second (the places between are no-ops). A chain's
// register on both sides of every slot is the lane's to keep values in across a call.
call_image learn_call_image(const bytes& cubin, const std::map<std::string, kernel_code>& ks,
                            const control& flow, int calls, stencil::call_shape shape) {
  constexpr int lanes = stencil::lanes;
  const int P = shape.chains, S = shape.steps, total = S * (calls + 1);
  call_image im;
  im.kernel = "cdl_call_vec_" + std::to_string(calls) + "_" + std::to_string(P) + "_" + std::to_string(S);
  im.calls = calls;
  const kernel_code k = find(ks, im.kernel);
  auto insn_at = [&](std::size_t offset) { return at(cubin, offset); };
  std::vector<std::size_t> pos(std::size_t(lanes * total), 0);  // lane l's step s's offset
  std::vector<int> seen(pos.size(), 0);
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const std::size_t offset = k.offset + 16 * n;
    const int m = marker_of(insn_at(offset), negated), l = m / stencil::lane_markers,
              s = m % stencil::lane_markers;
    if (m < 0 || negated || l >= lanes || s >= total) continue;
    ++seen[std::size_t(l * total + s)], pos[std::size_t(l * total + s)] = offset, im.places.push_back(offset);
  }
  for (int v : seen) LEARN_CHECK(v == 1, im.kernel + ": a lane's step is not one instruction");
  auto at_step = [&](int l, int s) { return pos[std::size_t(l * total + s)]; };
  std::size_t makers[lanes]{};
  for (int l = 0; l < lanes; ++l) {
    auto& r = im.lane[l];
    makers[l] = find_maker(cubin, k, (at_step(l, 0) - k.offset) / 16, im.maker, l, im.kernel);
    for (int g = 0; g < calls; ++g) {
      r.arg[g] = insn_at(at_step(l, g * S + S - 1))[dest_field];
      r.res[g] = insn_at(at_step(l, (g + 1) * S))[3];
      im.from[g + 1][l] = at_step(l, (g + 1) * S);
    }
    r.result = insn_at(at_step(l, total - 1))[dest_field];
  }
  // Where nvcc makes x again after a slot (for a step it moved past it) is a place too: only the
  // moved steps read it.
  for (std::size_t n = 0; n < k.count; ++n) {
    const std::size_t offset = k.offset + 16 * n;
    const insn i = insn_at(offset);
    if (offset > im.places.front() &&
        std::find(std::begin(makers), std::end(makers), offset) == std::end(makers) &&
        immediate(i) == std::bit_cast<std::uint32_t>(lesson::delta) &&
        std::equal(i.begin(), i.begin() + 2, im.maker[0].begin()))
      im.places.push_back(offset);
  }
  im.places.insert(im.places.end(), std::begin(makers), std::end(makers));
  std::sort(im.places.begin(), im.places.end());
  im.last = im.places.back();
  for (int l = 0; l < lanes; ++l)
    LEARN_CHECK(
        std::find(im.places.begin(), im.places.begin() + lanes, makers[l]) != im.places.begin() + lanes,
        im.kernel + ": x's makers are not its first places");
  // The windows, by address
  std::vector<std::size_t> first(std::size_t(calls) + 1, im.places.front()), last(first.size(), im.last);
  for (int g = 0; g < calls; ++g) {
    last[std::size_t(g)] = 0, first[std::size_t(g) + 1] = ~std::size_t(0);
    for (int l = 0; l < lanes; ++l) {
      last[std::size_t(g)] = std::max(last[std::size_t(g)], at_step(l, g * S + S - 1));
      first[std::size_t(g) + 1] = std::min(first[std::size_t(g) + 1], at_step(l, (g + 1) * S));
    }
    // the places after the last argument's up to the slot's first branch are the window's too
    std::size_t jump = last[std::size_t(g)];
    while (jump < first[std::size_t(g) + 1] && opcode(insn_at(jump)) != flow.branch) jump += 16;
    for (std::size_t offset : im.places)
      if (offset > last[std::size_t(g)] && offset < jump) last[std::size_t(g)] = offset;
    LEARN_CHECK(jump < first[std::size_t(g) + 1] && first[std::size_t(g)] <= last[std::size_t(g)],
                im.kernel + ": slot " + std::to_string(g) + " has no branch between its windows");
    im.window_last.push_back(last[std::size_t(g)]);
  }
  for (std::size_t offset : im.places) {
    int w = -1;
    for (std::size_t g = 0; g < first.size(); ++g)
      if (offset >= first[g] && offset <= last[g]) w = int(g);
    im.window.push_back(w);
  }
  // Chain c's register is kept across slot g where the chain's step before the slot writes it and
  // its step after reads it; it holds the chain's value from the one to the other (and to the
  // fold before the next slot), so nvcc keeps nothing else there meanwhile.
  std::map<int, std::pair<std::size_t, std::size_t>> chain_life;  // from its write to its last read
  const int normal = S - (P - 1);  // a segment's steps before its folds; chain c's fold is step S - P + c
  for (int l = 0; l < lanes; ++l) {
    auto& r = im.lane[l];
    for (int c = 1; c < P; ++c)
      for (int g = 0; g < calls; ++g) {
        const std::size_t before = at_step(l, g * S + c + (normal - 1 - c) / P * P),
                          after = at_step(l, (g + 1) * S + c);
        const int kept = insn_at(before)[dest_field];
        if (before > last[std::size_t(g)] || after < first[std::size_t(g) + 1] || insn_at(after)[3] != kept)
          continue;
        std::vector<int> chain_steps;  // chain c's in the segment after: its steps, then its fold
        for (int s = c; s < normal; s += P) chain_steps.push_back(s);
        chain_steps.push_back(S - P + c);
        std::size_t read = after;  // the chain's last read of it after the slot
        for (int s : chain_steps)
          if (insn_at(at_step(l, (g + 1) * S + s))[3] == kept)
            read = std::max(read, at_step(l, (g + 1) * S + s));
        r.across[g].push_back(kept);
        auto& life = chain_life.try_emplace(kept, before, read).first->second;
        life = {std::min(life.first, before), std::max(life.second, read)};
      }
  }
  // Before and after, what the makers read (j, the elements) and what an instruction in a window
  // reads or writes may not be a lane's. Only the sums read the results.
  auto drop = [&](int reg) {
    for (auto& r : im.lane)
      for (auto& kept : r.across) std::erase(kept, reg);
  };
  for (const insn& m : im.maker) drop(m[3]), drop(m[8]);
  for (auto& d : im.deadline) d = im.last + 16;
  for (auto& w : im.until) std::fill(std::begin(w), std::end(w), im.last + 16);
  // each lane's and window's register it makes: nvcc's last write to it before its own step, and
  // nvcc's last read of it there
  std::vector<std::pair<std::size_t, std::size_t>> unread(std::size_t(lanes * (calls + 1)), {0, 0});
  for (std::size_t n = 0; n < k.count; ++n) {
    const std::size_t offset = k.offset + 16 * n;
    if (std::binary_search(im.places.begin(), im.places.end(), offset)) continue;
    const insn i = insn_at(offset);
    int inside_window = -1;
    for (std::size_t g = 0; g < first.size(); ++g)
      if (offset > first[g] && offset < last[g]) inside_window = int(g);
    const bool inside = inside_window >= 0;
    const int written = flow.no_register.count(opcode(i)) ? -1 : i[dest_field];
    for (int field : {dest_field, 3, 4, 8})
      if (const auto life = chain_life.find(i[field]);
          inside && life != chain_life.end() && (offset < life->second.first || offset > life->second.second))
        drop(i[field]);
    // A register a window's steps make (a slot's argument, the result) may hold something else of
    // nvcc's before nvcc's own step makes it there (the loop's bound, loaded after the slot and
    // compared before the sum): the lane's steps make it after every instruction that names it
    // (reads it, or writes it: byte 2 may also be a compare's predicate) between the slot before
    // and that step, and after it only the sums read it. The slot result the steps read: nvcc may
    // write its register again after its own first read, and the steps read it before that.
    for (int l = 0; l < lanes; ++l) {
      const auto& r = im.lane[l];
      for (int w = 0; w <= calls; ++w) {
        const int made = w < calls ? r.arg[w] : r.result;
        const std::size_t own = at_step(l, w < calls ? w * S + S - 1 : total - 1),
                          after = w > 0 ? im.window_last[std::size_t(w - 1)] : im.places.front();
        for (int field : {dest_field, 3, 4, 8}) {
          if (i[field] != made || (field == dest_field && written < 0)) continue;
          if (offset > after && offset < own) {
            im.from[w][l] = std::max(im.from[w][l], offset + 16);
            // a write's last reader of nvcc's waits for it
            auto& [wrote, read] = unread[std::size_t(l * (calls + 1) + w)];
            if (field == dest_field)
              wrote = std::max(wrote, offset);
            else
              read = std::max(read, offset);
          }
          if (w == calls && field != dest_field && offset > own && inside)
            im.deadline[l] = std::min(im.deadline[l], offset);
        }
      }
      if (inside && inside_window > 0 && r.res[inside_window - 1] == written)
        im.until[inside_window][l] = std::min(im.until[inside_window][l], offset);
    }
  }
  for (int l = 0; l < lanes; ++l) im.until[calls][l] = std::min(im.until[calls][l], im.deadline[l]);
  // Where nvcc writes such a register and only its own step (a place, the patch's now) reads it,
  // nothing waits for that write, which may land late (a load, a shuffle): the image is not used.
  for (const auto& [wrote, read] : unread)
    LEARN_CHECK(wrote == 0 || read > wrote,
                im.kernel + ": nvcc writes a register the patch makes, and nothing of its own waits for it");
  return im;
}

// Refuses stencils that are not this GPU's architecture's.
void require_this_gpu(const stencils& st) {
  int device = 0, major = 0, minor = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major * 10 + minor != st.arch)
    throw std::runtime_error("the stencils are sm_" + std::to_string(st.arch) + "'s and this GPU is sm_" +
                             std::to_string(major * 10 + minor) + "'s: build them for it");
}

bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot read " + path + " (the first five Build. lines write them)");
  bytes file(std::size_t(in.tellg()));
  in.seekg(0).read(reinterpret_cast<char*>(file.data()), std::streamsize(file.size()));
  return file;
}

// The stencils learnt from the cubins whose paths begin with `prefix`, stencils.cubin and
// images.cubin (calls_of() learns the call images, calls_N.cubin for N calls, when an op first
// needs them); with `for_this_gpu`, refused unless they are this GPU's architecture's (without it,
// for the host-only check, which runs no kernel).
stencils learn(const std::string& prefix, bool for_this_gpu = true) {
  const std::string stencils_path = prefix + "stencils.cubin", images_path = prefix + "images.cubin";
  stencils st;
  st.prefix = prefix;
  const bytes learnt_from = read_file(stencils_path);
  st.cubin = read_file(images_path);
  const auto ks = kernels_of(learnt_from), images = kernels_of(st.cubin);
  st.arch = int(st.cubin[0x31]);  // the ELF header's flags name the SM in their second byte
  if (learnt_from.at(0x31) != st.cubin[0x31])
    throw std::runtime_error(stencils_path + " and " + images_path + " are for two architectures");
  if (for_this_gpu) require_this_gpu(st);
  for (int o = 0; o < stencil::count; ++o) st.forms[o] = learn_form(learnt_from, ks, o);
  learn_latencies(st, learnt_from, ks);
  for (int steps : stencil::region_sizes) st.images.push_back(learn_image(st.cubin, images, steps));
  for (int steps : stencil::vec_region_sizes)
    st.vec_images.push_back(learn_vec_image(st.cubin, images, steps));
  return st;
}

// The call images, learnt from their cubins.
void learn_calls(const stencils& st, call_stencils& out) {
  for (int n = 1; n <= stencil::max_calls; ++n) {
    bytes& file = out.cubins[n];
    const std::string path = st.prefix + "calls_" + std::to_string(n) + ".cubin";
    file = read_file(path);
    if (file.at(0x31) != st.cubin[0x31])
      throw std::runtime_error(path + " is for another architecture than the stencils");
    const auto calls = kernels_of(file);
    const control flow = learn_control(file, calls);
    for (const stencil::call_shape shape : stencil::call_shapes) try {
        out.images.push_back(learn_call_image(file, calls, flow, n, shape));
      } catch (const failed& e) {  // that image is not used; an op that would need it says why
        out.refusals += std::string(out.refusals.empty() ? "" : "; ") + e.what();
      }
    // the slots' words: in the constant bank's section, each its marker once
    const section words = sections_of(file)[".nv.constant3"];
    LEARN_CHECK(words.size >= 4 * stencil::max_calls, path + " has no slots' words");
    for (int g = 0; g < stencil::max_calls; ++g) {
      std::uint32_t word;
      std::memcpy(&word, &file.at(words.offset + 4 * std::size_t(g)), 4);
      LEARN_CHECK(word == stencil::slot_marker + unsigned(g),
                  "slot " + std::to_string(g) + "'s word is not its marker");
    }
    out.slot_words[n] = words.offset;
  }
}
// The call images, learnt the first time an op asks for them (once a process, whichever thread
// asks first); where they cannot be read, why is kept and refuses every op that calls a function.
const call_stencils& calls_of(const stencils& st) {
  std::call_once(st.calls->learnt, [&] {
    try {
      learn_calls(st, *st.calls);
    } catch (const std::exception& e) {
      st.calls->unread = e.what();
    }
  });
  return *st.calls;
}

// --- A user's op: parsed, its values given the region's registers, written in, scheduled ------------

struct step {
  int op;              // an operation, or -1: a call of `call` on a
  int dest, a, b;      // virtual registers: 0 is x
  float constant = 0;  // the operations with a constant
  int c = -1;          // sel's third register
  unsigned call = stencil::no_function;
};
struct refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether m * (k1 - k2) + k2, in float as the GPU computes it, is k1 for m = 1 and k2 for m = 0, to
// the bit (not where k1 - k2 rounds, nor for -0.0, infinities or NaN).
bool picks_exactly(float k1, float k2) {
  const float d = k1 - k2;
  const auto same = [](float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  };
  return std::isfinite(d) && same(1.0f * d + k2, k1) && same(0.0f * d + k2, k2);
}

// The function a call image's slot runs for a node of the language, or none.
unsigned slot_function(cdl::expr::kind k) {
  const std::string_view name = cdl::expr::function_name(k);
#define CDL_FUNCTION_OF(function, fn) \
  if (name == #function) return stencil::fn_##function;
  CDL_SLOT_FUNCTIONS(CDL_FUNCTION_OF)
  return stencil::no_function;
}

// The op as steps on virtual registers (each node its own), constants folded in float as the GPU
// would compute them. Returns the register holding the result.
int select(const cdl::expr::program& p, std::vector<step>& out) {
  using cdl::expr::kind;
  struct value {
    bool constant;
    float c;
    int reg;
  };
  std::vector<value> v(p.nodes.size());
  int next = 1;
  auto emit = [&](int op, int a, int b, float c, int third = -1) {
    out.push_back({op, next, a, b, c, third});
    return value{false, 0, next++};
  };
  auto materialise = [&](value x) {  // a constant as a register: max then min with it, whatever was there
    if (!x.constant) return x.reg;
    emit(stencil::max, 0, -1, x.c);
    return emit(stencil::min, next - 1, -1, x.c).reg;
  };
  const auto made = [&](int reg) -> const step& { return out[std::size_t(reg - 1)]; };
  // A register made by a multiply by a constant from a node of the program (not a temporary,
  // whose value other nodes may read), or null.
  const auto product_of = [&](value r, const cdl::expr::node& e) -> const step* {
    if (r.constant || r.reg == 0 || (e.op != kind::multiply && e.op != kind::divide)) return nullptr;
    return made(r.reg).op == stencil::mul ? &made(r.reg) : nullptr;
  };
  std::vector<int> refs(p.nodes.size(), 0);  // the nodes and the result that read each node
  for (const auto& e : p.nodes)
    for (int r : {e.a, e.b, e.c})
      if (r >= 0) ++refs[std::size_t(r)];
  for (const auto& bound : p.bindings) ++refs[std::size_t(bound.value)];
  ++refs[std::size_t(p.result)];
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const auto& e = p.nodes[n];
    const value a = e.a >= 0 ? v[e.a] : value{}, b = e.b >= 0 ? v[e.b] : value{};
    const bool both = e.a >= 0 && e.b >= 0 && a.constant && b.constant;
    switch (e.op) {
      case kind::number: v[n] = {true, float(e.value), -1}; break;
      case kind::x: v[n] = {false, 0, 0}; break;
      case kind::temporary: v[n] = v[p.bindings[std::size_t(e.value)].value]; break;
      case kind::negate:
        v[n] = a.constant ? value{true, -a.c, -1} : emit(stencil::rsub, a.reg, -1, -0.0f);
        break;
      case kind::add:
        v[n] = both         ? value{true, a.c + b.c, -1}
               : a.constant ? emit(stencil::add, b.reg, -1, a.c)
               : b.constant ? emit(stencil::add, a.reg, -1, b.c)
                            : emit(stencil::addr, a.reg, b.reg, 0);
        break;
      case kind::subtract:
        v[n] = both         ? value{true, a.c - b.c, -1}
               : a.constant ? emit(stencil::rsub, b.reg, -1, a.c)
               : b.constant ? emit(stencil::sub, a.reg, -1, b.c)
                            : emit(stencil::subr, a.reg, b.reg, 0);
        break;
      case kind::multiply:
        v[n] = both         ? value{true, a.c * b.c, -1}
               : a.constant ? emit(stencil::mul, b.reg, -1, a.c)
               : b.constant ? emit(stencil::mul, a.reg, -1, b.c)
                            : emit(stencil::mulr, a.reg, b.reg, 0);
        break;
      case kind::divide: {  // by a power of two only: x / c is then x * (1 / c) exactly
        int exponent = 0;
        if (!b.constant || std::frexp(double(b.c), &exponent) != 0.5 || exponent < -125 || exponent > 126)
          throw refused(
              "a division by anything but a constant power of two (its code is a sequence with a slow path)");
        v[n] = a.constant ? value{true, a.c / b.c, -1} : emit(stencil::mul, a.reg, -1, 1.0f / b.c);
        break;
      }
      case kind::min:
      case kind::max: {
        const bool lo = e.op == kind::min;
        v[n] = both         ? value{true, lo ? std::fmin(a.c, b.c) : std::fmax(a.c, b.c), -1}
               : a.constant ? emit(lo ? stencil::min : stencil::max, b.reg, -1, a.c)
               : b.constant ? emit(lo ? stencil::min : stencil::max, a.reg, -1, b.c)
                            : emit(lo ? stencil::minr : stencil::maxr, a.reg, b.reg, 0);
        break;
      }
      case kind::select: {  // a condition's mask picks the bits of one arm or the other
        if (a.constant) {
          v[n] = a.c != 0 ? b : v[e.c];
          break;
        }
        // As nvcc does: c ? k1 : k2 is one value of the compare's 1.0 or 0.0, m * (k1 - k2) + k2,
        // and c ? y * k1 : y * k2 is y times it, where that gives k1 and k2 to the bit.
        const value f = v[e.c];
        const step* yes = product_of(b, p.nodes[std::size_t(e.b)]);
        const step* no = product_of(f, p.nodes[std::size_t(e.c)]);
        const bool products =
            yes && no && yes->a == no->a && refs[std::size_t(e.b)] == 1 && refs[std::size_t(e.c)] == 1;
        const float k1 = products ? yes->constant : b.c, k2 = products ? no->constant : f.c;
        if ((products || (b.constant && f.constant)) && picks_exactly(k1, k2)) {
          const int truth = made(a.reg).a;       // the compare's 1.0 or 0.0, which the mask was made from
          const int y = products ? yes->a : -1;  // (out grows below)
          const value picked = emit(stencil::add, emit(stencil::mul, truth, -1, k1 - k2).reg, -1, k2);
          v[n] = products ? emit(stencil::mulr, y, picked.reg, 0) : picked;
        } else {
          v[n] = emit(stencil::sel, a.reg, materialise(b), 0, materialise(f));
        }
        break;
      }
      default:
        if (const unsigned f = slot_function(e.op); f != stencil::no_function) {
          if (a.constant) {  // folded as the compiler folds sinf(2.0f): on the host
            v[n] = {true, stencil::call(f, a.c), -1};
          } else {
            out.push_back({-1, next, a.reg, -1, 0, -1, f});
            v[n] = {false, 0, next++};
          }
          break;
        }
        if (!cdl::expr::is_condition(e.op))
          throw refused("`" + std::string(cdl::expr::function_name(e.op)) +
                        "` has no one-instruction stencil");
        // a compare (1.0 or 0.0), then its mask; b < a is a > b where one side is a constant
        int order = int(e.op) - int(kind::less);  // <, <=, >, >=, ==, !=
        if (both) {
          const bool truth[] = {a.c<b.c, a.c <= b.c, a.c> b.c, a.c >= b.c, a.c == b.c, a.c != b.c};
          v[n] = {true, truth[order] ? 1.0f : 0.0f, -1};
          break;
        }
        const int swapped[] = {2, 3, 0, 1, 4, 5};
        value compared;
        if (a.constant || b.constant) {
          if (a.constant) order = swapped[order];
          compared = emit(stencil::lt + order, a.constant ? b.reg : a.reg, -1, a.constant ? a.c : b.c);
        } else {  // registers: a > b is b < a
          const int with_registers[] = {stencil::ltr, stencil::ler, stencil::ltr,
                                        stencil::ler, stencil::eqr, stencil::ner};
          const bool swap = order == 2 || order == 3;
          compared = emit(with_registers[order], swap ? b.reg : a.reg, swap ? a.reg : b.reg, 0);
        }
        v[n] = emit(stencil::mask, compared.reg, -1, 0);
    }
  }
  return materialise(v[p.result]);
}

// A step nothing reads goes (a select that picks constants leaves its mask and its arms' products
// unread); a multiply by a constant whose one reader is an add (or the subtrahend of a subtract)
// becomes one step with it: a * c + b (b - a * c is a * -c + b), as nvcc contracts them.
int fuse(std::vector<step>& code, int result) {
  std::vector<int> reads(code.size() + 2, 0), made_by(code.size() + 2, -1);
  for (std::size_t n = 0; n < code.size(); ++n) {
    made_by[std::size_t(code[n].dest)] = int(n);
    for (int r : {code[n].a, code[n].b, code[n].c})
      if (r >= 0) ++reads[std::size_t(r)];
  }
  std::vector<bool> gone(code.size(), false);
  for (std::size_t n = code.size(); n-- > 0;)
    if (code[n].dest != result && reads[std::size_t(code[n].dest)] == 0) {
      gone[n] = true;
      for (int r : {code[n].a, code[n].b, code[n].c})
        if (r >= 0) --reads[std::size_t(r)];
    }
  for (step& s : code) {
    if ((s.op != stencil::addr && s.op != stencil::subr) || gone[std::size_t(&s - code.data())]) continue;
    for (int side : {0, 1}) {
      const int r = side == 0 ? s.a : s.b;
      const int m = r > 0 ? made_by[std::size_t(r)] : -1;
      if (m < 0 || gone[std::size_t(m)] || code[std::size_t(m)].op != stencil::mul ||
          reads[std::size_t(r)] != 1 || r == result || (s.op == stencil::subr && side == 0))
        continue;
      const step& product = code[std::size_t(m)];
      s = {stencil::fmac, s.dest, product.a, side == 0 ? s.b : s.a,
           s.op == stencil::subr ? -product.constant : product.constant};
      gone[std::size_t(m)] = true;
      break;
    }
  }
  std::vector<int> renamed(reads.size(), -1);  // the steps left, their registers numbered 1, 2, ... again
  renamed[0] = 0;
  std::size_t kept = 0;
  for (std::size_t n = 0; n < code.size(); ++n)
    if (!gone[n]) renamed[std::size_t(code[n].dest)] = int(kept + 1), code[kept++] = code[n];
  code.resize(kept);
  for (step& s : code) {
    s.dest = renamed[std::size_t(s.dest)], s.a = renamed[std::size_t(s.a)];
    if (s.b >= 0) s.b = renamed[std::size_t(s.b)];
    if (s.c >= 0) s.c = renamed[std::size_t(s.c)];
  }
  return renamed[std::size_t(result)];
}

// Physical registers for the virtual ones, from the image's pool, x where it already is; a value's
// register is free again after its last read. The result is copied into the register the sum reads.
std::vector<step> allocate(std::vector<step> code, int result, const image& im) {
  std::vector<int> last(code.size() + 1, -1), reg(code.size() + 1, -1);
  for (std::size_t n = 0; n < code.size(); ++n)
    for (int r : {code[n].a, code[n].b, code[n].c})
      if (r >= 0) last[r] = int(n);
  last[result] = int(code.size());
  std::vector<int> free;  // x's register is not free until x's last read
  for (int r : im.pool)
    if (r != im.x && r != im.result) free.push_back(r);
  if (im.result != im.x) free.push_back(im.result);  // given out last: it is where the result goes
  reg[0] = im.x;
  if (last[0] < 0) free.insert(free.begin(), im.x);  // x never read: its register is free at once
  for (std::size_t n = 0; n < code.size(); ++n) {
    step& s = code[n];
    for (int r : {s.a, s.b, s.c})
      if (r >= 0 && last[r] == int(n) && std::find(free.begin(), free.end(), reg[r]) == free.end())
        free.insert(free.begin(), reg[r]);  // read for the last time here: the result may take it
    if (free.empty())
      throw refused("more values live at once than the region has registers (" +
                    std::to_string(im.pool.size()) + ")");
    const auto pick = s.dest == result && std::find(free.begin(), free.end(), im.result) != free.end()
                          ? std::find(free.begin(), free.end(), im.result)
                          : free.begin();
    reg[s.dest] = *pick;
    free.erase(pick);
    s.dest = reg[s.dest], s.a = s.a >= 0 ? reg[s.a] : -1, s.b = s.b >= 0 ? reg[s.b] : -1;
    s.c = s.c >= 0 ? reg[s.c] : -1;
  }
  if (reg[result] != im.result)
    code.push_back({stencil::add, im.result, reg[result], -1, -0.0f});  // v + -0 is v
  return code;
}

struct compiled {
  bytes image;
  std::string kernel;
  int steps = 0;
  std::vector<step> code;  // the steps on virtual registers (0 is x), and where the result is
  int result = 0;
  std::string vec_kernel;  // the vec image's, in the same bytes; empty where it was refused
  std::string vec_refused;
};

// Two results the same: equal, or both NaN (an op may compute a NaN, and must where its steps do).
inline bool same_result(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// What the patched kernel computes for one element, in float on the host, step by step: the test
// of the machine code (its result must be this, bit for bit).
float emulate(const compiled& c, float x0, int k) {
  float acc = 0.0f;
  thread_local std::vector<float> v;  // every element of a map: no allocation after the first
  v.resize(c.code.size() + 1);
  for (int j = 0; j < k; ++j) {
    v[0] = std::fma(float(j), lesson::delta, x0);
    for (const step& s : c.code) {
      v[std::size_t(s.dest)] =
          s.call ? stencil::call(s.call, v[std::size_t(s.a)])
                 : stencil::evaluate(s.op, v[std::size_t(s.a)], s.b >= 0 ? v[std::size_t(s.b)] : 0.0f,
                                     s.c >= 0 ? v[std::size_t(s.c)] : 0.0f, s.constant);
    }
    acc += v[std::size_t(c.result)];
  }
  return acc;
}

// The same over many elements at once, each call applied by `apply` to every element's argument
// (the GPU's functions, in the fuzz: the host's sinf is not the GPU's to the bit).
template <class Apply>
std::vector<float> emulate_all(const compiled& c, const float* x0, std::size_t n, int k, Apply apply) {
  std::vector<std::vector<float>> v(c.code.size() + 1, std::vector<float>(n));
  std::vector<float> acc(n, 0.0f);
  for (int j = 0; j < k; ++j) {
    for (std::size_t i = 0; i < n; ++i) v[0][i] = std::fma(float(j), lesson::delta, x0[i]);
    for (const step& s : c.code) {
      std::vector<float>& out = v[std::size_t(s.dest)];
      const std::vector<float>& a = v[std::size_t(s.a)];
      if (s.call) {
        out = a;
        apply(s.call, out);
        continue;
      }
      for (std::size_t i = 0; i < n; ++i)
        out[i] = stencil::evaluate(s.op, a[i], s.b >= 0 ? v[std::size_t(s.b)][i] : 0.0f,
                                   s.c >= 0 ? v[std::size_t(s.c)][i] : 0.0f, s.constant);
    }
    for (std::size_t i = 0; i < n; ++i) acc[i] += v[std::size_t(c.result)][i];
  }
  return acc;
}

// Step s's instruction written into the place at `slot`: the operation's learnt form with the
// step's registers and constant, keeping the place's own barriers and stall (its stall may also
// cover an instruction around it), no operand kept for the next instruction.
void put(const stencils& st, const step& s, unsigned char* slot) {
  const form& f = st.forms[s.op];
  insn i = f.code;
  i[dest_field] = (unsigned char)s.dest;
  i[f.a] = (unsigned char)s.a;
  if (f.b >= 0) i[f.b] = (unsigned char)s.b;
  if (f.c >= 0) i[f.c] = (unsigned char)s.c;
  if (stencil::has_constant(s.op))
    set_immediate(i, std::bit_cast<std::uint32_t>(s.constant) ^ (f.negated ? 0x80000000u : 0u));
  std::copy_n(slot + 13, 3, i.begin() + 13);
  std::copy(i.begin(), i.end(), slot);
  clear_reuse(slot);
}

// The image with the op's instructions in its region (the rest of the region: v + -0 on a dead
// register), then every stall set so that each instruction issues only once what it reads is ready.
compiled write(const stencils& st, const image* im, const std::vector<step>& code) {
  compiled out{st.cubin, im->kernel, int(code.size()), {}, 0, {}, {}};
  const int spare = im->pool[0] == im->result ? im->pool[1] : im->pool[0];
  int issued[256], producer[256], cycle = 0, last_issue = 0;
  std::fill(std::begin(issued), std::end(issued), -100);
  std::fill(std::begin(producer), std::end(producer), int(stencil::add));
  auto max_latency = [&](int o) {
    return *std::max_element(std::begin(st.latency[o]), std::end(st.latency[o]));
  };
  auto min_latency = [&](int o) {
    int m = 99;
    for (const auto& row : st.latency) m = std::min(m, row[o]);
    return m;
  };
  unsigned char* before = &out.image[im->steps.front() - 16];
  set_stall(before, stall(before) + st.latency_margin);  // x's producer, whatever reads it first
  for (std::size_t n = 0; n < im->steps.size(); ++n) {
    const step s = n < code.size() ? code[n] : step{stencil::add, spare, spare, -1, -0.0f};
    unsigned char* slot = &out.image[im->steps[n]];
    put(st, s, slot);
    int t = cycle;
    for (int r : {s.a, s.b, s.c})
      if (r >= 0) t = std::max(t, issued[r] + st.latency[producer[r]][s.op]);
    t = std::max(
        t, issued[s.dest] + max_latency(producer[s.dest]) - min_latency(s.op) + 1);  // writes land in order
    if (t > cycle) set_stall(slot - 16, stall(slot - 16) + t - cycle);
    issued[s.dest] = t, producer[s.dest] = s.op;
    cycle = t + stall(slot), last_issue = t;
  }
  // The sum after the region reads the result: the last step waits until it is ready.
  unsigned char* last = &out.image[im->steps.back()];
  const int ready = issued[im->result] + st.latency[producer[im->result]][stencil::addr];
  set_stall(last, std::max(stall(last), ready - last_issue));
  return out;
}

// The issue cycles over a vec image's window: when each register's value was issued and by which
// operation (x's maker an operation of its own: the longest learnt latency and the margin), so
// that an instruction issues once what it reads is ready and what it overwrites has landed; a wait
// goes into the stall of the instruction before, which must hold it.
struct window_clock {
  static constexpr int maker = stencil::count;
  const stencils& st;
  int issued[256], producer[256], cycle = 0, last_issue = 0, longest = 0, least = 99;
  explicit window_clock(const stencils& s) : st(s) {
    std::fill(std::begin(issued), std::end(issued), -100);
    std::fill(std::begin(producer), std::end(producer), int(stencil::add));
    for (const auto& row : st.latency)
      for (int l : row) longest = std::max(longest, l), least = std::min(least, l);
  }
  int latency(int from, int to) const {
    return from == maker ? longest + st.latency_margin : st.latency[from][to];
  }
  int longest_from(int o) const {
    int m = 0;
    for (int to = 0; to < stencil::count; ++to) m = std::max(m, latency(o, to));
    return m;
  }
  int ready(int reg, int reader) const { return issued[reg] + latency(producer[reg], reader); }
  int done(int reg) const { return issued[reg] + longest_from(producer[reg]); }  // for any reader
  int landed(int reg) const { return done(reg) - least + 1; }  // a write issued then lands after it
  // The instruction at slot issues at t, or as soon as it can: the one before waits the difference.
  int issue(unsigned char* slot, int t) {
    clear_reuse(slot);
    if (t > cycle) {
      if (stall(slot - 16) + t - cycle > 15) throw refused("a wait longer than a stall field holds");
      set_stall(slot - 16, stall(slot - 16) + t - cycle);
    } else {
      t = cycle;
    }
    cycle = t + stall(slot), last_issue = t;
    return t;
  }
  void make_x(unsigned char* slot, insn i, int x) {  // j * delta + an element, into x
    i[dest_field] = (unsigned char)x;
    std::copy_n(slot + 13, 3, i.begin() + 13);  // the place's barriers: the first waits for j
    std::copy(i.begin(), i.end(), slot);
    issued[x] = issue(slot, landed(x)), producer[x] = maker;
  }
  void write(unsigned char* slot, const step& s) {
    put(st, s, slot);
    int t = cycle;
    for (int r : {s.a, s.b, s.c})
      if (r >= 0 && r != 255) t = std::max(t, ready(r, s.op));
    if (s.dest != 255) t = std::max(t, landed(s.dest));
    t = issue(slot, t);
    if (s.dest != 255) issued[s.dest] = t, producer[s.dest] = s.op;
  }
  void settle(unsigned char* last,
              int ready) {  // the window's last instruction: what follows reads at `ready`
    if (ready - last_issue > 15) throw refused("a wait longer than a stall field holds");
    set_stall(last, std::max(stall(last), ready - last_issue));
  }
};

// x's four makers in a vec image's first places, then the lanes' steps, each lane done before its
// result is read (a lane takes a place out of turn only where it has no place to spare), with
// RZ = RZ + -0 in the places left; then every stall set, over the whole window, as write() does.
void write_vec(const stencils& st, const vec_image& im, const std::vector<step> (&code)[stencil::lanes],
               bytes& out) {
  constexpr int lanes = stencil::lanes;
  // The makers in the first places; then at each place the lane that must take it (as many steps
  // left as places before its result is read), else the one that waited longest.
  std::vector<int> chosen(im.places.size(), -1);
  std::size_t next[lanes]{}, last_placed[lanes]{};
  for (std::size_t p = lanes; p < im.places.size(); ++p) {
    int best = -1;
    for (int l = 0; l < lanes; ++l) {
      if (next[l] == code[l].size()) continue;
      const std::size_t left = code[l].size() - next[l],
                        before =
                            std::size_t(std::count_if(im.places.begin() + std::ptrdiff_t(p), im.places.end(),
                                                      [&](std::size_t o) { return o < im.deadline[l]; }));
      if (before < left) throw refused("a lane's result is read before its steps are done");
      if (before == left) {
        best = l;
        break;
      }
      if (best < 0 || last_placed[l] < last_placed[best]) best = l;
    }
    if (best >= 0) chosen[p] = best, last_placed[best] = p + 1, ++next[best];
  }
  for (int l = 0; l < lanes; ++l)
    if (next[l] < code[l].size()) throw refused("more steps than the vec image's places");
  window_clock clock(st);
  std::size_t next_step[lanes]{}, p = 0;
  clear_reuse(&out[im.places.front() - 16]);
  for (std::size_t offset = im.places.front(); offset <= im.last; offset += 16) {
    unsigned char* slot = &out[offset];
    const bool place = p < im.places.size() && im.places[p] == offset;
    if (place && p < lanes) {  // lane p's x: j * delta + its element, into the lane's x register
      clock.make_x(slot, im.maker[p], im.lane[p].x), ++p;
    } else if (place) {
      const int l = chosen[p++];
      clock.write(slot, l >= 0 ? code[l][next_step[l]++] : step{stencil::add, 255, 255, -1, -0.0f});
    } else {  // not the patch's: it may read a lane's result
      int t = 0;
      for (int l = 0; l < lanes; ++l)
        if (im.deadline[l] == offset) t = std::max(t, clock.ready(im.lane[l].result, stencil::addr));
      clock.issue(slot, t);
    }
  }
  // After the window the sums read the results: the last instruction waits until all are ready.
  int ready = 0;
  for (const image& lane : im.lane) ready = std::max(ready, clock.ready(lane.result, stencil::addr));
  clock.settle(&out[im.last], ready);
}

// The op in the smallest vec image that holds it, written into `c`'s image beside its scalar one;
// where none does, why not.
void compile_vec(const stencils& st, const std::vector<step>& code, int result, compiled& c) {
  c.vec_refused = "more steps than the largest vec region";
  for (const vec_image& im : st.vec_images) {
    if (im.steps < int(code.size())) continue;
    try {
      std::vector<step> placed[stencil::lanes];
      for (int l = 0; l < stencil::lanes; ++l) placed[l] = allocate(code, result, im.lane[l]);
      bytes out = c.image;
      write_vec(st, im, placed, out);
      c.image = std::move(out), c.vec_kernel = im.kernel, c.vec_refused.clear();
      return;
    } catch (const refused& e) {
      c.vec_refused = e.what();
    }
  }
}

// --- An op that calls functions: its steps in a call image's windows, a slot for each call -------

// Where a value must be: anywhere in the lane's registers kept across the slots, or in what slot g
// reads (arg), what it writes (res), or where the sum reads the op's value.
enum class fixed { no, arg, res, result };
struct routed {
  std::vector<step> code;                    // calls included (op -1), in order
  std::vector<int> window;                   // each step's window (a call's: the window it ends, its slot)
  std::vector<std::pair<fixed, int>> where;  // each virtual register's, with its slot
  int result = 0;
};

// The op's steps with copies (v + -0) where a value is not made where the image needs it: a call's
// argument made in the window before it and read by nothing else is made in the slot's register;
// a call's result stays in the slot's through the window after it, and is copied at its end where
// a later window reads it (at its start, where something there writes the slot's register first,
// in any lane); the op's value made last is made where the sum reads it.
routed route(const call_image& im, const std::vector<step>& code, int result, unsigned copied = 0) {
  routed r;
  std::vector<int> def_window(code.size() + 2, 0), def_step(code.size() + 2, -1), readers(code.size() + 2, 0);
  std::vector<int> last_window(code.size() + 2, -1);
  int w = 0;
  for (std::size_t n = 0; n < code.size(); ++n) {
    def_window[std::size_t(code[n].dest)] = code[n].call ? w + 1 : w,
    def_step[std::size_t(code[n].dest)] = int(n);
    for (int v : {code[n].a, code[n].b, code[n].c})
      if (v >= 0) ++readers[std::size_t(v)], last_window[std::size_t(v)] = w;
    w += code[n].call ? 1 : 0;
  }
  int next = int(code.size()) + 1;
  std::vector<int> renamed(code.size() + 2);
  for (std::size_t v = 0; v < renamed.size(); ++v) renamed[v] = int(v);
  r.where.assign(std::size_t(next), {fixed::no, 0});
  auto copy = [&](int from, int window) {  // a new register, v + -0
    r.code.push_back({stencil::add, next, from, -1, -0.0f}), r.window.push_back(window);
    r.where.push_back({fixed::no, 0});
    return next++;
  };
  w = 0;
  int pending = -1;  // the last call's result, read after the next slot: copied just before it
  for (step s : code) {
    const int arg = s.a, made = arg == 0 ? -1 : def_step[std::size_t(arg)];
    for (int* v : {&s.a, &s.b, &s.c})
      if (*v >= 0) *v = renamed[std::size_t(*v)];
    if (!s.call) {
      r.code.push_back(s), r.window.push_back(w);
      continue;
    }
    const bool made_here =
        arg == 0 ? w == 0 : made >= 0 && !code[std::size_t(made)].call && def_window[std::size_t(arg)] == w;
    if (!made_here || readers[std::size_t(arg)] != 1) s.a = copy(s.a, w);
    if (pending >= 0) renamed[std::size_t(pending)] = copy(pending, w), pending = -1;
    r.where[std::size_t(s.a)] = {fixed::arg, w};
    r.code.push_back(s), r.window.push_back(w);
    r.where[std::size_t(s.dest)] = {fixed::res, w};
    ++w;
    if (copied >> (w - 1) & 1)  // at once: something writes its register before the window's end
      renamed[std::size_t(s.dest)] = copy(s.dest, w);
    else if (last_window[std::size_t(s.dest)] > w)
      pending = s.dest;
  }
  r.result = renamed[std::size_t(result)];
  const int made = r.result == 0 ? -1 : def_step[std::size_t(result)];
  if (r.result != result || made < 0 || code[std::size_t(made)].call ||
      def_window[std::size_t(result)] != w || readers[std::size_t(result)] != 0)
    r.result = copy(r.result, w);
  r.where[std::size_t(r.result)] = {fixed::result, 0};
  // A result left in its slot's register is read there before a step writes that register (in any
  // lane, the next slot's argument or the op's value may be made there): else it is copied first.
  for (std::size_t n = 0; n < r.code.size(); ++n) {
    if (!r.code[n].call || copied >> r.window[n] & 1) continue;
    const int g = r.window[n], v = r.code[n].dest;
    std::size_t read = n, written = r.code.size();
    for (std::size_t m = n + 1; m < r.code.size(); ++m) {
      const step& s = r.code[m];
      if (s.a == v || s.b == v || s.c == v) read = m;
      const auto [kind, slot] = r.where[std::size_t(s.dest)];
      for (const auto& lane : im.lane)
        if (((kind == fixed::arg && slot == g + 1 && lane.arg[slot] == lane.res[g]) ||
             (kind == fixed::result && lane.result == lane.res[g])) &&
            written == r.code.size())
          written = m;
    }
    if (written < read) return route(im, code, result, copied | 1u << g);
  }
  return r;
}

// One lane's registers for the routed steps: the fixed ones where they must be; a value that lives
// across a slot in a register nvcc kept across it; one within a window first in the window's own
// fixed registers, once free (a register holds one value from its making to its last read).
struct lane_code {
  std::vector<step> code;  // r's steps on the lane's registers
  int x = -1;              // where its maker puts x
};
lane_code allocate_lane(const routed& r, const call_image& im, int lane) {
  const auto& regs = im.lane[lane];
  // The registers kept across the slots between windows `from` and `to` (where from == to, those
  // before and after the window), but those another lane's result, its argument in window `to` or
  // its slot result in window `from` may go to: nvcc keeps them apart only at the slots.
  auto kept = [&](int from, int to) {
    std::vector<int> out;
    const int first = from == to ? std::max(from - 1, 0) : from,
              last = from == to ? std::min(to + 1, im.calls) : to;
    for (int reg : regs.across[first]) {
      bool all = true;
      for (int g = first; g < last; ++g)
        all = all && std::count(regs.across[g].begin(), regs.across[g].end(), reg);
      for (int l = 0; l < stencil::lanes; ++l)
        all =
            all && (l == lane || (im.lane[l].result != reg && (to == im.calls || im.lane[l].arg[to] != reg) &&
                                  (from == 0 || im.lane[l].res[from - 1] != reg)));
      if (all) out.push_back(reg);
    }
    return out;
  };
  // Each value's life: made at step `made` (x before the first), last read at `last`; the windows
  // of the two (a call's result is made in the window after its slot).
  const std::size_t values = r.where.size();
  std::vector<int> made(values, -1), last(values, -1), from(values, 0), to(values, 0), reg(values, -1);
  for (std::size_t n = 0; n < r.code.size(); ++n) {
    const step& s = r.code[n];
    made[std::size_t(s.dest)] = int(n), from[std::size_t(s.dest)] = r.window[n] + (s.call ? 1 : 0);
    for (int v : {s.a, s.b, s.c})
      if (v >= 0) last[std::size_t(v)] = int(n), to[std::size_t(v)] = r.window[n];
  }
  last[std::size_t(r.result)] = int(r.code.size()), to[std::size_t(r.result)] = im.calls;
  // A register holds one value at a time: two share it where one is last read by the step that
  // makes the other.
  std::vector<std::vector<int>> holds(256);
  auto fits = [&](int v, int R) {
    for (int u : holds[std::size_t(R)])
      if (made[std::size_t(v)] < last[std::size_t(u)] && made[std::size_t(u)] < last[std::size_t(v)])
        return false;
    return true;
  };
  for (std::size_t v = 0; v < values; ++v) {  // the fixed ones first: they have no choice
    const auto [kind, g] = r.where[v];
    if (last[v] < 0 || kind == fixed::no) continue;
    reg[v] = kind == fixed::arg ? regs.arg[g] : kind == fixed::res ? regs.res[g] : regs.result;
    if (!fits(int(v), reg[v]))
      throw refused("a call's argument or result meets another value in its register");
    holds[std::size_t(reg[v])].push_back(int(v));
  }
  for (std::size_t v = 0; v < values;
       ++v) {  // the rest: a window's own registers first, where it stays in one
    if (last[v] < 0 || reg[v] >= 0) continue;
    std::vector<int> candidates;
    if (from[v] == to[v]) {
      const int w = from[v];
      if (w < im.calls) candidates.push_back(regs.arg[w]);
      if (w > 0) candidates.push_back(regs.res[w - 1]);
      if (w == im.calls) candidates.push_back(regs.result);
    }
    std::vector<int> across = kept(from[v], to[v]);  // those kept across fewer later slots first
    auto later = [&](int R) {
      int n = 0;
      for (int g = to[v]; g < im.calls; ++g)
        n += int(std::count(regs.across[g].begin(), regs.across[g].end(), R));
      return n;
    };
    std::stable_sort(across.begin(), across.end(), [&](int a, int b) { return later(a) < later(b); });
    candidates.insert(candidates.end(), across.begin(), across.end());
    for (int R : candidates)
      if (reg[v] < 0 && fits(int(v), R)) reg[v] = R, holds[std::size_t(R)].push_back(int(v));
    if (reg[v] < 0)
      throw refused("more values live at once than a lane keeps across its slots (" +
                    std::to_string(across.size()) + " registers from window " + std::to_string(from[v]) +
                    " to " + std::to_string(to[v]) + ")");
  }
  lane_code out{r.code, reg[0]};
  for (step& s : out.code) {
    s.dest = reg[std::size_t(s.dest)], s.a = reg[std::size_t(s.a)];
    s.b = s.b >= 0 ? reg[std::size_t(s.b)] : -1, s.c = s.c >= 0 ? reg[std::size_t(s.c)] : -1;
  }
  return out;
}

// The lanes' steps in the image (the calls in its slots, the places of no step a no-op), then
// every stall set over each window as write_vec() does; at a window's end, the last place waits
// until all the window wrote is ready; after a slot, a lane's steps start no earlier than nvcc's
// own first reader of the slot's result (its wait on the slot's code keeps its place). Where one
// lane's slot result arrives in a register another lane's steps write, the writer waits for the
// holder's last read of it.
void write_calls(const stencils& st, const call_image& im, const routed& r,
                 const lane_code (&lanes_code)[stencil::lanes], bytes& out) {
  constexpr int lanes = stencil::lanes;
  const step nothing{stencil::add, 255, 255, -1, -0.0f};
  const std::vector<step>* code[lanes];
  for (int l = 0; l < lanes; ++l) code[l] = &lanes_code[l].code;
  for (std::size_t n = 0; n < r.code.size(); ++n)  // the slots' functions
    if (r.code[n].call)
      std::memcpy(&out[calls_of(st).slot_words[im.calls] + 4 * std::size_t(r.window[n])], &r.code[n].call, 4);
  std::vector<int> chosen(im.places.size(), -1);        // each place's lane
  std::vector<std::size_t> index(im.places.size(), 0);  // and its step there
  for (int w = 0; w <= im.calls; ++w) {
    std::vector<std::size_t> mine[lanes];  // lane l's steps in window w
    for (int l = 0; l < lanes; ++l)
      for (std::size_t n = 0; n < r.code.size(); ++n)
        if (r.window[n] == w && !r.code[n].call) mine[l].push_back(n);
    // A lane's step that writes the register another lane's slot result arrives in waits for that
    // lane's last read of it.
    struct wait {
      std::size_t step, lane, its;  // this lane's step waits for that lane's step `its`
    };
    std::vector<wait> after[lanes];
    if (w > 0)
      for (int h = 0; h < lanes; ++h) {
        const int held = im.lane[h].res[w - 1];
        std::size_t read = 0;
        for (std::size_t j = 0; j < mine[h].size(); ++j) {
          const step& s = (*code[h])[mine[h][j]];
          if (s.a == held || s.b == held || s.c == held) read = j + 1;
        }
        for (int l = 0; l < lanes; ++l)
          for (std::size_t j = 0; l != h && read > 0 && j < mine[l].size(); ++j)
            if ((*code[l])[mine[l][j]].dest == held) {
              after[l].push_back({j, std::size_t(h), read - 1});
              break;
            }
      }
    std::size_t next[lanes]{}, last_placed[lanes]{};
    std::vector<std::size_t> placed[lanes];
    for (int l = 0; l < lanes; ++l) placed[l].assign(mine[l].size(), ~std::size_t(0));
    const std::size_t first = w == 0 ? lanes : 0;
    for (std::size_t p = first; p < im.places.size(); ++p) {
      if (im.window[p] != w) continue;
      auto open = [&](int l, std::size_t q) {
        return im.window[q] == w && im.places[q] >= im.from[w][l] && im.places[q] < im.until[w][l];
      };
      int best = -1;
      for (int l = 0; l < lanes; ++l) {
        if (next[l] == mine[l].size() || !open(l, p)) continue;
        bool ready = true;
        for (const wait& a : after[l]) ready = ready && (a.step != next[l] || placed[a.lane][a.its] < p);
        if (!ready) continue;
        std::size_t before = 0;
        for (std::size_t q = p; q < im.places.size(); ++q) before += open(l, q);
        if (before < mine[l].size() - next[l])
          throw refused("a lane's steps do not fit the call image's window");
        if (before == mine[l].size() - next[l]) {
          best = l;
          break;
        }
        // else a lane another waits for, then the one that waited longest
        auto awaited = [&](int h) {
          for (int o = 0; o < lanes; ++o)
            for (const wait& a : after[o])
              if (int(a.lane) == h && a.its >= next[h]) return true;
          return false;
        };
        if (best < 0 || (awaited(l) && !awaited(best)) ||
            (awaited(l) == awaited(best) && last_placed[l] < last_placed[best]))
          best = l;
      }
      if (best < 0) continue;
      chosen[p] = best, index[p] = mine[best][next[best]], placed[best][next[best]] = p;
      last_placed[best] = p + 1, ++next[best];
    }
    for (int l = 0; l < lanes; ++l)
      if (next[l] < mine[l].size()) throw refused("more steps than the call image's window has places");
  }
  // The stalls, window by window
  for (std::size_t p = 0; p < im.places.size(); ++p)
    if (im.window[p] < 0) put(st, nothing, &out[im.places[p]]);
  int maker_order[lanes];  // the lane whose x goes where j is (every maker reads j) made last
  std::iota(std::begin(maker_order), std::end(maker_order), 0);
  std::stable_partition(std::begin(maker_order), std::end(maker_order),
                        [&](int l) { return lanes_code[l].x != im.maker[0][3]; });
  for (int w = 0; w <= im.calls; ++w) {
    window_clock clock(st);
    std::size_t p = 0;
    while (im.window[p] != w) ++p;
    const std::size_t from = im.places[p], to = w < im.calls ? im.window_last[std::size_t(w)] : im.last;
    std::vector<int> written;
    clear_reuse(&out[from - 16]);
    for (std::size_t offset = from; offset <= to; offset += 16) {
      unsigned char* slot = &out[offset];
      const bool place = p < im.places.size() && im.places[p] == offset;
      if (place && w == 0 && p < lanes) {  // a lane's x: j * delta + its element, where the lane keeps x
        const int l = maker_order[p++];
        clock.make_x(slot, im.maker[l], lanes_code[l].x), written.push_back(lanes_code[l].x);
      } else if (place) {
        const int l = chosen[p];
        const step s = l >= 0 ? (*code[l])[index[p]] : nothing;
        ++p;
        clock.write(slot, s);
        if (s.dest != 255) written.push_back(s.dest);
      } else {  // not the patch's: in the last window it may read a lane's result
        int t = 0;
        for (int l = 0; l < lanes && w == im.calls; ++l)
          if (im.deadline[l] == offset) t = std::max(t, clock.ready(im.lane[l].result, stencil::addr));
        clock.issue(slot, t);
      }
    }
    // What follows (the slot's code, or the sums) reads what the window wrote: ready before it.
    int ready = 0;
    for (int reg : written) ready = std::max(ready, clock.done(reg));
    clock.settle(&out[to], ready);
  }
}

// The smallest call image with a slot for each call whose windows and registers hold the op: the
// vec form alone (no scalar kernel), the slots' words and the windows' places patched.
compiled compile_calls(const stencils& st, const std::vector<step>& code, int result) {
  const int calls = int(std::count_if(code.begin(), code.end(), [](const step& s) { return s.call; }));
  const call_stencils& learnt = calls_of(st);
  if (!learnt.unread.empty()) throw refused("no call images: " + learnt.unread);
  std::string why =
      calls > stencil::max_calls
          ? "more calls than a call image has slots (" + std::to_string(stencil::max_calls) + ")"
          : "no call image for " + std::to_string(calls) + " calls: " + learnt.refusals;
  for (const call_image& im : learnt.images) {
    if (im.calls != calls) continue;
    try {
      const routed r = route(im, code, result);
      lane_code lanes[stencil::lanes];
      for (int l = 0; l < stencil::lanes; ++l) lanes[l] = allocate_lane(r, im, l);
      compiled c{learnt.cubins[calls], "", int(code.size()), code, result, im.kernel, ""};
      write_calls(st, im, r, lanes, c.image);
      return c;
    } catch (const refused& e) {
      why = e.what();
    }
  }
  throw refused(why);
}

// The smallest image whose region holds the op and whose registers suffice for its live values.
compiled compile(const stencils& st, const cdl::expr::program& op) {
  std::vector<step> code;
  const int result = fuse(code, select(op, code));
  if (std::any_of(code.begin(), code.end(), [](const step& s) { return s.call != stencil::no_function; }))
    return compile_calls(st, code, result);
  std::string why =
      "more steps than the largest region (" + std::to_string(st.images.back().steps.size()) + ")";
  for (const image& im : st.images) {
    if (int(im.steps.size()) < int(code.size())) continue;
    try {
      const std::vector<step> placed = allocate(code, result, im);
      if (placed.size() <= im.steps.size()) {
        compiled c = write(st, &im, placed);
        c.code = code, c.result = result;
        compile_vec(st, code, result, c);
        return c;
      }
    } catch (const refused& e) {
      why = e.what();
    }
  }
  throw refused(why);
}
compiled compile(const stencils& st, const std::string& text) { return compile(st, cdl::expr::parse(text)); }

// The region of a patched image decoded with the learnt forms and run on a register file: what the
// machine code means, on the host. Where the GPU's result differs from this but this equals
// emulate(), the fault is in the scheduling bits, not in the instructions.
// Instruction i decoded with the learnt forms and run on reg (RZ, 255, reads 0 and keeps nothing);
// false where it is none of the operations.
bool run(const stencils& st, const insn& i, float (&reg)[256]) {
  int o = 0;
  while (o < stencil::count && !same_but_operands(i, st.forms[o].code, o)) ++o;
  if (o == stencil::count) return false;
  const form& f = st.forms[o];
  const float constant = std::bit_cast<float>(immediate(i) ^ (f.negated ? 0x80000000u : 0u));
  const float v = stencil::evaluate(o, reg[i[f.a]], f.b >= 0 ? reg[i[f.b]] : 0.0f,
                                    f.c >= 0 ? reg[i[f.c]] : 0.0f, constant);
  if (i[dest_field] != 255) reg[i[dest_field]] = v;
  return true;
}

template <class Image>
const Image* named(const std::vector<Image>& images, const std::string& kernel) {
  for (const Image& i : images)
    if (i.kernel == kernel) return &i;
  throw std::logic_error(kernel + " is no image learnt");
}

float simulate(const stencils& st, const compiled& c, float x0, int k) {
  const image* im = named(st.images, c.kernel);
  float acc = 0.0f, reg[256];
  for (int j = 0; j < k; ++j) {
    std::fill(std::begin(reg), std::end(reg), NAN);
    reg[im->x] = std::fma(float(j), lesson::delta, x0), reg[255] = 0.0f;
    for (std::size_t offset : im->steps)
      if (!run(st, at(c.image, offset), reg)) return NAN;
    acc += reg[im->result];
  }
  return acc;
}

// A vec image's registers as iteration j starts: NaN but the elements the makers read, and j.
void enter(float (&reg)[256], const insn (&maker)[stencil::lanes],
           const std::array<float, stencil::lanes>& x0, int j) {
  std::fill(std::begin(reg), std::end(reg), NAN);
  for (int l = 0; l < stencil::lanes; ++l) reg[maker[l][8]] = x0[std::size_t(l)];
  reg[maker[0][3]] = float(j), reg[255] = 0.0f;
}
// A vec image's place decoded and run: one of x's makers (j * delta + an element), or a step.
bool run_place(const stencils& st, const insn& i, bool maker, float (&reg)[256]) {
  if (!maker) return run(st, i, reg);
  reg[i[dest_field]] = std::fma(reg[i[3]], lesson::delta, reg[i[8]]);
  return true;
}

// The same for a vec image's window: x's makers in its first places, then each place decoded; for a
// call image each window's in turn, and between two the slot's function on each lane's argument,
// every register but those the slot keeps lost.
std::array<float, stencil::lanes> simulate_vec(const stencils& st, const compiled& c,
                                               const std::array<float, stencil::lanes>& x0, int k) {
  const call_image* calls = c.kernel.empty() ? named(calls_of(st).images, c.vec_kernel) : nullptr;
  const vec_image* vec = calls ? nullptr : named(st.vec_images, c.vec_kernel);
  const std::vector<std::size_t>& places = calls ? calls->places : vec->places;
  const int windows = calls ? calls->calls + 1 : 1;
  auto result = [&](int l) { return calls ? calls->lane[l].result : vec->lane[l].result; };
  std::array<float, stencil::lanes> acc{};
  float reg[256];
  for (int j = 0; j < k; ++j) {
    enter(reg, calls ? calls->maker : vec->maker, x0, j);
    for (int w = 0; w < windows; ++w) {
      for (std::size_t p = 0; p < places.size(); ++p)
        if ((!calls || calls->window[p] == w) &&
            !run_place(st, at(c.image, places[p]), w == 0 && p < stencil::lanes, reg))
          return {NAN, NAN, NAN, NAN};
      if (w + 1 == windows) break;
      unsigned f;
      std::memcpy(&f, &c.image[calls_of(st).slot_words[calls->calls] + 4 * std::size_t(w)], 4);
      float value[stencil::lanes];
      for (int l = 0; l < stencil::lanes; ++l) value[l] = stencil::call(f, reg[calls->lane[l].arg[w]]);
      std::set<int> kept;
      for (const auto& lane : calls->lane) kept.insert(lane.across[w].begin(), lane.across[w].end());
      for (int r = 0; r < 255; ++r)
        if (!kept.count(r)) reg[r] = NAN;
      for (int l = 0; l < stencil::lanes; ++l) reg[calls->lane[l].res[w]] = value[l];
    }
    for (int l = 0; l < stencil::lanes; ++l) acc[std::size_t(l)] += reg[result(l)];
  }
  return acc;
}

// The scheduling a patched image's bytes hold, read back from them apart from how write() set it:
// over each stretch of straight-line code the patch wrote into (a region, a vec window, a call
// image's window), each instruction issues its predecessor's stall after it; every register an
// instruction of the patch reads must have been written at least the learnt latency before, and a
// second write must land after the first. Returns the first violation, or empty.
std::string check_schedule(const stencils& st, const compiled& c) {
  struct span {
    std::size_t from, to;  // offsets of the stretch's first and last instruction
    const std::vector<std::size_t>* places;
    std::size_t makers;           // the first `makers` places make x (j * delta + an element)
    std::vector<int> read_after;  // what the code after the stretch reads (the sums, a slot)
  };
  std::vector<span> spans;
  const call_image* calls = c.kernel.empty() ? named(calls_of(st).images, c.vec_kernel) : nullptr;
  if (!c.kernel.empty()) {
    const image* im = named(st.images, c.kernel);
    spans.push_back({im->steps.front(), im->steps.back(), &im->steps, 0, {im->result}});
  }
  std::vector<std::vector<std::size_t>> windows;  // a call image's places, window by window
  if (calls) {
    windows.resize(std::size_t(calls->calls) + 1);
    for (std::size_t p = 0; p < calls->places.size(); ++p)
      if (calls->window[p] >= 0) windows[std::size_t(calls->window[p])].push_back(calls->places[p]);
    for (std::size_t w = 0; w < windows.size(); ++w) {
      std::vector<int> read;  // a slot reads its argument; after the last window the sums the results
      for (const auto& lane : calls->lane)
        read.push_back(w < std::size_t(calls->calls) ? lane.arg[w] : lane.result);
      if (!windows[w].empty())
        spans.push_back({windows[w].front(),
                         w < std::size_t(calls->calls) ? calls->window_last[w] : calls->last, &windows[w],
                         w == 0 ? std::size_t(stencil::lanes) : 0, read});
    }
  } else if (!c.vec_kernel.empty()) {
    const vec_image* im = named(st.vec_images, c.vec_kernel);
    std::vector<int> read;
    for (const image& lane : im->lane) read.push_back(lane.result);
    spans.push_back({im->places.front(), im->last, &im->places, std::size_t(stencil::lanes), read});
  }
  int longest = 0, least = 99;
  for (const auto& row : st.latency)
    for (int l : row) longest = std::max(longest, l), least = std::min(least, l);
  const int maker = stencil::count;  // a maker of x: read after the longest latency and the margin
  auto latency = [&](int from, int to) {
    return from == maker ? longest + st.latency_margin : st.latency[from][to];
  };
  auto landed_by = [&](int from) {  // a write issued at 0 has landed for any reader by then
    int m = 0;
    for (int to = 0; to < stencil::count; ++to) m = std::max(m, latency(from, to));
    return m;
  };
  for (const span& s : spans) {
    int issued[256], producer[256];
    std::fill(std::begin(producer), std::end(producer), -1);
    int t = 0;
    std::size_t p = 0;
    for (std::size_t offset = s.from; offset <= s.to; offset += 16) {
      const insn i = at(c.image, offset);
      if (p < s.places->size() && (*s.places)[p] == offset) {
        const bool makes_x = p++ < s.makers;
        int op = makes_x ? maker : 0;
        while (!makes_x && op < stencil::count && !same_but_operands(i, st.forms[op].code, op)) ++op;
        if (!makes_x && op == stencil::count)
          return "the place at " + std::to_string(offset) + " holds none of the operations";
        const form& f = st.forms[makes_x ? stencil::add : op];
        const int reader = makes_x ? int(stencil::add) : op;
        for (int r : {makes_x ? -1 : int(i[f.a]), !makes_x && f.b >= 0 ? int(i[f.b]) : -1,
                      !makes_x && f.c >= 0 ? int(i[f.c]) : -1})
          if (r >= 0 && r != 255 && producer[r] >= 0 && t < issued[r] + latency(producer[r], reader))
            return "the instruction at " + std::to_string(offset) + " reads R" + std::to_string(r) + " " +
                   std::to_string(issued[r] + latency(producer[r], reader) - t) +
                   " cycles before it is ready";
        // a second write lands after the first: the shortest latency after it, past the first's longest
        if (const int d = i[dest_field]; d != 255) {
          if (producer[d] >= 0 && t + least <= issued[d] + landed_by(producer[d]))
            return "the instruction at " + std::to_string(offset) + " writes R" + std::to_string(d) +
                   " before the write before it has landed";
          issued[d] = t, producer[d] = op;
        }
      }
      t += stall(i);
    }
    for (int r : s.read_after)
      if (producer[r] >= 0 && t < issued[r] + latency(producer[r], stencil::addr))
        return "R" + std::to_string(r) + " is read after the stretch ending at " + std::to_string(s.to) +
               " " + std::to_string(issued[r] + latency(producer[r], stencil::addr) - t) +
               " cycles before it is ready";
  }
  return "";
}

}  // namespace patch

// Loads a patched image and launches it: the runtime's library calls, as 08's lesson loads PTX.
// The vec kernel runs where the op has one and x and y are 16-byte aligned; else the scalar one.
struct loaded {
  cudaLibrary_t library{};
  cudaKernel_t kernel{}, vec_kernel{}, functions{};  // functions: a call image's cdl_functions
  explicit loaded(const patch::compiled& c) {
    CHECK(cudaLibraryLoadData(&library, c.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    if (!c.kernel.empty()) CHECK(cudaLibraryGetKernel(&kernel, library, c.kernel.c_str()));
    if (c.kernel.empty()) CHECK(cudaLibraryGetKernel(&functions, library, "cdl_functions"));
    if (!c.vec_kernel.empty()) CHECK(cudaLibraryGetKernel(&vec_kernel, library, c.vec_kernel.c_str()));
  }
  loaded(const loaded&) = delete;  // one unload per load
  loaded& operator=(const loaded&) = delete;
  ~loaded() { cudaLibraryUnload(library); }
  void apply(unsigned f, float* v, std::size_t n) const {  // the slots' function f on v, as they compute it
    void* args[] = {&f, &v, &n};
    CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(functions), lesson::grid(n), lesson::block, args, 0,
                           nullptr));
    CHECK(cudaDeviceSynchronize());
  }
  bool runs_vec(const float* x, const float* y) const {
    return vec_kernel &&
           (reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16 == 0;
  }
  void launch(const float* x, float* y, std::size_t n, int k, cudaStream_t stream = nullptr,
              bool vec = true) const {
    void* args[] = {&x, &y, &n, &k};
    const bool four = vec && runs_vec(x, y);
    if (!four && !kernel)  // an op that calls a function: its slots are in the vec form alone
      throw std::invalid_argument(
          "an op that calls a function runs in the vec form alone, on x and y 16-byte aligned");
    CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(four ? vec_kernel : kernel),
                           lesson::grid(four ? (n + stencil::lanes - 1) / stencil::lanes : n), lesson::block,
                           args, 0, stream));
  }
};

// The suite's form (strategies/suite/17_copy_and_patch.cu) includes the mechanism above and
// stops here; the rest is this lesson's program.
#ifndef CDL_COPY_AND_PATCH_MECHANISM

// A random op of the language, of nesting up to `depth`.
std::string random_op(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  const char* constants[] = {"0.5", "1.5", "-2", "3", "0.25", "-0.75", "7", "1e-3"};
  if (depth == 0 || pick(4) == 0) return pick(2) ? "x" : constants[pick(8)];
  auto sub = [&] { return random_op(rng, depth - 1); };
  const char* compares[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
  const char* functions[] = {"sin", "cos", "exp", "sqrt"};
  switch (pick(10)) {
    case 8: return std::string(functions[pick(4)]) + "(" + sub() + ")";
    case 7: return "(" + sub() + compares[pick(6)] + sub() + " ? " + sub() + " : " + sub() + ")";
    case 0: return "(" + sub() + " + " + sub() + ")";
    case 1: return "(" + sub() + " - " + sub() + ")";
    case 2: return sub() + " * " + sub();
    case 3: return "min(" + sub() + ", " + sub() + ")";
    case 4: return "max(" + sub() + ", " + sub() + ")";
    case 5: return "-" + sub();
    case 6: return "(" + sub() + ") / " + (pick(2) ? "4" : "0.5");
    default: return "(" + sub() + " * x + " + constants[pick(8)] + ")";
  }
}

// With no GPU: random ops compiled, their images decoded and run on the host (simulate) against
// their steps (emulate), on a sample of x: the instructions, registers and constants written,
// though not their timing, which only a GPU run shows.
int check(const patch::stencils& st, int count) {
  std::mt19937 rng(2027);
  std::uniform_real_distribution<float> x(-4.0f, 4.0f);
  int compiled = 0, wrong = 0, refused = 0, vec = 0, calls = 0;
  std::map<std::string, int> refusals;
  const patch::call_stencils& calls_learnt = patch::calls_of(st);
  std::printf("call images not used: %s\n", !calls_learnt.unread.empty()    ? calls_learnt.unread.c_str()
                                            : calls_learnt.refusals.empty() ? "none"
                                                                            : calls_learnt.refusals.c_str());
  for (int t = 0; t < count; ++t) {
    const std::string text =
        random_op(rng, 1 + int(rng() % 7u));  // deeper than --fuzz's: the large images too
    patch::compiled c;
    try {
      c = patch::compile(st, text);
    } catch (const patch::refused& e) {
      ++refused, ++refusals[e.what()];
      continue;
    }
    ++compiled, vec += !c.vec_kernel.empty(), calls += c.kernel.empty();
    for (int i = 0; i < 64; ++i) {
      const std::array<float, stencil::lanes> x0 = {x(rng), x(rng), x(rng), x(rng)};
      const float want = patch::emulate(c, x0[0], 3);
      const float got = c.kernel.empty() ? want : patch::simulate(st, c, x0[0], 3);
      const auto lanes = c.vec_kernel.empty() ? x0 : patch::simulate_vec(st, c, x0, 3);
      int bad_lane = -1;
      for (int l = 0; l < stencil::lanes && !c.vec_kernel.empty(); ++l)
        if (!patch::same_result(lanes[std::size_t(l)], patch::emulate(c, x0[std::size_t(l)], 3)))
          bad_lane = l;
      if (!patch::same_result(want, got) || bad_lane >= 0) {
        std::printf(
            "WRONG MACHINE CODE: `%s` at x = %.9g: it computes %.9g, the steps %.9g (vec lane %d wrong)\n",
            text.c_str(), x0[0], got, want, bad_lane);
        ++wrong;
        break;
      }
    }
  }
  std::printf(
      "check: %d ops, %d compiled (%d refused; %d in a vec image too, %d of them calling functions), %d with "
      "wrong "
      "machine code; refused:",
      count, compiled, refused, vec, calls, wrong);
  for (const auto& [why, times] : refusals) std::printf(" %d (%s);", times, why.c_str());
  std::printf("\n");
  return wrong ? 3 : 0;
}

// Random ops of the language, each compiled (or refused, with its reason counted), run in both
// forms at k = 1 and 3 (the first run a timed 2^20 map, the others 2^16 + 3 elements) and compared
// bit for bit with emulate(), each launch under a time limit.
int fuzz(const patch::stencils& st, const lesson::problem& p, int count) {
  std::mt19937 rng(2026);
  std::vector<float> y(std::size_t(1) << 20);
  std::map<std::string, int> refusals;
  std::vector<double>
      first_ms[2];  // the text to the result of a 2^20 map at k = 1, ready: ops without calls, with
  int ran = 0, wrong = 0, vec_runs = 0, call_runs = 0;
  float* values = nullptr;  // a call's arguments, for the GPU's functions
  CHECK(cudaMalloc(&values, y.size() * sizeof(float)));
  for (int t = 0; t < count; ++t) {
    const std::string text = random_op(rng, 1 + int(rng() % 5u));
    CHECK(cudaMemset(p.dy, 0xff, y.size() * sizeof(float)));
    CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    patch::compiled c;
    try {
      c = patch::compile(st, text);
    } catch (const patch::refused& e) {
      ++refusals[e.what()];
      continue;
    }
    const loaded kernel(c);
    const bool calls = c.kernel.empty();  // the vec form alone, its calls checked against the GPU's
    auto on_gpu = [&](unsigned f, std::vector<float>& v) {  // the image's own cdl_functions
      CHECK(cudaMemcpy(values, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
      kernel.apply(f, values, v.size());
      CHECK(cudaMemcpy(v.data(), values, v.size() * sizeof(float), cudaMemcpyDeviceToHost));
    };
    bool timed = false;
    for (const auto [k, vec] :
         {std::pair(1, true), std::pair(3, true), std::pair(1, false), std::pair(3, false)}) {
      if ((vec && !kernel.runs_vec(p.dx, p.dy)) || (!vec && calls)) continue;
      // The op's first run: the timed 2^20 map; the others 2^16 + 3 elements (the vec form's tail)
      const std::size_t n = !timed ? y.size() : (std::size_t(1) << 16) + 3;
      if (timed) CHECK(cudaMemset(p.dy, 0xff, n * sizeof(float)));
      kernel.launch(p.dx, p.dy, n, k, nullptr, vec);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      cudaError_t state;
      while ((state = cudaStreamQuery(nullptr)) == cudaErrorNotReady)
        if (std::chrono::steady_clock::now() > deadline) {
          std::printf("HANG: `%s` ran past 2 s\n", text.c_str());
          return 4;
        }
      CHECK(state);
      if (!timed)  // the form a user's op runs in
        timed = true,
        first_ms[calls].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      CHECK(cudaMemcpy(y.data(), p.dy, n * sizeof(float), cudaMemcpyDeviceToHost));
      const std::vector<float> expected =
          calls ? patch::emulate_all(c, p.x.data(), n, k, on_gpu) : std::vector<float>{};
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const float want = calls ? expected[i] : patch::emulate(c, p.x[i], k);
        const std::array<float, stencil::lanes> xs = {p.x[i], p.x[i], p.x[i], p.x[i]};
        if (!patch::same_result(want, y[i]) && bad++ == 0)
          std::printf(
              "WRONG RESULT: `%s` %s, k = %d at %zu: %.9g, expected %.9g (the machine code means %.9g%s)\n",
              text.c_str(), vec ? "vec" : "scalar", k, i, y[i], want,
              vec ? patch::simulate_vec(st, c, xs, k)[0] : patch::simulate(st, c, p.x[i], k),
              calls ? " with the host's functions" : "");
      }
      ++ran, wrong += bad > 0, vec_runs += vec, call_runs += calls;
    }
  }
  for (bool calls : {false, true}) {
    std::vector<double>& ms = first_ms[calls];
    std::sort(ms.begin(), ms.end());
    if (!ms.empty())
      std::printf(
          "a new op's first result (text to a 2^20 map's output, k = 1)%s: p10 %.3f, median %.3f, p90 %.3f "
          "ms over %zu ops\n",
          calls ? ", of an op that calls functions" : "", ms[ms.size() / 10], ms[ms.size() / 2],
          ms[ms.size() * 9 / 10], ms.size());
  }
  CHECK(cudaFree(values));
  std::printf("fuzz: %d ops, %d runs (%d of them vec, %d of an op that calls functions), %d wrong; refused:",
              count, ran, vec_runs, call_runs, wrong);
  for (const auto& [why, times] : refusals) std::printf(" %d (%s);", times, why.c_str());
  std::printf("\n");
  return wrong ? 3 : 0;
}

// nvcc's build of the op in the vec images' form: what the patched vec kernel is measured against.
template <class Op = lesson::quadratic>
__global__ void nvcc_vec_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k) {
  stencil::map_vec(x, y, n, k, [](const float(&xj)[stencil::lanes], float(&out)[stencil::lanes]) {
    for (int l = 0; l < stencil::lanes; ++l) out[l] = Op{}(xj[l]);
  });
}

// Two ops that call functions, as the catalogue writes them (sine, exp_sin_cos): nvcc's vec kernel
// of each against the patched call image, at k = 1 and 256. The patched output must be nvcc's to
// the bit (the slots are nvcc's own code), and nvcc's within float's error of float64 on a sample.
struct sine {
  template <class T>
  __host__ __device__ T operator()(T v) const {
    return sin(v);
  }
};
struct exp_sin_cos {
  template <class T>
  __host__ __device__ T operator()(T v) const {
    return exp(sin(v) * cos(v));
  }
};
template <class Op>
int compare_call(const patch::stencils& st, const lesson::problem& p, const char* text) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const patch::compiled c = patch::compile(st, text);
  const loaded kernel(c);
  std::printf("`%s`: patched into %s and loaded in %.1f us\n", text, c.vec_kernel.c_str(),
              std::chrono::duration<double, std::micro>(clock::now() - start).count());
  const unsigned grid = lesson::grid((p.n + stencil::lanes - 1) / stencil::lanes);
  std::vector<float> mine(p.n), nvcc(p.n);
  int status = 0;
  for (int k : {1, 256}) {
    CHECK(cudaMemset(p.dy, 0xff, p.bytes()));
    nvcc_vec_kernel<Op><<<grid, lesson::block>>>(p.dx, p.dy, p.n, k);
    CHECK(cudaMemcpy(nvcc.data(), p.dy, p.bytes(), cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(p.dy, 0xff, p.bytes()));
    kernel.launch(p.dx, p.dy, p.n, k);
    CHECK(cudaMemcpy(mine.data(), p.dy, p.bytes(), cudaMemcpyDeviceToHost));
    std::size_t differ = 0;
    double worst = 0;
    for (std::size_t i = 0; i < p.n; ++i) {
      differ += std::memcmp(&mine[i], &nvcc[i], 4) != 0;
      if (i % 4093 == 0) {  // a sample against float64
        double ref = 0;
        for (int j = 0; j < k; ++j) ref += Op{}(double(p.x[i] + float(j) * lesson::delta));
        worst = std::max(worst, std::fabs(nvcc[i] - ref) / std::max(std::fabs(ref), 1e-30));
      }
    }
    const float nvcc_ms =
        lesson::time_ms([&] { nvcc_vec_kernel<Op><<<grid, lesson::block>>>(p.dx, p.dy, p.n, k); });
    const float patch_ms = lesson::time_ms([&] { kernel.launch(p.dx, p.dy, p.n, k); });
    std::printf(
        "  k = %3d: nvcc_vec %8.3f ms, patch_vec %8.3f ms: %.2f× (%zu of %zu elements differ from nvcc's; "
        "its "
        "worst relative error on a sample %.1e)\n",
        k, nvcc_ms, patch_ms, patch_ms / nvcc_ms, differ, p.n, worst);
    if (differ || worst > (k + 4) * 1e-6) status = 3;
  }
  return status;
}

std::string beside_this_program(const char* file) {
  std::string self(4096, '\0');
  const ssize_t got = readlink("/proc/self/exe", self.data(), self.size());
  self.resize(got > 0 ? std::size_t(got) : 0);
  return self.substr(0, self.rfind('/') + 1) + file;
}

int main(int argc, char** argv) {
  using clock = std::chrono::steady_clock;
  auto us = [](clock::time_point a) {
    return std::chrono::duration<double, std::micro>(clock::now() - a).count();
  };
  const bool dump = argc > 2 && std::string(argv[1]) == "--dump";
  const std::string text = dump && argc > 3 ? argv[3] : "x * x + 2 * x + 1";  // the text a user typed
  if (argc > 2 && std::string(argv[1]) == "--check") try {                    // no GPU needed
      return check(patch::learn(beside_this_program("17_"), false), std::atoi(argv[2]));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "copy-and-patch cannot run here: %s\n", e.what());
      return 1;
    }
  lesson::problem p;
  auto start = clock::now();
  patch::stencils st;
  try {
    st = patch::learn(beside_this_program("17_"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "copy-and-patch cannot run here: %s; use 08 or 16 for this op\n", e.what());
    return 1;
  }
  std::printf(
      "learnt %d operations, their latencies and %zu images from the stencils in %.0f us (once a process)\n",
      int(stencil::count), st.images.size(), us(start));
  start = clock::now();
  const patch::compiled op = patch::compile(st, text);
  const double patched_us = us(start);
  start = clock::now();
  const loaded kernel(op);
  const double load_us = us(start);
  CHECK(cudaMemset(p.dy, 0xff, p.bytes()));
  kernel.launch(p.dx, p.dy, p.n, 1);
  CHECK(cudaDeviceSynchronize());
  std::printf(
      "`%s`: parsed and patched (%d steps, into %s and %s) in %.1f us, loaded in %.1f us, first result %.3f "
      "ms "
      "after the text\n",
      text.c_str(), op.steps, op.kernel.c_str(),
      op.vec_kernel.empty() ? "no vec image" : op.vec_kernel.c_str(), patched_us, load_us,
      (patched_us + load_us) / 1e3 + us(start) / 1e3);
  if (argc > 2 && std::string(argv[1]) == "--fuzz") return fuzz(st, p, std::atoi(argv[2]));
  if (dump) {
    std::ofstream(argv[2], std::ios::binary)
        .write(reinterpret_cast<const char*>(op.image.data()), std::streamsize(op.image.size()));
    std::printf("the patched image is in %s (cuobjdump -sass -fun %s %s)\n", argv[2], op.vec_kernel.c_str(),
                argv[2]);
    return 0;
  }
  if (op.vec_kernel.empty()) std::printf("no vec image for it: %s\n", op.vec_refused.c_str());
  const unsigned vec_grid = lesson::grid((p.n + stencil::lanes - 1) / stencil::lanes);
  const int status = lesson::compare(
      p, {{"patched", [&](int k) { kernel.launch(p.dx, p.dy, p.n, k, nullptr, false); }},
          {"nvcc_vec", [&](int k) { nvcc_vec_kernel<<<vec_grid, lesson::block>>>(p.dx, p.dy, p.n, k); }},
          {"patch_vec", [&](int k) { kernel.launch(p.dx, p.dy, p.n, k); }}});
  return std::max({status, compare_call<sine>(st, p, "sin(x)"),
                   compare_call<exp_sin_cos>(st, p, "exp(sin(x) * cos(x))")});
}
#endif  // CDL_COPY_AND_PATCH_MECHANISM
#endif  // !CDL_STENCILS && !CDL_IMAGES
