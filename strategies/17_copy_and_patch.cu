// 17 - Copy-and-patch: a new op's machine code with no compiler, by patching machine code nvcc wrote.
//
// Idea.    A kernel's machine code (SASS, in the cubin nvcc writes) is 16-byte instructions: an
//          opcode, register numbers in fixed bytes, a 32-bit immediate, and scheduling bits that
//          tell the warp scheduler how many cycles to wait before the next instruction issues (the
//          hardware does not wait for an arithmetic result by itself). So nvcc compiles, once, ahead
//          of time: stencils (a chain of one operation, each step marked by a constant no code
//          computes) and an image (the map kernel with a region of marked steps where an op goes).
//          At run time the program learns from the stencils each operation's instruction (the
//          steps of a chain differ only in their operands: comparing them says which bytes those
//          are, and the stalls between them the cycles a result takes), finds the image's region,
//          writes the op's instructions there with their registers, constants and stalls, and
//          loads the copy with cudaLibraryLoadData: no compiler, no PTX, microseconds of work.
//          (Xu and Kjolstad's copy-and-patch, OOPSLA 2021, learnt from the compiler's output instead
//          of written by hand.) This lesson does it for the quadratic, x * x + 2 * x + 1: three
//          operations, three instructions.
// Cost.    Per new op: the patch (microseconds) and the image's load; then nvcc's own instructions
//          in nvcc's own loop, the region's unused places an instruction each. Once a process: the
//          learning. What the patch cannot write (a division by a value, a function: sequences
//          with branches, not one instruction) needs more than this: the suite's engine, which
//          runs them in slots of nvcc's own code.
// Use it   where a new op must run as machine code within a millisecond of its text: a user
//          typing formulas, the first tier of a tiered dispatch (10) in place of the interpreter.
// Breaks   where a learnt assumption fails: another architecture moves a field, ptxas fuses two
//          steps into one instruction (Blackwell's three-input min). The learning checks what it
//          takes (each step one instruction, each reading the one before) and refuses the cubin,
//          saying which check failed. The suite's engine learns, and its host check passes, for
//          sm_75 to sm_120 (ctest copy_and_patch_check_sm_XX); it has run on a GPU on sm_90 alone.
// See it.  17_copy_and_patch --dump op.cubin, then cuobjdump -sass -fun cdl_image op.cubin: the
//          region's FMUL, FFMA and FADD where nvcc wrote four FADDs of markers (cuobjdump -sass
//          -fun cdl_image 17_image.cubin), and a NOP-like FADD RZ in the fourth place.
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_STENCILS -I. \
//            strategies/17_copy_and_patch.cu -o 17_stencils.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -cubin -fmad=false -DCDL_IMAGE -I. \
//            strategies/17_copy_and_patch.cu -o 17_image.cubin
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/17_copy_and_patch.cu -o 17_copy_and_patch
// Read on. The suite's form (strategies/suite/17_copy_and_patch.cu) writes every op of 08's
//          language this way: the engine in strategies/suite/copy_and_patch/ learns two dozen
//          operations and their latencies pairwise, gives an op's values the region's registers,
//          interleaves four elements a thread in vec images, and runs sin, cos, exp and sqrt in
//          call images' slots; its tests decode every image on the host and fuzz it on the GPU.
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "strategies/lesson.cuh"

// --- The device code nvcc compiles ahead of time -------------------------------------------------

inline constexpr std::uint32_t marker_bits = 0x3f9e0001u;  // step s's constant: this float plus s, bit by bit
inline constexpr int chain = 8;                            // steps of each operation's stencil
inline constexpr int region = 4;                           // places of the image's region

#if defined(CDL_STENCILS) || defined(CDL_IMAGE)
__device__ __forceinline__ float marker(int s) { return __uint_as_float(marker_bits + unsigned(s)); }
// An empty asm that says r may have changed: no step's code may depend on its neighbours (nvcc would
// fold r + m0 + m1 into one add), so each stays one instruction.
__device__ __forceinline__ void keep(float& r) { asm volatile("" : "+f"(r)); }

// The map (lesson::map_kernel's loop) with body(r, x) in place of the op.
template <class Body>
__device__ __forceinline__ void map(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k,
                                    Body body) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 1  // one copy of the body: each marker once
  for (int j = 0; j < k; ++j) {
    const float xj = x[i] + float(j) * lesson::delta;
    float r = xj;
    body(r, xj);
    acc += r;
  }
  y[i] = acc;
}
#endif

#ifdef CDL_STENCILS
// Each operation a chain: every step reads the one before. add: r + c (its constant the marker);
// fmac: x * c + r; mulr: r * x, which has no constant, so two marked adds bound its chain.
extern "C" __global__ void learn_add(const float* x, float* y, std::size_t n, int k) {
  map(x, y, n, k, [](float& r, float) {
#pragma unroll
    for (int s = 0; s < chain; ++s) r = r + marker(s), keep(r);
  });
}
extern "C" __global__ void learn_fmac(const float* x, float* y, std::size_t n, int k) {
  map(x, y, n, k, [](float& r, float xj) {
#pragma unroll
    for (int s = 0; s < chain; ++s) r = fmaf(xj, marker(s), r), keep(r);
  });
}
extern "C" __global__ void learn_mulr(const float* x, float* y, std::size_t n, int k) {
  map(x, y, n, k, [](float& r, float xj) {
    r = r + marker(0), keep(r);
#pragma unroll
    for (int s = 0; s < chain; ++s) r = r * xj, keep(r);
    r = r + marker(1), keep(r);
  });
}
#endif

#ifdef CDL_IMAGE
// The image: the region, marked steps, the first reading x and the last reading it again (x * c +
// r), so that x stays in its register through the region, where an op may read it at any step.
extern "C" __global__ void cdl_image(const float* x, float* y, std::size_t n, int k) {
  map(x, y, n, k, [](float& r, float xj) {
#pragma unroll
    for (int s = 0; s + 1 < region; ++s) r = r + marker(s), keep(r);
    r = fmaf(xj, marker(region - 1), r), keep(r);
  });
}
#endif

#if !defined(CDL_STENCILS) && !defined(CDL_IMAGE)
// --- Reading the cubin: an ELF file, each kernel's machine code in a section .text.<kernel> -------

using bytes = std::vector<unsigned char>;
struct insn {  // one instruction: its 16 bytes, and where it is in the file
  const unsigned char* b;
  std::size_t offset;
};
struct failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bytes read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw failed("cannot read " + path + " (its Build. line writes it)");
  return bytes(std::istreambuf_iterator<char>(in), {});
}

// A kernel's instructions: the section header table (e_shoff at 0x28; 64-byte headers; names in the
// section e_shstrndx points to) gives each section's name, offset and size.
std::vector<insn> kernel(const bytes& elf, const std::string& name) {
  auto u = [&](std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | elf.at(at + std::size_t(i));
    return v;
  };
  if (elf.size() < 64 || elf[0] != 0x7f || elf[1] != 'E') throw failed("not an ELF file: not a cubin");
  const std::uint64_t table = u(0x28, 8), names = u(table + 64 * u(0x3e, 2) + 0x18, 8);
  for (std::uint64_t s = 0; s < u(0x3c, 2); ++s) {
    const std::uint64_t h = table + 64 * s;
    if (reinterpret_cast<const char*>(&elf.at(names + u(h, 4))) != ".text." + name) continue;
    std::vector<insn> out;
    for (std::uint64_t at = u(h + 0x18, 8); at < u(h + 0x18, 8) + u(h + 0x20, 8); at += 16)
      out.push_back({&elf[at], at});
    return out;
  }
  throw failed(name + " is not in the cubin");
}

// The fields this lesson reads and writes: byte 2 the register written, 3 the first read, 4-7 the
// second operand (a 32-bit immediate, or a register in byte 4), 8 a third register; the stall (the
// cycles before the next instruction issues) in bits 1-4 of byte 13, the operand reuse flags in
// byte 15. The learning below checks each against what nvcc wrote.
std::uint32_t immediate(const unsigned char* i) {
  return i[4] | i[5] << 8 | i[6] << 16 | std::uint32_t(i[7]) << 24;
}
int stall(const unsigned char* i) { return (i[13] >> 1) & 15; }
void set_stall(unsigned char* i, int cycles) {
  i[13] = (unsigned char)((i[13] & ~0x1e) | (std::min(cycles, 15) << 1));
}
int marker_of(const unsigned char* i) {  // step s's marker in the immediate, or -1
  const std::uint32_t s = immediate(i) - marker_bits;
  return s < 64 ? int(s) : -1;
}

// --- Learning: each operation's instruction, its operand fields and its latency ----------------------

enum op { add, fmac, mulr, ops };
const char* const op_names[] = {"add", "fmac", "mulr"};
struct form {
  op o = add;
  std::array<unsigned char, 16> code{};  // a step as nvcc wrote it
  int latency = 0;                       // cycles from its result to the next step's read
};

// The chain's steps: marked ones (add, fmac) in marker order; mulr's, the instructions between its
// two marked adds. Each must read the one before (add: byte 3; fmac: its addend, byte 8; mulr: byte 3
// or 4, whichever ptxas gave the chain): one instruction a step, as the stencil's asm asked.
std::vector<insn> steps_of(const std::vector<insn>& code, op o) {
  std::vector<insn> out;
  if (o != mulr) {
    for (int s = 0; s < chain; ++s)
      for (const insn& i : code)
        if (marker_of(i.b) == s) out.push_back(i);
  } else {
    std::size_t first = 0, last = 0;
    for (std::size_t n = 0; n < code.size(); ++n) {
      if (marker_of(code[n].b) == 0) first = n;
      if (marker_of(code[n].b) == 1) last = n;
    }
    if (last > first)
      out.assign(code.begin() + std::ptrdiff_t(first) + 1, code.begin() + std::ptrdiff_t(last));
  }
  const std::string name = op_names[o];
  if (out.size() != chain) throw failed(name + ": its chain is not one instruction a step");
  for (std::size_t s = 1; s < out.size(); ++s) {
    const int before = out[s - 1].b[2];
    const bool reads =
        o == fmac ? out[s].b[8] == before : out[s].b[3] == before || (o == mulr && out[s].b[4] == before);
    if (!reads) throw failed(name + ": step " + std::to_string(s) + " does not read the step before");
  }
  return out;
}

form learn(const std::vector<insn>& code, op o) {
  const std::vector<insn> s = steps_of(code, o);
  form f;
  std::copy_n(s[1].b, 16, f.code.begin());
  // Compare the steps: the bytes that differ between two of them can only be operands (2-8), never
  // the opcode or the modifiers, else they are not one instruction and the patch cannot write them.
  for (std::size_t n = 1; n < s.size(); ++n)
    for (int b = 0; b < 13; ++b)
      if (s[n].b[b] != s[1].b[b] && (b < 2 || b > 8))
        throw failed(std::string(op_names[o]) + ": byte " + std::to_string(b) + " changes between steps");
  if (o != mulr)  // the constant: the markers, one apart, in bytes 4-7
    for (std::size_t n = 1; n < s.size(); ++n)
      if (immediate(s[n].b) != marker_bits + n)
        throw failed(std::string(op_names[o]) + ": no constant in 4-7");
  if (o == fmac)  // x * c + r: x in byte 3 at every step
    for (const insn& i : s)
      if (i.b[3] != s[0].b[3]) throw failed("fmac: its multiplicand is not one register");
  f.o = o;
  // The latency: the stalls from a step to the next, which reads it, the least over the chain.
  f.latency = 99;
  for (std::size_t n = 0; n + 1 < s.size(); ++n) {
    int cycles = 0;
    for (std::size_t at = s[n].offset; at < s[n + 1].offset; at += 16)
      cycles += stall(s[n].b + (at - s[n].offset));
    f.latency = std::min(f.latency, cycles);
  }
  return f;
}

// --- The patch: the quadratic's three instructions in the image's region ------------------------------

struct image {
  std::vector<std::size_t> places;  // the region's four steps' offsets
  int x, result;                    // the register holding x, and where the sum reads the op's value
};
image find_region(const bytes& cubin) {
  const std::vector<insn> code = kernel(cubin, "cdl_image");
  image im{};
  for (int s = 0; s < region; ++s)
    for (const insn& i : code)
      if (marker_of(i.b) == s) im.places.push_back(i.offset);
  if (im.places.size() != region) throw failed("cdl_image: its region is not one instruction a step");
  im.x = cubin[im.places[0] + 3], im.result = cubin[im.places[region - 1] + 2];
  if (cubin[im.places[region - 1] + 3] != im.x) throw failed("cdl_image: x is not kept through the region");
  for (int s = 0; s < region; ++s)  // no step writes x
    if (cubin[im.places[std::size_t(s)] + 2] == im.x) throw failed("cdl_image: a step writes x's register");
  return im;
}

// An operation's form with this step's registers and constant, put in the place at `at`, keeping
// the place's scheduling bits but for its operand reuse flags (nvcc's no longer apply).
void put(bytes& out, std::size_t at, const form& f, int dest, int a, int b, float constant) {
  std::array<unsigned char, 16> i = f.code;
  i[2] = (unsigned char)dest, i[3] = (unsigned char)a;
  if (f.o == mulr) {
    i[4] = (unsigned char)b;  // a * b: a register where the others have their constant
  } else {
    const std::uint32_t c = std::bit_cast<std::uint32_t>(constant);
    for (int k = 0; k < 4; ++k) i[4 + k] = (unsigned char)(c >> 8 * k);
    if (f.o == fmac) i[8] = (unsigned char)b;  // a * c + b
  }
  std::copy(out.begin() + std::ptrdiff_t(at) + 13, out.begin() + std::ptrdiff_t(at) + 16, i.begin() + 13);
  i[15] &= (unsigned char)~0x3c;
  std::copy(i.begin(), i.end(), out.begin() + std::ptrdiff_t(at));
}

// x * x + 2 * x + 1 as nvcc writes it (t = x * x; t = x * 2 + t; t = t + 1), each step into the
// result's register; the fourth place RZ = RZ + -0, which writes nothing. Each instruction's stall
// covers its result's latency, as the next step reads it; the instruction before the region (which
// makes x) waits as long as the longest latency, so that an FMUL reads x no sooner than nvcc's FADD.
bytes patch(const bytes& cubin, const image& im, const form (&f)[ops]) {
  bytes out = cubin;
  const int t = im.result, x = im.x, zero = 255;  // 255 is RZ: reads 0, keeps nothing
  put(out, im.places[0], f[mulr], t, x, x, 0);
  put(out, im.places[1], f[fmac], t, x, t, 2.0f);
  put(out, im.places[2], f[add], t, t, 0, 1.0f);
  put(out, im.places[3], f[add], zero, zero, 0, -0.0f);
  set_stall(&out[im.places[0]], std::max(stall(&out[im.places[0]]), f[mulr].latency));
  set_stall(&out[im.places[1]], std::max(stall(&out[im.places[1]]), f[fmac].latency));
  set_stall(&out[im.places[2]], std::max(stall(&out[im.places[2]]), f[add].latency));
  const int longest = std::max({f[add].latency, f[fmac].latency, f[mulr].latency});
  set_stall(&out[im.places[0] - 16], std::max(stall(&out[im.places[0] - 16]), longest));
  return out;
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
  bytes cubin, stencils;
  form forms[ops];
  image im;
  auto start = clock::now();
  try {
    stencils = read(beside_this_program("17_stencils.cubin"));
    cubin = read(beside_this_program("17_image.cubin"));
    for (int o = 0; o < ops; ++o)
      forms[o] = learn(kernel(stencils, "learn_" + std::string(op_names[o])), op(o));
    im = find_region(cubin);
  } catch (const failed& e) {
    std::fprintf(stderr, "copy-and-patch cannot run here: %s\n", e.what());
    return 1;
  }
  std::printf("learnt add, fmac and mulr (latencies %d, %d, %d cycles) and the image's region in %.0f us\n",
              forms[add].latency, forms[fmac].latency, forms[mulr].latency, us(start));
  start = clock::now();
  const bytes patched = patch(cubin, im, forms);
  const double patch_us = us(start);
  if (argc > 2 && std::string(argv[1]) == "--dump") {
    std::ofstream(argv[2], std::ios::binary)
        .write(reinterpret_cast<const char*>(patched.data()), std::streamsize(patched.size()));
    std::printf("the patched image is in %s (cuobjdump -sass -fun cdl_image %s)\n", argv[2], argv[2]);
    return 0;
  }
  lesson::problem p;
  start = clock::now();
  cudaLibrary_t library;
  cudaKernel_t image_kernel;
  CHECK(cudaLibraryLoadData(&library, patched.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CHECK(cudaLibraryGetKernel(&image_kernel, library, "cdl_image"));
  std::printf("patched in %.1f us, loaded in %.1f us, no compiler\n", patch_us, us(start));
  const int status =
      lesson::compare(p, {{"patched", [&](int k) {
                             void* args[] = {&p.dx, &p.dy, &p.n, &k};
                             CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(image_kernel),
                                                    lesson::grid(p.n), lesson::block, args, 0, nullptr));
                           }}});
  CHECK(cudaLibraryUnload(library));
  return status;
}
#endif
