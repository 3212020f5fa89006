// 16 - An interpreter: the op as data, run by a kernel built ahead of time.
//
// Idea.    The op a user types, in 08's language, is encoded on the host into a few instructions of
//          a register machine (common/bytecode.hpp), with no compiler, and passed to a kernel built
//          with the program. Each instruction is decoded once for eight lanes (here eight steps of
//          the k loop), and an operand's register is picked by a switch whose cases name it with a
//          constant, so the machine's registers stay in registers, not in local memory.
// Cost.    No compile: the encoding takes microseconds and a new op's first result is one launch.
//          Each call pays a decode, a branch per operand and per op, and copies of the lanes: a few
//          times the template at k = 256, near it at k = 1 (the report's dispatch figure).
// Use it   for a user's op until a compiled kernel is ready (10's tiered dispatch), or where no
//          compiler can run.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/16_interpreter.cu common/expression.cpp \
//            common/bytecode.cpp -o 16_interpreter
// See it.  cuobjdump -res-usage 16_interpreter: interpreter_kernel's stack is sin's reduction's, no
//          more; cuobjdump -sass: the instruction loop inside the k loop, a branch per switch.
// Suite.   strategies/suite/16_interpreter.cu: the vec form, float64, and every op of the language.
#include <chrono>

#include "common/bytecode.hpp"
#include "strategies/lesson.cuh"

namespace bc = cdl::bytecode;

// The program travels with the launch, in the constant bank: a warp reads each instruction once.
struct program {
  bc::instruction code[bc::max_instructions];
  float constants[bc::max_constants];
  int length;
  std::uint8_t result;
};
constexpr int lanes = 8;  // steps of the k loop a thread runs at once
using file = float[bc::max_registers][lanes];

// An operand's lanes: each case names its register with a constant (r[3], never r[o]).
__device__ __forceinline__ void fetch(const program& p, const file& r, std::uint8_t o, float (&out)[lanes]) {
  if (o & bc::constant_bit) {
    for (int l = 0; l < lanes; ++l) out[l] = p.constants[o & (bc::max_constants - 1)];
    return;
  }
#define REGISTER(i)                                   \
  case i:                                             \
    for (int l = 0; l < lanes; ++l) out[l] = r[i][l]; \
    return;
  switch (o) {
    REGISTER(0) REGISTER(1) REGISTER(2) REGISTER(3) REGISTER(4) REGISTER(5) REGISTER(6) REGISTER(7)
  }
#undef REGISTER
  for (int l = 0; l < lanes; ++l) out[l] = 0.0f;  // a byte past the file reads zero
}
__device__ __forceinline__ void store(file& r, std::uint8_t d, const float (&v)[lanes]) {
#define REGISTER(i)                                 \
  case i:                                           \
    for (int l = 0; l < lanes; ++l) r[i][l] = v[l]; \
    return;
  switch (d) {
    REGISTER(0) REGISTER(1) REGISTER(2) REGISTER(3) REGISTER(4) REGISTER(5) REGISTER(6) REGISTER(7)
  }
#undef REGISTER
}

// Operand b on lane l: one number for all lanes, or a register's lanes.
__device__ __forceinline__ float lane(float b, int) { return b; }
__device__ __forceinline__ float lane(const float (&b)[lanes], int l) { return b[l]; }

// An op of two or three operands on every lane.
template <class B>
__device__ __forceinline__ void binary(const program& p, const file& r, bc::instruction in,
                                       const float (&a)[lanes], const B& b, float (&v)[lanes]) {
  float c[lanes];
#define LANES(e)                              \
  for (int l = 0; l < lanes; ++l) v[l] = (e); \
  return;
  switch (in.code) {
    case bc::op::add: LANES(a[l] + lane(b, l))
    case bc::op::subtract: LANES(a[l] - lane(b, l))
    case bc::op::multiply: LANES(a[l] * lane(b, l))
    case bc::op::divide: LANES(a[l] / lane(b, l))
    case bc::op::fma: fetch(p, r, in.c, c); LANES(a[l] * lane(b, l) + c[l])
    case bc::op::less: LANES(float(a[l] < lane(b, l)))
    case bc::op::less_equal: LANES(float(a[l] <= lane(b, l)))
    case bc::op::greater: LANES(float(a[l] > lane(b, l)))
    case bc::op::greater_equal: LANES(float(a[l] >= lane(b, l)))
    case bc::op::equal: LANES(float(a[l] == lane(b, l)))
    case bc::op::not_equal: LANES(float(a[l] != lane(b, l)))
    case bc::op::select: fetch(p, r, in.c, c); LANES(a[l] != 0.0f ? lane(b, l) : c[l])
    case bc::op::min: LANES(lane(b, l) < a[l] ? lane(b, l) : a[l])
    case bc::op::max: LANES(a[l] < lane(b, l) ? lane(b, l) : a[l])
    default: LANES(a[l])
  }
#undef LANES
}

__device__ __forceinline__ void execute(const program& p, file& r, bc::instruction in) {
  float a[lanes], v[lanes];
  fetch(p, r, in.a, a);
  switch (in.code) {  // the ops of one operand apart, so that sin's long code is compiled once
    case bc::op::negate:
      for (int l = 0; l < lanes; ++l) v[l] = -a[l];
      break;
    case bc::op::sin:
      for (int l = 0; l < lanes; ++l) v[l] = sinf(a[l]);
      break;
    case bc::op::cos:
      for (int l = 0; l < lanes; ++l) v[l] = cosf(a[l]);
      break;
    case bc::op::exp:
      for (int l = 0; l < lanes; ++l) v[l] = expf(a[l]);
      break;
    case bc::op::sqrt:
      for (int l = 0; l < lanes; ++l) v[l] = sqrtf(a[l]);
      break;
    default:
      if (in.b & bc::constant_bit) {
        binary(p, r, in, a, p.constants[in.b & (bc::max_constants - 1)], v);
      } else {
        float b[lanes];
        fetch(p, r, in.b, b);
        binary(p, r, in, a, b, v);
      }
  }
  store(r, in.dst, v);
}

// lesson::map_kernel's loop, eight steps a pass: lane s holds x + (j + s) * delta.
__global__ void interpreter_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k,
                                   const __grid_constant__ program p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r[bc::max_registers][lanes] = {}, out[lanes], acc = 0.0f;
  const int length = p.length < 0 ? 0 : p.length > bc::max_instructions ? bc::max_instructions : p.length;
#pragma unroll 1
  for (int j = 0; j < k; j += lanes) {
    for (int s = 0; s < lanes; ++s) r[0][s] = x[i] + float(j + s) * lesson::delta;
#pragma unroll 1
    for (int in = 0; in < length; ++in) execute(p, r, p.code[in]);
    fetch(p, r, p.result, out);
    for (int s = 0; s < lanes; ++s)
      if (j + s < k) acc += out[s];
  }
  y[i] = acc;
}

int main() {
  lesson::problem p;
  const auto start = std::chrono::steady_clock::now();
  const bc::program b = bc::encode(cdl::expr::parse("x * x + 2 * x + 1"));  // the text a user typed
  program device{};
  std::copy(b.code.begin(), b.code.end(), device.code);
  std::copy(b.constants.begin(), b.constants.end(), device.constants);
  device.length = int(b.code.size());
  device.result = b.result;
  std::printf("parsed and encoded in %.1f us, no compiler:\n%s\n",
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
              bc::to_string(b).c_str());
  return lesson::compare(p, {{"interpreter", [&](int k) {
                                interpreter_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k,
                                                                                         device);
                              }}});
}
