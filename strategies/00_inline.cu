// 00 - Inline: the op's expression written into the kernel, a kernel per op.
//
// Idea.    No mechanism at all: the loop and the op are one piece of code, so the compiler sees
//          everything and schedules the op's arithmetic with the loads around it. Every other way
//          of passing a function is measured against what this kernel does.
// Cost.    Nothing at run time. In code: a kernel written again for every op (the suite writes
//          them from one X-macro list), and the op cannot be chosen after the build.
// Use it   for one op in one place; for more, the template functor (01) is this kernel written once.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/00_inline.cu -o 00_inline
// See it.  cuobjdump -sass 00_inline: quadratic_kernel's loop and map_kernel<quadratic>'s are the same
//          instructions (FFMAs, no CALL, no BRX): what 01 compiles to is this.
// Suite.   strategies/suite/00_inline.cu: every op's kernels in every workload, from the X-macros.
#include "strategies/lesson.cuh"

// y[i] = sum over j < k of (v*v + 2v + 1) at v = x[i] + j*delta: the map loop with the op pasted in.
__global__ void quadratic_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) {
    const float v = x[i] + float(j) * lesson::delta;
    acc += v * v + 2.0f * v + 1.0f;
  }
  y[i] = acc;
}

int main() {
  lesson::problem p;
  return lesson::compare(p, {{"inline", [&](int k) {
                                quadratic_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k);
                              }}});
}
