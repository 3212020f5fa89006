// 01 - Template functor: the op is a type, and the kernel a template over it.
//
// Idea.    `template <class F> __global__ void k(..., F f)` calls f(x). Instantiated with a
//          functor type (ops::quadratic, a struct with a __host__ __device__ operator()), the
//          call is resolved at compile time and inlined: the kernel is the inline baseline.
//          This is how CUB, Thrust and the standard algorithms take functions.
// Cost.    Nothing at run time. At build time, one kernel per (op, type, form): compile time
//          and binary size grow with the product. The op must be known when the program is
//          compiled; choosing it at run time means a host-side switch over every
//          instantiation (cdl::visit_op), and an op per *element* is not possible at all
//          (the tasks workload shows this strategy's answer: group by op, one launch each).
// Use it   by default: whenever the set of functions is known at build time.
// See it.  The SASS of map_vec_kernel<float, ops::quadratic> matches 00's map_quadratic_vec
//          instruction for instruction: FFMAs in the loop, no call through a register, no BRX,
//          the same registers and no stack (`cuobjdump -res-usage`; the report's resource table
//          has every kernel's). Kernels of sin/cos ops show a small stack frame and a
//          direct CALL: the math library's out-of-line slow path for huge arguments, not
//          dispatch.
// Run it.  `cdl_run --strategy 01_template_functor/vec --op sine --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/01_template_functor.cu. This is the general form,
//          the op's functor handed to the skeleton's kernel template, as in every workload, so that every
//          strategy runs the same loop and a difference in time is the call.
#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/tasks.cuh"
#include "common/skeletons/zip.cuh"

namespace cdl {
namespace {

// visit_op turns the run-time op id into a functor *type*; each branch instantiates the
// skeleton for one op. The functor is empty: passing it by value costs nothing.
void launch_map(const map_launch& a) {
  visit_op(a.op, [&](auto op) { skeleton::launch_map_with(a, [op](auto) { return op; }); });
}
void launch_zip(const zip_launch& a) {
  visit_op(a.op, [&](auto op) { skeleton::launch_zip_with(a, [op](auto) { return op; }); });
}
void launch_points(const points_launch& a) {
  visit_op(a.op, [&](auto op) { skeleton::launch_points_with(a, [op](auto) { return op; }); });
}

void launch_image(const image_launch& a) {
  visit_op(a.op, [&](auto op) { skeleton::launch_image_with(a, [op](auto) { return op; }); });
}
void launch_matmul(const matmul_launch& a) {
  // <true>: this strategy also builds the tiled kernel's earlier steps (09_shared_memory.cu adds
  // their forms).
  visit_op(a.op, [&](auto op) { skeleton::launch_matmul_with<true>(a, [op](auto) { return op; }); });
}

// An op per element cannot be a template argument. This strategy's answer: group the elements
// by op on the device (a sort), then launch one instantiation per op over its index list. The
// grouping is part of the timed launch. `grouped` brings the group sizes to the host (a
// synchronising copy) and launches a kernel per op that occurs; `grouped_device` leaves them
// on the device and launches a kernel for every op id, each reading its own range.
void launch_tasks(const tasks_launch& a) { run_task_groups(a, group_tasks(a)); }
void launch_tasks_on_device(const tasks_launch& a) {
  const device_task_groups g = group_tasks_on_device(a);
  for (int id = 0; id < task_op_count; ++id)
    visit<task_ops>(id, [&](auto op) { skeleton::launch_task_range(a, g, id, op); });
}

}  // namespace

void register_01_template_functor(registry& r) {
  r.add_all("01_template_functor", {launch_map, launch_zip, launch_points, launch_image, launch_matmul,
                                    registry::grouped_tasks(launch_tasks, launch_tasks_on_device)});
}

}  // namespace cdl
