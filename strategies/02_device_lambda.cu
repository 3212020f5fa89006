// 02 - Extended device lambdas: the op written where it is launched.
//
// Idea.    With nvcc --extended-lambda, a lambda written in host code and marked __device__ can be
//          passed to a kernel template: its closure is a functor type the compiler makes, so the
//          call inlines as 01's does. It captures by value what it uses: numbers, device pointers,
//          other functors; never a host reference, and `this` only as *this.
// Cost.    Nothing at run time (01's machine code). At build time: the enclosing function must be
//          named (not a lambda, nor one whose return type is deduced), and each lambda written is a
//          type of its own, so a kernel of its own.
// Use it   for a one-off op beside its launch (a Thrust or CUB call with a custom transform), and to
//          capture a run-time parameter without writing a struct.
// Build.   nvcc -std=c++20 -O3 -arch=native --extended-lambda -I. strategies/02_device_lambda.cu -o lambda
// See it.  cuobjdump -sass lambda: the kernel's name carries __nv_dl_wrapper_t<...>, and
//          its instructions are the template's: the op inline, no CALL through a register.
// Suite.   strategies/suite/02_device_lambda.cu: the lambda around every op, in every workload.
#include "strategies/lesson.cuh"

// The lambda must sit in a named function, not in main's own lambdas below.
void launch_lambda(const lesson::problem& p, int k, float two) {
  // `two` is a run-time value, captured by value into the closure the kernel receives.
  auto op = [two] __device__(float x) { return x * x + two * x + 1.0f; };
  lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k, op);
}

int main() {
  lesson::problem p;
  return lesson::compare(p, {{"lambda", [&](int k) { launch_lambda(p, k, 2.0f); }}});
}
