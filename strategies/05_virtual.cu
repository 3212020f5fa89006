// 05 - Virtual functions: the op is an object, called through its vtable.
//
// Idea.    A base class declares a virtual apply; each op is a derived class, and the kernel calls
//          apply through a base pointer. An object's vtable pointer is an address in the code space
//          of whoever constructed it, so an object used on the device is constructed there: a
//          one-thread kernel placement-news it into memory the host allocated. A host-built copy
//          has a host vtable pointer, and calling it faults.
// Cost.    Per call, all of 04's indirect call plus two dependent loads (the vtable pointer, then
//          the function's address); once, a launch to build the object and one to destroy it. The
//          report's dispatch figure gives it against the template at each k.
// Use it   when ops are objects with state behind a common interface and each call does real work;
//          for a handful of small pure functions, 01 or 03 is simpler and faster.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/05_virtual.cu -o 05_virtual
// See it.  cuobjdump -sass 05_virtual: a load of the vtable pointer, an LDC of the function's address
//          from constant bank 2 (where vtables live), then CALL.REL.NOINC R<n>.
// Suite.   strategies/suite/05_virtual.cu: every workload's objects, built and destroyed per process.
#include <new>

#include "strategies/lesson.cuh"

struct op_base {
  __device__ virtual float apply(float v) const = 0;
  __device__ virtual ~op_base() {}
};
struct quadratic_object : op_base {
  __device__ float apply(float v) const override { return lesson::quadratic{}(v); }
};
__global__ void make_object(void* where) { new (where) quadratic_object; }
__global__ void destroy_object(op_base* o) { o->~op_base(); }

// The invoker: a pointer to the object; each call goes through its vtable.
struct virtual_op {
  const op_base* o;
  __device__ float operator()(float v) const { return o->apply(v); }
};

int main() {
  lesson::problem p;
  void* memory = nullptr;
  CHECK(cudaMalloc(&memory, sizeof(quadratic_object)));
  make_object<<<1, 1>>>(memory);
  CHECK(cudaGetLastError());
  const auto* object = static_cast<const op_base*>(memory);
  const int status = lesson::compare(p, {{"virtual", [&](int k) {
                                            lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(
                                                p.dx, p.dy, p.n, k, virtual_op{object});
                                          }}});
  destroy_object<<<1, 1>>>(static_cast<op_base*>(memory));
  CHECK(cudaGetLastError());
  CHECK(cudaFree(memory));
  return status;
}
