// 03 - Switch dispatch: the op is an integer, and a switch in the kernel picks its code.
//
// Idea.    Every op is compiled into one kernel; an id chosen at run time selects among them with
//          a switch on the device. Uniform across a launch here; per element in the suite's tasks.
// Cost.    A compare-and-branch (or a jump table, BRX) at every call, unless the compiler hoists
//          the switch out of the loop; the kernel carries every op's code and the registers of the
//          largest. When ids differ within a warp, each taken case runs in turn (divergence). The
//          report's dispatch figure gives it against the template at each k, hoisted and not.
// Use it   when the ops are known at build time and few, chosen at run time, one kernel for all.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/03_switch.cu -o 03_switch
// See it.  cuobjdump -sass 03_switch: every case's arithmetic inside the k loop, behind compares or
//          a BRX; hoisted, the switch sits before the loop and each case is its own loop.
// Suite.   strategies/suite/03_switch.cu: the same invoker for every workload, and `hoisted`.
//          Defining CDL_SWITCH_INVOKER before including this file leaves out all but the invoker
//          (10's lesson runs it as its first tier).
#include "strategies/lesson.cuh"

// The invoker: the id travels by value; the switch runs at every call. The id does not change
// during the launch, so the compiler may take the switch out of the k loop; the empty asm hides the
// id's value from it, so that this lesson pays the switch at every call, as a per-element id would.
struct switch_op {
  int id;
  __device__ float operator()(float v) const {
    int op = id;
    asm volatile("" : "+r"(op));
    switch (op) {
      case 0: return lesson::quadratic{}(v);
      case 1: return v * v;
      case 2: return sinf(v);
      case 3: return v * v * v;
      default: return v;
    }
  }
};

#ifndef CDL_SWITCH_INVOKER
// Hoisted by hand: one switch per thread, each case the template's loop with its op inlined.
template <class Op>
__device__ float summed(float x, int k, Op op) {
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) acc += op(x + float(j) * lesson::delta);
  return acc;
}
__global__ void hoisted_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k,
                               int id) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (id) {
    case 0: y[i] = summed(x[i], k, lesson::quadratic{}); break;
    case 1: y[i] = summed(x[i], k, [](float v) { return v * v; }); break;
    case 2: y[i] = summed(x[i], k, [](float v) { return sinf(v); }); break;
    case 3: y[i] = summed(x[i], k, [](float v) { return v * v * v; }); break;
    default: y[i] = summed(x[i], k, [](float v) { return v; }); break;
  }
}

int main() {
  lesson::problem p;
  const int quadratic_id = 0;  // chosen at run time: the kernel cannot know it
  return lesson::compare(p, {{"switch",
                              [&](int k) {
                                lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(
                                    p.dx, p.dy, p.n, k, switch_op{quadratic_id});
                              }},
                             {"hoisted", [&](int k) {
                                hoisted_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k,
                                                                                     quadratic_id);
                              }}});
}
#endif  // CDL_SWITCH_INVOKER
