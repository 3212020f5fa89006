// 15 - A launch from the device: a kernel reads the op and launches the op's own kernel itself.
//
// Idea.    Dynamic parallelism: device code launches kernels with the same <<<>>> syntax as the
//          host. A parent kernel reads the op (map: its id; tasks: the op groups the sort left on
//          the device) and launches the template kernel of that op (01's, the map skeleton's or
//          the tasks group kernel), so the child is fully specialised, and the choice needed no
//          host. CUDA 12's device-launch API (CDP2) launches into one of two named streams:
//          cudaStreamTailLaunch (the child starts when the parent grid has finished: the map's one
//          child) or cudaStreamFireAndForget (children run at once, side by side: the tasks
//          workload's one child per op, each with a grid sized to its own group, which only the
//          device knows without a copy to the host). The parent's grid is not complete until its
//          children are, so the host's events and synchronisation cover them.
// Cost.    Per launch: the parent kernel, then the device-side launch of each child, which goes
//          through the device runtime's launch queue. Built with relocatable device code (-rdc)
//          and the device runtime (cudadevrt), so this file is a library of its own
//          (strategies/CMakeLists.txt): -rdc for the strategies that do not need it would cost
//          them cross-file inlining they do not use, and nothing else. A failed device launch
//          cannot return an error to the host: the parent traps, which the host sees as a
//          launch failure at its next check.
// Use it   where the choice is data the GPU has just computed (a count, a flag, the sizes of
//          groups) and the work that follows is a kernel per case with its own grid: the copy to
//          the host and back, and the synchronisation, are what it saves. Not for the other
//          workloads (zip, points, image, matmul): their op is known to the host at the launch,
//          as the map's is, and their launches would show the map's cost again.
// See it.  The parent's SASS has the device runtime's launch sequence (a CALL to
//          cudaGetParameterBufferV2, stores of the arguments, a CALL to cudaLaunchDeviceV2) and no
//          op. Each child is the template kernel's PTX, but not its machine code: ptxas compiling
//          relocatable code (-rdc, as nvJitLink does too) gives the map's vec kernel about half
//          as many registers again as whole-program compilation gives 01's, from the same PTX
//          (`ptxas -c -v` against `ptxas -v`); the report's resources table lists both. Device
//          link-time optimisation does not restore it: with -dlto (nvcc -dc -dlto, nvlink -dlto)
//          the float quadratic vec child still gets the same register count as with -rdc alone.
//          Nsight Compute profiles the host's launch, the parent (launch_map_child), and none of
//          its children (ncu on `cdl_run --strategy 15_device_launch/vec`).
// Measured: the report's map and dispatch tables (beside 01, whose kernels the children are) and
//          its tasks table (`grouped_device`, beside 01's and 14's).
// Run it.  `cdl_run --strategy 15_device_launch/vec --op sine --n 2^24 --k 16`
#include "common/check.hpp"
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"
#include "common/skeletons/tasks.cuh"

namespace cdl {
namespace {

// One thread: the op's template kernel, in the launch's form, as 01's host code would launch it.
template <class T>
__global__ void launch_map_child(int op, map_form form, unsigned grid, const T* x, T* y, std::size_t n,
                                 int k) {
  visit<map_ops>(op, [&](auto f) {
    using F = decltype(f);
    if (form == map_form::vec)
      skeleton::map_vec_kernel<T, F>
          <<<grid, skeleton::elementwise_block, 0, cudaStreamTailLaunch>>>(x, y, n, k, f);
    else
      skeleton::map_scalar_kernel<T, F>
          <<<grid, skeleton::elementwise_block, 0, cudaStreamTailLaunch>>>(x, y, n, k, f);
  });
  if (cudaGetLastError() != cudaSuccess) __trap();
}

void launch_map(const map_launch& a) {
  if (a.form == map_form::staged) throw error("15_device_launch has no staged form");
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    launch_map_child<T><<<1, 1, 0, a.stream>>>(int(a.op), g.form, g.grid, static_cast<const T*>(a.x),
                                               static_cast<T*>(a.y), a.n, a.k);
  });
  CDL_CHECK_LAUNCH();
}

// A thread per op id: its group's range, left on the device by the sort, and if the group is not
// empty, the op's group kernel with a grid sized to the group, beside the other ops' children.
__global__ void launch_group_children(const float* x, const task* t, float* y, const unsigned* index,
                                      const unsigned* begin) {
  const int id = int(threadIdx.x);
  if (id >= task_op_count) return;
  const unsigned first = begin[id], count = begin[id + 1] - first;
  if (count == 0) return;
  const unsigned grid = (count + skeleton::tasks_block - 1) / skeleton::tasks_block;
  visit<task_ops>(id, [&](auto op) {
    skeleton::tasks_group_kernel<<<grid, skeleton::tasks_block, 0, cudaStreamFireAndForget>>>(
        x, t, y, index + first, count, op);
  });
  if (cudaGetLastError() != cudaSuccess) __trap();
}

void launch_tasks(const tasks_launch& a) {
  const device_task_groups g = group_tasks_on_device(a);
  if (a.n == 0) return;
  launch_group_children<<<1, 32, 0, a.stream>>>(a.x, a.tasks, a.y, g.index, g.begin);
  CDL_CHECK_LAUNCH();
}
static_assert(task_op_count <= 32, "one warp of parents, a thread per op id");

}  // namespace

void register_15_device_launch(registry& r) {
  r.add_map("15_device_launch", "", launch_map);
  r.add_tasks("15_device_launch", "", tasks_form::grouped_device, launch_tasks);
}

}  // namespace cdl
