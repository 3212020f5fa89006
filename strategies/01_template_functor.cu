// 01 - Template functor: the op is a type, and the kernel a template over it.
//
// Idea.    template <class F> __global__ void map_kernel(..., F f) calls f(x). Instantiated with a
//          functor type (a struct with a __host__ __device__ operator()), the call is resolved when
//          the kernel is compiled and inlined. CUB, Thrust and the standard algorithms take
//          functions this way, and every other lesson measures itself against it.
// Cost.    Nothing at run time. At build time, a kernel per op (and type, and form): the op must be
//          known when the program is built, and choosing one at run time is a host-side switch over
//          every instantiation (below), an op per element not at all (the suite groups by op).
// Use it   by default: whenever the set of ops is known at build time.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/01_template_functor.cu -o 01_template_functor
// See it.  cuobjdump -sass 01_template_functor: map_kernel<quadratic>'s loop holds the op's FFMAs,
//          with no CALL and no BRX; each instantiation is a kernel of its own.
// Suite.   strategies/suite/01_template_functor.cu: every op, type, form and workload.
#include "strategies/lesson.cuh"

// A second op, as a user would add one: a new type, and with it a new kernel.
struct cube {
  __host__ __device__ float operator()(float x) const { return x * x * x; }
};

// The op chosen at run time, among the types compiled in: a host-side switch picks the kernel.
void launch(int op, const lesson::problem& p, int k) {
  switch (op) {
    case 0:
      lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k, lesson::quadratic{});
      break;
    default: lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k, cube{}); break;
  }
}

int main() {
  lesson::problem p;
  const int quadratic_id = 0;  // as a program would read it at run time
  return lesson::compare(p, {{"functor", [&](int k) { launch(quadratic_id, p, k); }}});
}
