// 12 - cuda::std::variant and visit: a closed set of op types held by value, visited on the device.
//
// Idea.    The ops are types sharing no base; a cuda::std::variant (libcu++) holds one of them by
//          value with an index saying which, and cuda::std::visit calls a generic lambda with the
//          one it holds. The host makes the variant and passes it to the kernel as an argument.
// Cost.    libcu++'s visit is a chain of compares of the index, each alternative's code inlined at
//          its compare: what a switch costs (03), at every call unless the compiler hoists it. The
//          variant is as large as its largest op plus the index. The report's dispatch figure.
// Use it   when the set of ops is closed and known at build time and the choice is data: no common
//          base, no vtable (the host can make the objects and copy them), and a visitor that misses
//          an op does not compile.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/12_variant_visit.cu -o 12_variant_visit
// See it.  cuobjdump -sass 12_variant_visit: compares of the index (ISETP) and branches around each
//          op's inlined instructions, or a BRX; no CALL through a register.
// Suite.   strategies/suite/12_variant_visit.cu: every workload, and the objects held by value.
#include <cuda/std/variant>

#include "strategies/lesson.cuh"

// The other op types of the suite's map catalogue (common/ops.cuh), none with a base in common with
// lesson::quadratic. How many alternatives the variant holds decides what the compiler does with the
// visit: with two, it takes the visit out of the k loop, one loop per alternative; with the five of
// the suite's catalogue it leaves the visit in the loop, where the suite measures it.
struct square {
  __device__ float operator()(float x) const { return x * x; }
};
struct sine {
  __device__ float operator()(float x) const { return sinf(x); }
};
struct exp_sin_cos {
  __device__ float operator()(float x) const { return expf(sinf(x) * cosf(x)); }
};
struct threshold {
  __device__ float operator()(float x) const { return x > 0.5f ? 2.0f * x : x / 2.0f; }
};
using any_op = cuda::std::variant<lesson::quadratic, square, sine, exp_sin_cos, threshold>;

// The invoker: the variant by value, visited at every call.
struct variant_op {
  any_op op;
  __device__ float operator()(float v) const {
    return cuda::std::visit([&](auto f) { return f(v); }, op);
  }
};

int main() {
  lesson::problem p;
  const any_op op = lesson::quadratic{};  // chosen on the host at run time, passed by value
  return lesson::compare(p, {{"variant", [&](int k) {
                                lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k,
                                                                                         variant_op{op});
                              }}});
}
