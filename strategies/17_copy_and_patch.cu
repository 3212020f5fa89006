// 17 - Copy-and-patch: a native kernel for a user's op with no compiler, by patching machine code.
//
// Idea.    A kernel's machine code (SASS, in the cubin nvcc writes) is 16-byte instructions: an
//          opcode, register numbers in fixed fields, an immediate, and scheduling bits that tell
//          the warp scheduler how many cycles to wait before the next instruction (the hardware
//          does not wait for a fixed-latency result by itself). nvcc compiles, once at build time,
//          the map kernel with a region of steps r = f(r, x, c), each a marker constant, and one
//          stencil kernel per operation. At start the program learns from those cubins, by
//          comparing them, each operation's instruction, which of its bytes are which register,
//          and from a chain of every pair of operations the cycles one result takes to reach the
//          next (Xu and Kjolstad's copy-and-patch, OOPSLA 2021, learnt instead of written).
//          A new op is parsed (08's language), its values given registers of the region, its
//          instructions written into the region with stalls computed from the learnt latencies,
//          and the image loaded with cudaLibraryLoadData: no compiler, no PTX.
// Cost.    Per new op: microseconds of patching, then the load of the image (the whole stencil
//          cubin here: its size sets the load's cost), then the speed of nvcc's own instructions
//          (the region's are the same ones) in a loop that is not unrolled. Once a process:
//          reading the stencils. The language is what one instruction each can do: + - * min max, and
//          division by a power of two; anything else (sin, sqrt, a condition) is refused with
//          the route to use instead, as is an op with more live values than the region's registers.
// Use it   where a new op must run at native speed within a millisecond: a user typing formulas,
//          the first tier of a tiered dispatch (10) in place of the interpreter (16).
// Breaks   on another architecture's encoding (the stencils are learnt per cubin, so a new toolkit
//          that moves them is learnt again) and where the learning's checks fail: it refuses then.
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_STENCILS -I. \
//            strategies/17_copy_and_patch.cu -o 17_stencils.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/17_copy_and_patch.cu common/expression.cpp \
//            -o 17_copy_and_patch
// See it.  17_copy_and_patch --dump op.cubin, then cuobjdump -sass op.cubin: the op's FMUL and FADD
//          in the region between the loop's x + j * delta and its FADD into the sum, beside nvcc's build of
//          the same op (lesson::map_kernel in cuobjdump -sass 17_copy_and_patch).
// Check it. 17_copy_and_patch --check N, with no GPU: N random ops compiled, each image decoded and
//          run on the host against the op's steps. On a GPU,
//          17_copy_and_patch --fuzz N: N random ops of the language, each compiled or refused,
//          run at k = 1 and 3 and compared bit for bit with its steps computed on the host (where
//          they differ, the decoded machine code says whether the instructions or their timing is
//          wrong), each launch under a time limit; and under compute-sanitizer --tool memcheck.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "strategies/lesson.cuh"

namespace stencil {

// The operations a step can be, each one instruction: a + c, a - c, c - a, a * c, min, max with a
// constant; then the same with a second register b.
enum op : int { add, sub, rsub, mul, min, max, addr, subr, mulr, minr, maxr, count };
inline constexpr const char* names[count] = {"add",  "sub",  "rsub", "mul",  "min", "max",
                                             "addr", "subr", "mulr", "minr", "maxr"};
__host__ __device__ constexpr bool has_constant(int o) { return o < addr; }

inline constexpr std::uint32_t marker_bits = 0x3f9e0001u;  // step s's constant: a float no code computes
inline constexpr int chains = 8;                           // values the region keeps apart: its registers
inline constexpr int region_sizes[] = {4, 8, 16, 32, 64};  // steps of the images an op can be written into
inline constexpr int learn_steps = 8;                      // steps of each operation's stencil
inline constexpr int pair_steps = 2 * count * count;       // the latency chain: a, b for every pair (a, b)

// What each operation computes: on the host, for the emulation and the decoded machine code.
inline float evaluate(int o, float a, float b, float c) {
  const float r[count] = {a + c, a - c, c - a, a * c,           std::fmin(a, c), std::fmax(a, c),
                          a + b, a - b, a * b, std::fmin(a, b), std::fmax(a, b)};
  return r[o];
}

template <int O>
__device__ __forceinline__ float apply(float a, float b, float c) {
  if constexpr (O == add) return a + c;
  if constexpr (O == sub) return a - c;
  if constexpr (O == rsub) return c - a;
  if constexpr (O == mul) return a * c;
  if constexpr (O == min) return fminf(a, c);
  if constexpr (O == max) return fmaxf(a, c);
  if constexpr (O == addr) return a + b;
  if constexpr (O == subr) return a - b;
  if constexpr (O == mulr) return a * b;
  if constexpr (O == minr) return fminf(a, b);
  if constexpr (O == maxr) return fmaxf(a, b);
}

#ifdef CDL_STENCILS
// Step s of S: chain s % P gets f(its value, x, marker s); in an image (P chains) the last P - 1
// steps fold chains 1.. into chain 0 (r0 += r_c * marker), so that everything after the region
// waits for its last step and the compiler keeps every step inside the loop. The empty asm after
// each step tells the compiler that every chain may have changed there, so that no step's code
// depends on its neighbours (without it, c - a chains alternate signs) and each stays one
// instruction.
template <int P, int S, int s, class Op>
__device__ __forceinline__ void step(float (&r)[chains], float x, Op op_of) {
  const float c = __uint_as_float(marker_bits + s);
  if constexpr (P == 1 || s < S - (P - 1))
    r[s % P] = op_of(std::integral_constant<int, s>{}, r[s % P], x, c);
  else
    r[0] = fmaf(r[s - (S - P)], c, r[0]);
  asm volatile(""
               : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3]), "+f"(r[4]), "+f"(r[5]), "+f"(r[6]),
                 "+f"(r[7]));
}
template <int P, int S, class Op>
__device__ __forceinline__ void region(float (&r)[chains], float x, Op op_of) {
  [&]<int... s>(std::integer_sequence<int, s...>) { (step<P, S, s>(r, x, op_of), ...); }
  (std::make_integer_sequence<int, S>{});
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
// step (x + marker: a new value each step, so that no chain of min(r, w) folds to one instruction).
template <int O>
__device__ __forceinline__ float with_marker(float a, float x, float c) {
  if constexpr (has_constant(O))
    return apply<O>(a, x, c);
  else
    return apply<O>(a, x + c, c);
}
template <int O>
struct every {  // every step operation O
  template <int s>
  __device__ float operator()(std::integral_constant<int, s>, float a, float x, float c) const {
    return with_marker<O>(a, x, c);
  }
};
struct pairs {  // step s: a, b, a, b, ... for every ordered pair (a, b)
  template <int s>
  __device__ float operator()(std::integral_constant<int, s>, float a, float x, float c) const {
    constexpr int pair = s / 2, o = s % 2 == 0 ? pair / count : pair % count;
    return with_marker<o>(a, x, c);
  }
};

#define CDL_KERNEL(name, P, S, ...)                                                                  \
  extern "C" __global__ void name(const float* __restrict__ x, float* __restrict__ y, std::size_t n, \
                                  int k) {                                                           \
    map<P, S>(x, y, n, k, __VA_ARGS__{});                                                            \
  }
// The images ops are written into: every step an `add` or a fold, each found by its marker; as many
// chains as half the steps, up to 8, their registers the pool an op's values are given.
CDL_KERNEL(cdl_image_4, 2, 4, every<add>)
CDL_KERNEL(cdl_image_8, 4, 8, every<add>)
CDL_KERNEL(cdl_image_16, chains, 16, every<add>)
CDL_KERNEL(cdl_image_32, chains, 32, every<add>)
CDL_KERNEL(cdl_image_64, chains, 64, every<add>)
// One stencil per operation: one chain of 8 steps of that operation.
CDL_KERNEL(cdl_op_add, 1, learn_steps, every<add>)
CDL_KERNEL(cdl_op_sub, 1, learn_steps, every<sub>)
CDL_KERNEL(cdl_op_rsub, 1, learn_steps, every<rsub>)
CDL_KERNEL(cdl_op_mul, 1, learn_steps, every<mul>)
CDL_KERNEL(cdl_op_min, 1, learn_steps, every<min>)
CDL_KERNEL(cdl_op_max, 1, learn_steps, every<max>)
CDL_KERNEL(cdl_op_addr, 1, learn_steps, every<addr>)
CDL_KERNEL(cdl_op_subr, 1, learn_steps, every<subr>)
CDL_KERNEL(cdl_op_mulr, 1, learn_steps, every<mulr>)
CDL_KERNEL(cdl_op_minr, 1, learn_steps, every<minr>)
CDL_KERNEL(cdl_op_maxr, 1, learn_steps, every<maxr>)
// One chain through every ordered pair of operations: the cycles each result takes to the next.
CDL_KERNEL(cdl_pairs, 1, pair_steps, pairs)
#endif
}  // namespace stencil

#ifndef CDL_STENCILS
#include <array>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
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
std::map<std::string, kernel_code> kernels_of(const bytes& elf) {
  auto u16 = [&](std::size_t at) { return std::uint16_t(elf.at(at) | elf.at(at + 1) << 8); };
  auto u32 = [&](std::size_t at) { return std::uint32_t(u16(at) | std::uint32_t(u16(at + 2)) << 16); };
  auto u64 = [&](std::size_t at) { return std::uint64_t(u32(at)) | std::uint64_t(u32(at + 4)) << 32; };
  if (elf.size() < 64 || elf[0] != 0x7f || elf[1] != 'E' || elf[4] != 2)
    throw std::runtime_error("not a 64-bit ELF file: not a cubin");
  const std::uint64_t shoff = u64(0x28);
  const unsigned shentsize = u16(0x3a), shnum = u16(0x3c), names = u16(0x3e);
  const std::uint64_t strings = u64(shoff + names * shentsize + 0x18);
  std::map<std::string, kernel_code> out;
  for (unsigned s = 0; s < shnum; ++s) {
    const std::size_t h = shoff + s * shentsize;
    const std::string name(reinterpret_cast<const char*>(&elf.at(strings + u32(h))));
    if (name.rfind(".text.", 0) == 0)
      out[name.substr(6)] = {std::size_t(u64(h + 0x18)), std::size_t(u64(h + 0x20)) / 16};
  }
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
// The same instruction of operation o but for its registers (and its constant): bytes 2-4 (and 4-7).
bool same_but_operands(const insn& a, const insn& b, int o) {
  for (int f = 0; f < 13; ++f)
    if (a[f] != b[f] && !(f >= 2 && f <= (stencil::has_constant(o) ? 7 : 4))) return false;
  return true;
}

struct failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define LEARN_CHECK(cond, ...) \
  if (!(cond)) throw failed("the stencils do not read as expected: " + std::string(__VA_ARGS__))

// --- What the program learns from the cubin -----------------------------------------------------------

struct form {            // an operation's instruction
  insn code{};           // as the compiler wrote it
  int a = 3, b = -1;     // the fields of the value it reads and of the second register (reg forms)
  bool negated = false;  // the immediate is -c (a - c is written a + (-c))
};
struct image {  // an image an op is written into
  std::string kernel;
  std::vector<std::size_t> steps;  // file offsets of its steps' instructions, in the order they run
  int x = -1;                      // the register holding x + j * delta on entry
  int result = -1;                 // where the sum after the region reads the op's value
  std::vector<int> pool;           // every register the region may write
};
struct stencils {
  bytes cubin;
  int arch = 0;  // the architecture they were compiled for: 90 for sm_90
  std::vector<image> images;
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

// One chain's steps (P = 1), found from x: each step reads the one before in field 3, an operation
// with a constant found by its marker; one with a second register reads the one before and x +
// marker s, in fields 3 and 4. Returns their instruction numbers.
std::vector<std::size_t> trace(const bytes& cubin, const kernel_code& k, const std::string& name,
                               const std::vector<int>& ops, const stencils* known) {
  std::vector<std::size_t> at_step;
  int current = x_register(cubin, k, name);
  std::size_t n = 0;
  for (std::size_t s = 0; s < ops.size(); ++s) {
    const bool constant = stencil::has_constant(ops[s]);
    const int w = constant ? -1 : marked_register(cubin, k, int(s), name);
    for (;; ++n) {
      LEARN_CHECK(n < k.count, name + ": step " + std::to_string(s) + " not found");
      const insn i = at(cubin, k.offset + 16 * n);
      bool negated;
      if (constant ? marker_of(i, negated) == int(s) && i[3] == current
                   : (i[3] == current && i[4] == w) || (i[4] == current && i[3] == w))
        break;
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
  const std::vector<std::size_t> steps =
      trace(cubin, k, name, std::vector<int>(stencil::learn_steps, o), nullptr);
  form f;
  f.code = at(cubin, k.offset + 16 * steps[1]);
  if (stencil::has_constant(o)) {
    bool negated;
    marker_of(f.code, negated);
    f.negated = negated;
  } else {  // step 1 reads step 0's value and x + marker 1
    f.b = f.code[3] == marked_register(cubin, k, 1, name) ? 3 : 4, f.a = 7 - f.b;
  }
  for (std::size_t s = 1; s < steps.size(); ++s) {
    const insn i = at(cubin, k.offset + 16 * steps[s]);
    LEARN_CHECK(same_but_operands(i, f.code, o), name + ": its steps are different instructions");
    bool negated;
    LEARN_CHECK(!stencil::has_constant(o) || (marker_of(i, negated), negated == f.negated),
                name + ": its constant's sign changes");
    // a - b keeps b in its field; where the operation commutes the compiler may swap them
    LEARN_CHECK(o != stencil::subr || i[f.b] == marked_register(cubin, k, int(s), name),
                name + ": a - b's fields change");
  }
  return f;
}

// Latencies: in the chain a, b, a, b, ... for every pair, each step waits for the one before, so
// the cycles the compiler leaves between them are what the first's result takes to reach the second.
void learn_latencies(stencils& st, const std::map<std::string, kernel_code>& ks) {
  std::vector<int> ops;
  for (int s = 0; s < stencil::pair_steps; ++s)
    ops.push_back(s % 2 == 0 ? s / 2 / stencil::count : s / 2 % stencil::count);
  const kernel_code k = find(ks, "cdl_pairs");
  const std::vector<std::size_t> steps = trace(st.cubin, k, "cdl_pairs", ops, &st);
  for (auto& row : st.latency) std::fill(std::begin(row), std::end(row), 0);
  for (std::size_t s = 0; s + 1 < steps.size(); ++s) {
    int cycles = 0;
    for (std::size_t n = steps[s]; n < steps[s + 1]; ++n) cycles += stall(at(st.cubin, k.offset + 16 * n));
    int& l = st.latency[ops[s]][ops[s + 1]];
    l = l == 0 ? cycles : std::min(l, cycles);
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

// The stencils learnt from the cubin at `path`; with `for_this_gpu`, refused unless they are this
// GPU's architecture's (without it, for the host-only check, which runs no kernel).
stencils learn(const std::string& path, bool for_this_gpu = true) {
  stencils st;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " (the first Build. line writes it)");
  st.cubin.assign(std::istreambuf_iterator<char>(in), {});
  const auto ks = kernels_of(st.cubin);
  st.arch = int(st.cubin[0x31]);  // the ELF header's flags name the SM in their second byte
  int device = 0, major = 0, minor = 0;
  if (for_this_gpu) {
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    if (major * 10 + minor != st.arch)
      throw std::runtime_error("the stencils are sm_" + std::to_string(st.arch) + "'s and this GPU is sm_" +
                               std::to_string(major * 10 + minor) + "'s: build them for it");
  }
  for (int o = 0; o < stencil::count; ++o) st.forms[o] = learn_form(st.cubin, ks, o);
  learn_latencies(st, ks);
  for (int steps : stencil::region_sizes) st.images.push_back(learn_image(st.cubin, ks, steps));
  return st;
}

// --- A user's op: parsed, its values given the region's registers, written in, scheduled ------------

struct step {
  int op;
  int dest, a, b;      // virtual registers: 0 is x
  float constant = 0;  // the operations with a constant
};
struct refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  auto emit = [&](int op, int a, int b, float c) {
    out.push_back({op, next, a, b, c});
    return value{false, 0, next++};
  };
  auto materialise = [&](value x) {  // a constant as a register: max then min with it, whatever was there
    if (!x.constant) return x.reg;
    emit(stencil::max, 0, -1, x.c);
    return emit(stencil::min, next - 1, -1, x.c).reg;
  };
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
      default:
        throw refused("`" +
                      std::string(cdl::expr::function_name(e.op).empty() ? "a condition or select"
                                                                         : cdl::expr::function_name(e.op)) +
                      "` has no one-instruction stencil");
    }
  }
  return materialise(v[p.result]);
}

// Physical registers for the virtual ones, from the image's pool, x where it already is; a value's
// register is free again after its last read. The result is copied into the register the sum reads.
std::vector<step> allocate(std::vector<step> code, int result, const image& im) {
  std::vector<int> last(code.size() + 1, -1), reg(code.size() + 1, -1);
  for (std::size_t n = 0; n < code.size(); ++n)
    for (int r : {code[n].a, code[n].b})
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
    for (int r : {s.a, s.b})
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
};

// What the patched kernel computes for one element, in float on the host, step by step: the test
// of the machine code (its result must be this, bit for bit).
float emulate(const compiled& c, float x0, int k) {
  float acc = 0.0f;
  std::vector<float> v(c.code.size() + 1);
  for (int j = 0; j < k; ++j) {
    v[0] = std::fma(float(j), lesson::delta, x0);
    for (const step& s : c.code) {
      v[std::size_t(s.dest)] =
          stencil::evaluate(s.op, v[std::size_t(s.a)], s.b >= 0 ? v[std::size_t(s.b)] : 0.0f, s.constant);
    }
    acc += v[std::size_t(c.result)];
  }
  return acc;
}

// The image with the op's instructions in its region (the rest of the region: v + -0 on a dead
// register), then every stall set so that each instruction issues only once what it reads is ready.
compiled write(const stencils& st, const image* im, const std::vector<step>& code) {
  compiled out{st.cubin, im->kernel, int(code.size()), {}, 0};
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
    const form& f = st.forms[s.op];
    unsigned char* slot = &out.image[im->steps[n]];
    insn i = f.code;
    i[dest_field] = (unsigned char)s.dest;
    i[f.a] = (unsigned char)s.a;
    if (f.b >= 0) i[f.b] = (unsigned char)s.b;
    if (stencil::has_constant(s.op)) {
      std::uint32_t c;
      std::memcpy(&c, &s.constant, 4);
      set_immediate(i, f.negated ? c ^ 0x80000000u : c);
    }
    std::copy_n(slot + 13, 3, i.begin() + 13);  // the image's own barriers and stall at this place:
    std::copy(i.begin(), i.end(), slot);        // its stall may also cover an instruction around it
    clear_reuse(slot);
    int t = cycle;
    for (int r : {s.a, s.b})
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

// The smallest image whose region holds the op and whose registers suffice for its live values.
compiled compile(const stencils& st, const std::string& text) {
  std::vector<step> code;
  const int result = select(cdl::expr::parse(text), code);
  std::string why =
      "more steps than the largest region (" + std::to_string(st.images.back().steps.size()) + ")";
  for (const image& im : st.images) {
    if (int(im.steps.size()) < int(code.size())) continue;
    try {
      const std::vector<step> placed = allocate(code, result, im);
      if (placed.size() <= im.steps.size()) {
        compiled c = write(st, &im, placed);
        c.code = code, c.result = result;
        return c;
      }
    } catch (const refused& e) {
      why = e.what();
    }
  }
  throw refused(why);
}

// The region of a patched image decoded with the learnt forms and run on a register file: what the
// machine code means, on the host. Where the GPU's result differs from this but this equals
// emulate(), the fault is in the scheduling bits, not in the instructions.
float simulate(const stencils& st, const compiled& c, float x0, int k) {
  const image* im = nullptr;
  for (const image& i : st.images)
    if (i.kernel == c.kernel) im = &i;
  float acc = 0.0f, reg[256];
  for (int j = 0; j < k; ++j) {
    std::fill(std::begin(reg), std::end(reg), NAN);
    reg[im->x] = std::fma(float(j), lesson::delta, x0);
    for (std::size_t offset : im->steps) {
      const insn i = at(c.image, offset);
      int o = 0;
      while (o < stencil::count && !same_but_operands(i, st.forms[o].code, o)) ++o;
      if (o == stencil::count) return NAN;
      const form& f = st.forms[o];
      std::uint32_t bits = immediate(i) ^ (f.negated ? 0x80000000u : 0u);
      float constant;
      std::memcpy(&constant, &bits, 4);
      reg[i[dest_field]] = stencil::evaluate(o, reg[i[f.a]], f.b >= 0 ? reg[i[f.b]] : 0.0f, constant);
    }
    acc += reg[im->result];
  }
  return acc;
}

}  // namespace patch

// Loads a patched image and launches it: the runtime's library calls, as 08's lesson loads PTX.
struct loaded {
  cudaLibrary_t library{};
  cudaKernel_t kernel{};
  explicit loaded(const patch::compiled& c) {
    CHECK(cudaLibraryLoadData(&library, c.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CHECK(cudaLibraryGetKernel(&kernel, library, c.kernel.c_str()));
  }
  loaded(const loaded&) = delete;  // one unload per load
  loaded& operator=(const loaded&) = delete;
  ~loaded() { cudaLibraryUnload(library); }
  void launch(const float* x, float* y, std::size_t n, int k, cudaStream_t stream = nullptr) const {
    void* args[] = {&x, &y, &n, &k};
    CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), lesson::grid(n), lesson::block, args, 0,
                           stream));
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
  switch (pick(8)) {
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
  int compiled = 0, wrong = 0, refused = 0;
  for (int t = 0; t < count; ++t) {
    const std::string text =
        random_op(rng, 1 + int(rng() % 7u));  // deeper than --fuzz's: the large images too
    patch::compiled c;
    try {
      c = patch::compile(st, text);
    } catch (const patch::refused&) {
      ++refused;
      continue;
    }
    ++compiled;
    for (int i = 0; i < 64; ++i) {
      const float x0 = x(rng), want = patch::emulate(c, x0, 3), got = patch::simulate(st, c, x0, 3);
      if (!(want == got || (std::isnan(want) && std::isnan(got)))) {
        std::printf("WRONG MACHINE CODE: `%s` at x = %.9g: it computes %.9g, the steps %.9g\n", text.c_str(),
                    x0, got, want);
        ++wrong;
        break;
      }
    }
  }
  std::printf("check: %d ops, %d compiled (%d refused), %d with wrong machine code\n", count, compiled,
              refused, wrong);
  return wrong ? 3 : 0;
}

// Random ops of the language, each compiled (or refused, with its reason counted), run at k = 1 and
// 3 on 2^16 elements and compared bit for bit with emulate(), each launch under a time limit.
int fuzz(const patch::stencils& st, const lesson::problem& p, int count) {
  std::mt19937 rng(2026);
  std::vector<float> y(std::size_t(1) << 20);
  std::map<std::string, int> refusals;
  std::vector<double> first_ms;  // the text to the result of a 2^20 map at k = 1, ready
  int ran = 0, wrong = 0;
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
    for (int k : {1, 3}) {
      const std::size_t n = k == 1 ? y.size() : std::size_t(1) << 16;
      if (k != 1) CHECK(cudaMemset(p.dy, 0xff, n * sizeof(float)));
      kernel.launch(p.dx, p.dy, n, k);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      cudaError_t state;
      while ((state = cudaStreamQuery(nullptr)) == cudaErrorNotReady)
        if (std::chrono::steady_clock::now() > deadline) {
          std::printf("HANG: `%s` ran past 2 s\n", text.c_str());
          return 4;
        }
      CHECK(state);
      if (k == 1)
        first_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      CHECK(cudaMemcpy(y.data(), p.dy, n * sizeof(float), cudaMemcpyDeviceToHost));
      std::size_t bad = 0;
      auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
      for (std::size_t i = 0; i < n; ++i) {
        const float want = patch::emulate(c, p.x[i], k);
        if (!same(want, y[i]) && bad++ == 0)
          std::printf("WRONG RESULT: `%s` k = %d at %zu: %.9g, expected %.9g (the machine code means %.9g)\n",
                      text.c_str(), k, i, y[i], want, patch::simulate(st, c, p.x[i], k));
      }
      ++ran, wrong += bad > 0;
    }
  }
  std::sort(first_ms.begin(), first_ms.end());
  if (!first_ms.empty())
    std::printf(
        "a new op's first result (text to a 2^20 map's output, k = 1): p10 %.3f, median %.3f, p90 %.3f ms "
        "over %zu ops\n",
        first_ms[first_ms.size() / 10], first_ms[first_ms.size() / 2], first_ms[first_ms.size() * 9 / 10],
        first_ms.size());
  std::printf("fuzz: %d ops, %d runs, %d wrong; refused:", count, ran, wrong);
  for (const auto& [why, times] : refusals) std::printf(" %d (%s);", times, why.c_str());
  std::printf("\n");
  return wrong ? 3 : 0;
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
  const std::string text = "x * x + 2 * x + 1";             // the text a user typed
  if (argc > 2 && std::string(argv[1]) == "--check") try {  // no GPU needed
      return check(patch::learn(beside_this_program("17_stencils.cubin"), false), std::atoi(argv[2]));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "copy-and-patch cannot run here: %s\n", e.what());
      return 1;
    }
  lesson::problem p;
  auto start = clock::now();
  patch::stencils st;
  try {
    st = patch::learn(beside_this_program("17_stencils.cubin"));
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
      "`%s`: parsed and patched (%d steps) in %.1f us, loaded in %.1f us, first result %.3f ms after the "
      "text\n",
      text.c_str(), op.steps, patched_us, load_us, (patched_us + load_us) / 1e3 + us(start) / 1e3);
  if (argc > 2 && std::string(argv[1]) == "--fuzz") return fuzz(st, p, std::atoi(argv[2]));
  if (argc > 2 && std::string(argv[1]) == "--dump") {
    std::ofstream(argv[2], std::ios::binary)
        .write(reinterpret_cast<const char*>(op.image.data()), std::streamsize(op.image.size()));
    std::printf("the patched image is in %s (cuobjdump -sass %s)\n", argv[2], argv[2]);
  }
  return lesson::compare(p, {{"patched", [&](int k) { kernel.launch(p.dx, p.dy, p.n, k); }}});
}
#endif  // CDL_COPY_AND_PATCH_MECHANISM
#endif  // CDL_STENCILS
