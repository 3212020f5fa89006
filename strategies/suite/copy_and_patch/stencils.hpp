// Strategy 17's stencils as the host and the device both know them: the operations a step can be
// (each one instruction), what each computes, the markers that find a step in nvcc's machine code,
// the images' sizes and the functions a call image's slots run. stencils.cu compiles them; the
// engine (learn, lower, write, decode) reads what nvcc made of them.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>

#ifdef __CUDACC__
#define CDL_PATCH_HD __host__ __device__
#else
#define CDL_PATCH_HD
#endif

namespace cdl::copy_and_patch::stencil {

// The map's step between two evaluations of an element (x + j * delta, common/skeletons/map.cuh's
// map_delta): a power of two, so that x + j * delta rounds alike on the host and the GPU.
inline constexpr float delta = 1.0f / 4096;

// The operations a step can be, each one instruction: a + c, a - c, c - a, a * c, min, max with a
// constant, a * c + b, a * b + c and -(a * b) + c (a multiply fused into the add that follows it, as
// nvcc contracts them), a compared with a constant (1.0 where it holds, else 0.0: FSET.BF); then the
// first five's forms with a second register b and the comparisons of two registers; a * b + c and
// -(a * b) + c of three registers; then mask (PRMT: 1.0 to all ones, 0.0 to zero) and sel (LOP3:
// a's bits pick b's, the others c's). A condition is three of them where nvcc writes FSETP and FSEL:
// no step reads or writes a predicate register, so the patch has none to give out or to prove free.
// The list, once: the enum, the names, and one stencil kernel each (cdl_op_<name>) come from it.
// clang-format off
#define CDL_STENCIL_OPS(X) \
  X(add) X(sub) X(rsub) X(mul) X(min) X(max) X(fmac) X(fmar) X(fnmar) X(lt) X(le) X(gt) X(ge) X(eq) X(ne) \
  X(addr) X(subr) X(mulr) X(minr) X(maxr) X(ltr) X(ler) X(eqr) X(ner) X(fmarr) X(fnmarr) \
  X(mask) X(sel)
// clang-format on
#define CDL_ENUMERATOR(o) o,
#define CDL_NAME(o) #o,
enum op : int { CDL_STENCIL_OPS(CDL_ENUMERATOR) count };
inline constexpr const char* names[count] = {CDL_STENCIL_OPS(CDL_NAME)};
CDL_PATCH_HD constexpr bool has_constant(int o) { return o < addr; }
// The registers a step reads: a; b (a second value, fmac's addend, the other factor of fmar, fnmar,
// fmarr and fnmarr, sel's if-true); c (fmarr's and fnmarr's addend, sel's if-false).
CDL_PATCH_HD constexpr int registers_read(int o) {
  return o == sel || o == fmarr || o == fnmarr                             ? 3
         : o == fmac || o == fmar || o == fnmar || (o >= addr && o <= ner) ? 2
                                                                           : 1;
}

// Whether ptxas may merge a step of o into a step of p that reads it, so that a chain of the two is
// fewer instructions than steps: Blackwell's three-input min and max (FMNMX3) take a min of a min in
// one. The stencils keep such steps apart with an add between them (each stencil's chain, and the
// pairs' in place of p), and the latency from o to p, never seen, is o's longest to any operation
// (learn.cpp): a result's latency is its producer's pipeline's.
CDL_PATCH_HD constexpr bool merges(int o, int p) {
  const auto family = [](int x) { return x == min || x == minr ? 1 : x == max || x == maxr ? 2 : 0; };
  return family(o) != 0 && family(o) == family(p);
}

inline constexpr std::uint32_t marker_bits = 0x3f9e0001u;  // step s's constant: a float no code computes
inline constexpr int helper_marker = 2048;                 // sel's stencils: their masks' constants
inline constexpr int chains = 8;                           // values the region keeps apart: its registers
inline constexpr int region_sizes[] = {4, 8, 16, 32, 64};  // steps of the images an op can be written into
inline constexpr int learn_steps = 8;                      // steps of each operation's stencil
inline constexpr int pair_steps = 2 * count + 2;  // operation o's latency chain: add, o, 0, o, 1, ...
// The vec images (steps a lane, chains): the sizes close, since each unused place still issues an
// instruction a lane: one apart from none (x alone, or a product the sum computes: write.hpp) to
// 10, then less than a quarter of the larger unused. The list, once: the sizes and one kernel each
// (cdl_image_vec_<steps>) come from it.
// clang-format off
#define CDL_VEC_IMAGES(X) \
  X(0, 1) X(1, 1) X(2, 2) X(3, 2) X(4, 2) X(5, 3) X(6, 4) X(7, 4) X(8, 4) X(9, 5) X(10, 5) X(12, 6) X(14, 7) \
  X(16, 8) X(20, 8) X(24, 8) X(32, 8) X(40, 8) X(48, 8) X(64, 8)
// clang-format on
#define CDL_VEC_STEPS(steps, P) steps,
inline constexpr int vec_region_sizes[] = {CDL_VEC_IMAGES(CDL_VEC_STEPS)};
inline constexpr int lanes = 4;           // the vec images' elements a thread
inline constexpr int lane_markers = 256;  // lane l's step s: marker l * 256 + s

// fminf and fmaxf as the GPU computes them (FMNMX): a NaN loses to a number, and -0 is below +0
// (the host's std::fmin may give either zero).
inline float gpu_min(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? b : a;
  return a < b || (a == b && std::signbit(a)) ? a : b;
}
inline float gpu_max(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? b : a;
  return a > b || (a == b && !std::signbit(a)) ? a : b;
}

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
    case min: return gpu_min(a, constant);
    case max: return gpu_max(a, constant);
    case fmac: return std::fma(a, constant, b);
    case fmar: return std::fma(a, b, constant);
    case fnmar: return std::fma(-a, b, constant);
    case lt: return truth(a < constant);
    case le: return truth(a <= constant);
    case gt: return truth(a > constant);
    case ge: return truth(a >= constant);
    case eq: return truth(a == constant);
    case ne: return truth(a != constant);  // C's !=: true where either is NaN
    case addr: return a + b;
    case subr: return a - b;
    case mulr: return a * b;
    case minr: return gpu_min(a, b);
    case maxr: return gpu_max(a, b);
    case ltr: return truth(a < b);
    case ler: return truth(a <= b);
    case eqr: return truth(a == b);
    case ner: return truth(a != b);
    case fmarr: return std::fma(a, b, c);
    case fnmarr: return std::fma(-a, b, c);
    case mask: return std::bit_cast<float>(bits(a) >> 23 & 1 ? 0xffffffffu : 0u);
    case sel: return std::bit_cast<float>((bits(a) & bits(b)) | (~bits(a) & bits(c)));
  }
  return NAN;
}

// The functions a call image's slots can run, each slot's chosen by a word of __constant__ memory
// that the patch sets in the image's copy (none stays for a word never patched); and a division by a
// value, a / b, whose nvcc code no stencil can hold (a reciprocal whose reader waits on a barrier,
// not a stall, then a slow path for operands outside the normal range): a slot's too, chain 0 over
// chain 1, so that a quotient is nvcc's own, correctly rounded. An image of n slots holds an op of
// fewer calls: a slot the op does not need (fn_pass: one that splits a window of more steps than the
// image's windows have places, or one before or after the op's steps) runs exp on whatever its
// register holds and nothing reads the result (a case of no code would change nvcc's code for every
// slot).
#define CDL_SLOT_FUNCTIONS(X) X(sin, sinf) X(cos, cosf) X(exp, expf) X(sqrt, sqrtf)
#define CDL_FUNCTION_ENUMERATOR(name, f) fn_##name,
enum function : unsigned { no_function, CDL_SLOT_FUNCTIONS(CDL_FUNCTION_ENUMERATOR) fn_div, fn_pass };
inline constexpr unsigned pass_word = fn_exp;  // what a passing slot's word is set to
// The call images' slots: a cubin of images for each count (calls_<n>.cubin; strategies/CMakeLists.txt
// reads this line), an op in the first whose images hold it of those with at least its calls. Every
// count is code the build compiles and a check assembles for each architecture, so they thin out
// where fewer ops call that often: an op of seven to eleven calls goes into twelve slots, the spare
// ones splitting its longest windows.
inline constexpr int call_counts[] = {1, 2, 3, 4, 6, 12};
inline constexpr int max_calls = call_counts[std::size(call_counts) - 1];
struct call_shape {
  int chains, steps;  // a call image's chains (P), and its segments' steps (at least 2P - 1)
  int most;           // the most slots of the images built in this shape
};
// The call images, smallest first (an op goes into the first that holds it): the chains keep values
// across the slots, the segments' steps are the windows' places a lane. Each image is code the build
// compiles and each check assembles, so a shape is built only for the counts of slots whose ops use
// it: one or no chain across a slot for up to three (an op with fewer calls than slots keeps x across
// the first), the longest windows for one slot alone, and none where ptxas makes x again in the
// image (the learning refuses it). The list, once: the shapes and one kernel each
// (cdl_call_vec_<calls>_<P>_<steps>, of no code where the count is more than the shape's most) come
// from it.
#define CDL_CALL_SHAPES(X) \
  X(1, 1, 3) X(1, 3, 3) X(2, 3, 3) X(3, 5, 12) X(4, 7, 12) X(6, 11, 12) X(8, 15, 12) X(8, 31, 1)
#define CDL_CALL_SHAPE(P, S, most) {P, S, most},
inline constexpr call_shape call_shapes[] = {CDL_CALL_SHAPES(CDL_CALL_SHAPE)};
inline constexpr std::uint32_t slot_marker = 0x7eadbe00u;  // slot g's word before it is patched: + g
// The host's (check() runs it): the GPU's to the bit for a quotient, correctly rounded on both, not
// for the others. v is the argument, w a quotient's divisor.
inline float call(unsigned f, float v, float w) {
#define CDL_HOST_FUNCTION(name, fn) \
  if (f == fn_##name) return fn(v);
  CDL_SLOT_FUNCTIONS(CDL_HOST_FUNCTION)
  return f == fn_div ? v / w : f == fn_pass ? v : NAN;
}

}  // namespace cdl::copy_and_patch::stencil
