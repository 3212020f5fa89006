// The whole question in one file: four ways to hand an op to a kernel, each calling it k times per
// element, checked against a float64 CPU reference and timed with CUDA events beside a
// device-to-device copy of the same bytes (strategies/lesson.cuh: the loop, the reference, the
// validation and the timing every lesson shares). The suite (strategies/suite/, common/) does this
// for every op, workload and way, with the controls a measurement needs (an L2 flush, repetitions,
// a noise threshold); this file is the idea without them, to read first. Build and run it alone,
// from the repository's root:
//
//   nvcc -std=c++20 -O3 -arch=native -I. examples/dispatch_in_one_file.cu -o dispatch && ./dispatch
//
// (the project builds it too: build/release/examples/dispatch_in_one_file). The four ways:
//   template the op a type, the kernel a template over it: inlined, one instantiation per op;
//   switch   an op id passed at run time and a switch at every call: every op compiled in;
//   pointer  a __device__ function pointer read from a symbol: a call through a register;
//   virtual  an object made on the device, its virtual function called through its vtable.
// At k = 1 each element costs one call and the kernel waits on memory, so every way should be
// near the copy; at k = 256 the calls are the work, and what each way costs per call shows.
// y[i] = sum over j < k of op(x[i] + j/4096): the arguments differ so that no call can be merged
// with another, and summed because op(op(x)) overflows within a few steps.
#include <new>

#include "strategies/lesson.cuh"

using lesson::quadratic;
__device__ float quadratic_fn(float x) { return quadratic{}(x); }

// The skeleton every way shares is lesson::map_kernel<F>: only the invoker F differs, so a
// difference in time is the call. The template way passes quadratic{} itself.

// switch: the id is a kernel argument and the switch is inside the call. The id does not change,
// so the compiler may hoist the switch out of the k loop (here it does, for id 0) and pay it once
// per thread; the empty asm hides the id's value from it, so that this way pays a switch at every
// call. Strategy 03 measures both, the switch as the compiler leaves it and hoisted by hand.
struct switch_op {
  int id;
  __device__ float operator()(float v) const {
    int op = id;
    asm volatile("" : "+r"(op));
    switch (op) {
      case 0: return quadratic{}(v);
      case 1: return v * v;
      case 2: return sinf(v);
      case 3: return v * v * v;
      default: return v;
    }
  }
};

// pointer: the address of a __device__ function, which the host can only read from a symbol.
using op_pointer = float (*)(float);
__device__ op_pointer quadratic_ptr = quadratic_fn;
struct pointer_op {
  op_pointer f;
  __device__ float operator()(float v) const { return f(v); }
};

// virtual: an object with a vtable must be constructed on the device (its vtable pointer is a
// device address), so a one-thread kernel builds it in device memory the host allocated.
struct op_base {
  __device__ virtual float apply(float v) const = 0;
};
struct quadratic_virtual : op_base {
  __device__ float apply(float v) const override { return quadratic{}(v); }
};
__global__ void make_quadratic(void* where) { new (where) quadratic_virtual; }
struct virtual_op {
  const op_base* o;
  __device__ float operator()(float v) const { return o->apply(v); }
};

int main() {
  lesson::problem p;  // 2^24 floats in and out: more than any GPU's L2, so each launch reads memory
  op_pointer f = nullptr;
  CHECK(cudaMemcpyFromSymbol(&f, quadratic_ptr, sizeof f));
  void* object = nullptr;
  CHECK(cudaMalloc(&object, sizeof(quadratic_virtual)));
  make_quadratic<<<1, 1>>>(object);
  CHECK(cudaGetLastError());
  const auto* o = static_cast<const op_base*>(object);
  const unsigned grid = lesson::grid(p.n), block = lesson::block;
  const int status = lesson::compare(
      p,
      {{"switch", [&](int k) { lesson::map_kernel<<<grid, block>>>(p.dx, p.dy, p.n, k, switch_op{0}); }},
       {"pointer", [&](int k) { lesson::map_kernel<<<grid, block>>>(p.dx, p.dy, p.n, k, pointer_op{f}); }},
       {"virtual", [&](int k) { lesson::map_kernel<<<grid, block>>>(p.dx, p.dy, p.n, k, virtual_op{o}); }}});
  CHECK(cudaFree(object));
  return status;
}
