// 04 - Device function pointers: the op is an address, called through a register.
//
// Idea.    A __device__ function has an address in the GPU's code space, which host code cannot
//          take (&f there is the host stub's). A __device__ variable holds it, set when the module
//          loads; the host reads it once with cudaMemcpyFromSymbol and passes it to the kernel.
// Cost.    An indirect call per evaluation: nothing is inlined, arguments and results go through
//          the calling convention, registers the callee may clobber are saved around the call, and
//          the loop cannot be scheduled around it. Memory-bound loops hide it; at large k every
//          call pays (the report's dispatch figure, and its resources table for the registers).
// Use it   when the op is chosen at run time from many compiled into the program, or per element
//          from a table, and a kernel per op (01) or a switch (03) is impractical.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/04_function_pointer.cu -o 04_function_pointer
// See it.  cuobjdump -sass 04_function_pointer: CALL.REL.NOINC R<n> in the k loop where the template
//          has the op's FFMAs, and quadratic_fn a function of its own ending in RET.
// Suite.   strategies/suite/04_function_pointer.cu: the table variant, every workload, and why it
//          is compiled once per workload (ptxas sizes the call for every function it could reach).
#include "strategies/lesson.cuh"

__device__ float quadratic_fn(float x) { return lesson::quadratic{}(x); }

using op_pointer = float (*)(float);
__device__ op_pointer quadratic_ptr = quadratic_fn;  // the address, set on the device at load

// The invoker: a pointer, by value; each call goes through it.
struct pointer_op {
  op_pointer f;
  __device__ float operator()(float v) const { return f(v); }
};

int main() {
  lesson::problem p;
  op_pointer f = nullptr;
  CHECK(cudaMemcpyFromSymbol(&f, quadratic_ptr, sizeof f));  // once: it synchronises
  return lesson::compare(p, {{"pointer", [&](int k) {
                                lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k,
                                                                                         pointer_op{f});
                              }}});
}
