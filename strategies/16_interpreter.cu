// 16 - An interpreter: the op as data, run by a kernel built ahead of time.
//
// Idea.    The op a user types, in 08's language, is encoded on the host into steps of a small
//          machine (common/bytecode.hpp: encode, then lower), with no compiler, and passed to a
//          kernel built with the program. A kernel cannot index registers with a number it reads
//          (they would live in local memory), so each step writes one accumulator and is one case
//          of a switch whose code names what it reads: the accumulator, x, a slot or a number
//          (bytecode::run_steps). A step is decoded once for sixteen lanes, sixteen steps of k.
// Cost.    No compile: the encoding takes microseconds, a new op's first result is one launch.
//          Each call pays a step's fetch and branches and numbers read from memory: a few times
//          the template at k = 256, near it at k = 1 (the report's dispatch figure).
// Use it   for a user's op until a compiled kernel is ready (10's tiered dispatch), or where no
//          compiler can run.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/16_interpreter.cu common/expression.cpp \
//            common/bytecode.cpp -o 16_interpreter
// See it.  cuobjdump -res-usage 16_interpreter: no local memory beyond sin's reduction's stack;
//          cuobjdump -sass: the step loop inside the k loop, a branch chain per step.
// Suite.   strategies/suite/16_interpreter.cu: the vec form, float64.
#include <chrono>

#include "common/bytecode.hpp"
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
    bc::run_steps<float, lanes, slots>(p.code, length, p.constants, v, acc, slot);  // acc = op(v), by lane
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
