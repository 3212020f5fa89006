// The tasks workload's skeletons: y[i] = op_{task[i].op}(x[i], task[i].p1, task[i].p2), the op
// chosen per element from a structured task array (the articles' "task" records).
//
//   tasks_kernel       - one kernel for all ops; the invoker gets the op id per element
//                        (switch, function-pointer table, virtual objects);
//   tasks_group_kernel - one op per launch over a list of element indices: the answer of the
//                        strategies whose op must be known at compile time (templates,
//                        lambdas), after the elements are grouped by op (tasks_workload.hpp);
//   tasks_range_kernel - the same, its range of the list read from device memory, so that the
//                        host need not learn the group sizes before launching;
//   tasks_ordered_kernel - one op per launch over a range of records already moved into op order:
//                        the group kernel without the index, every access contiguous.
#pragma once

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#endif
#include "../ops.cuh"

namespace cdl {

struct task {
  int op;
  float p1, p2;
};

#if defined(__CUDACC__)
namespace skeleton {

inline constexpr int tasks_block = 256;

template <class F>
__global__ void __launch_bounds__(tasks_block)
    tasks_kernel(const float* __restrict__ x, const task* __restrict__ t, float* __restrict__ y,
                 std::size_t n, F f) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const task k = t[i];
  y[i] = f(k.op, x[i], k.p1, k.p2);
}

template <class Op>
__global__ void __launch_bounds__(tasks_block)
    tasks_group_kernel(const float* __restrict__ x, const task* __restrict__ t, float* __restrict__ y,
                       const unsigned* __restrict__ index, std::size_t count, Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const unsigned j = index[i];
  y[j] = op(x[j], t[j].p1, t[j].p2);
}

template <class Op>
__global__ void __launch_bounds__(tasks_block)
    tasks_ordered_kernel(const float* __restrict__ x, const task* __restrict__ t, float* __restrict__ y,
                         std::size_t count, Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  y[i] = op(x[i], t[i].p1, t[i].p2);
}

// A fixed grid strides over the range, whatever its size: the host launches it without knowing it.
template <class Op>
__global__ void __launch_bounds__(tasks_block)
    tasks_range_kernel(const float* __restrict__ x, const task* __restrict__ t, float* __restrict__ y,
                       const unsigned* __restrict__ index, const unsigned* __restrict__ begin, int id,
                       Op op) {
  const unsigned first = begin[id], last = begin[id + 1];
  for (unsigned i = first + blockIdx.x * blockDim.x + threadIdx.x; i < last; i += gridDim.x * blockDim.x) {
    const unsigned j = index[i];
    y[j] = op(x[j], t[j].p1, t[j].p2);
  }
}

}  // namespace skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace skeleton {

inline unsigned tasks_grid(std::size_t n) { return unsigned((n + tasks_block - 1) / tasks_block); }

template <class Launch, class Op>
void launch_task_group(const Launch& a, const unsigned* index, std::size_t count, const Op& op) {
  if (count == 0) return;
  tasks_group_kernel<<<tasks_grid(count), tasks_block, 0, a.stream>>>(a.x, a.tasks, a.y, index, count, op);
  CDL_CHECK_LAUNCH();
}

template <class Launch, class Op>
void launch_task_ordered(const Launch& a, std::size_t first, std::size_t count, const Op& op) {
  if (count == 0) return;
  tasks_ordered_kernel<<<tasks_grid(count), tasks_block, 0, a.stream>>>(a.x + first, a.tasks + first,
                                                                        a.y + first, count, op);
  CDL_CHECK_LAUNCH();
}

// The range kernel of op `id` over groups left on the device (device_task_groups).
template <class Launch, class Groups, class Op>
void launch_task_range(const Launch& a, const Groups& g, int id, const Op& op) {
  if (a.n == 0) return;
  tasks_range_kernel<<<g.blocks, tasks_block, 0, a.stream>>>(a.x, a.tasks, a.y, g.index, g.begin, id, op);
  CDL_CHECK_LAUNCH();
}

template <class Launch, class F>
void launch_tasks(const Launch& a, const F& f) {
  if (a.n == 0) return;
  tasks_kernel<<<tasks_grid(a.n), tasks_block, 0, a.stream>>>(a.x, a.tasks, a.y, a.n, f);
  CDL_CHECK_LAUNCH();
}

}  // namespace skeleton
#endif

}  // namespace cdl
