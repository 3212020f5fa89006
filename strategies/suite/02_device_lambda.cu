// 02 - Extended device lambdas: the op written where it is launched.
//
// Idea.    With `nvcc --extended-lambda`, a lambda written in host code and marked __device__
//          (or __host__ __device__) can be passed to a kernel template: its closure type is a
//          functor type the compiler generates, so the call inlines exactly like strategy 01.
//          The lambda *captures by value* whatever it uses: numbers, device pointers, other
//          functors (here the op functor everywhere, and the image filter's radius r, a
//          run-time value). It cannot capture host references or host pointers the device
//          cannot read, and `this` only as `*this`.
// Cost.    None at run time (same SASS as 01). Restrictions at build time: the enclosing
//          function must be a named function (not a lambda, not a function with a deduced
//          `auto` return type), the lambda cannot be generic over its parameters' types
//          unless its enclosing template fixes them, and each lambda is a distinct type: one
//          kernel instantiation per lambda written.
// Use it   for one-off ops next to the launch (a Thrust/CUB call with a custom transform),
//          and to capture run-time parameters without writing a functor struct.
// See it.  The kernels' names in `cuobjdump -sass` carry the closure type
//          (`__nv_dl_wrapper_t<...>`); their instructions match 01's: the op inline, no CALL
//          through a register, no BRX, and the registers of 01's kernels within a few (the
//          report's resource table has every kernel's), with a stack frame only where sin/cos's
//          out-of-line slow path for huge arguments keeps a small local array.
// Run it.  `cdl_run --strategy 02_device_lambda/vec --op sine --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/02_device_lambda.cu. This is the general form, a
//          lambda wrapping the op, handed to the skeleton's kernel template, as in every workload, so that
//          every strategy runs the same loop and a difference in time is the call.
#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/tasks.cuh"
#include "common/skeletons/zip.cuh"

namespace cdl {
namespace {

// Named function templates enclose the lambdas, as the extended-lambda rules require.
template <class T, class Op>
void map_with_lambda(const map_launch& a, Op op) {
  const auto f = [op] __device__(T x) { return op(x); };
  skeleton::launch_map(a.form, static_cast<const T*>(a.x), static_cast<T*>(a.y), a.n, a.k, f, a.stream);
}
template <class T, class Op>
void zip_with_lambda(const zip_launch& a, Op op) {
  const auto f = [op] __device__(T x, T y) { return op(x, y); };
  skeleton::launch_zip(a.form, static_cast<const T*>(a.x), static_cast<const T*>(a.y), static_cast<T*>(a.z),
                       a.n, f, a.stream);
}
template <class T, class Op>
void points_with_lambda(const points_launch& a, Op op) {
  const auto f = [op] __device__(point<T> p) { return op(p); };
  skeleton::launch_points(a.soa, static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n, f, a.stream);
}

template <class T, class Op>
void matmul_with_lambda(const matmul_launch& a, Op op) {
  const auto f = [op] __device__(T acc, T x, T y) { return op(acc, x, y); };
  skeleton::launch_matmul(a.form, static_cast<const T*>(a.a), static_cast<const T*>(a.b),
                          static_cast<T*>(a.c), a.m, a.n, a.k, Op::template identity<T>(), f, a.stream);
}
// The radius is captured: the lambda carries a run-time parameter into the kernel.
template <class Op>
void image_with_lambda(const image_launch& a, Op op) {
  const int r = a.r;
  const auto f = [op, r] __device__(const image_view<float>& img, int x, int y, int) {
    return op(img, x, y, r);
  };
  skeleton::launch_image(a.form, a.in, a.out, a.width, a.height, a.r, f, a.stream);
}
template <class Op>
void task_group_with_lambda(const tasks_launch& a, const unsigned* index, std::size_t count, Op op) {
  const auto f = [op] __device__(float x, float p1, float p2) { return op(x, p1, p2); };
  skeleton::launch_task_group(a, index, count, f);
}
template <class Op>
void task_range_with_lambda(const tasks_launch& a, const device_task_groups& g, int id, Op op) {
  const auto f = [op] __device__(float x, float p1, float p2) { return op(x, p1, p2); };
  skeleton::launch_task_range(a, g, id, f);
}

void launch_map(const map_launch& a) {
  visit_op(a.op, [&](auto op) { visit_dtype(a.type, [&](auto t) { map_with_lambda<decltype(t)>(a, op); }); });
}
void launch_zip(const zip_launch& a) {
  visit_op(a.op, [&](auto op) { visit_dtype(a.type, [&](auto t) { zip_with_lambda<decltype(t)>(a, op); }); });
}
void launch_points(const points_launch& a) {
  visit_op(a.op,
           [&](auto op) { visit_dtype(a.type, [&](auto t) { points_with_lambda<decltype(t)>(a, op); }); });
}

void launch_image(const image_launch& a) {
  visit_op(a.op, [&](auto op) { image_with_lambda(a, op); });
}
void launch_matmul(const matmul_launch& a) {
  visit_op(a.op,
           [&](auto op) { visit_dtype(a.type, [&](auto t) { matmul_with_lambda<decltype(t)>(a, op); }); });
}
// Like templates, a lambda is a compile-time type: per-element ops are grouped first (01).
void launch_tasks(const tasks_launch& a) {
  const task_groups g = group_tasks(a);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    visit<task_ops>(g.ops[i], [&](auto op) {
      task_group_with_lambda(a, g.index + g.offsets[i], g.offsets[i + 1] - g.offsets[i], op);
    });
}
void launch_tasks_on_device(const tasks_launch& a) {
  const device_task_groups g = group_tasks_on_device(a);
  for (int id = 0; id < task_op_count; ++id)
    visit<task_ops>(id, [&](auto op) { task_range_with_lambda(a, g, id, op); });
}

}  // namespace

void register_02_device_lambda(registry& r) {
  r.add_all("02_device_lambda", {launch_map, launch_zip, launch_points, launch_image, launch_matmul,
                                 registry::grouped_tasks(launch_tasks, launch_tasks_on_device)});
}

}  // namespace cdl
