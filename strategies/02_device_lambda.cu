// 02 - Extended device lambdas: the op written where it is launched.
//
// Idea.    With `nvcc --extended-lambda`, a lambda written in host code and marked __device__
//          (or __host__ __device__) can be passed to a kernel template: its closure type is a
//          functor type the compiler generates, so the call inlines exactly like strategy 01.
//          The lambda *captures by value* whatever it uses: numbers, device pointers, other
//          functors (here the op functor, and the intensity k for map). It cannot capture host
//          references or host pointers the device cannot read, and `this` only as `*this`.
// Cost.    None at run time (same SASS as 01). Restrictions at build time: the enclosing
//          function must be a named function (not a lambda, not a function with a deduced
//          `auto` return type), the lambda cannot be generic over its parameters' types
//          unless its enclosing template fixes them, and each lambda is a distinct type: one
//          kernel instantiation per lambda written.
// Use it   for one-off ops next to the launch (a Thrust/CUB call with a custom transform),
//          and to capture run-time parameters without writing a functor struct.
// See it.  The kernels' names in `cuobjdump -sass` carry the closure type
//          (`__nv_dl_wrapper_t<...>`); their instructions match 01's: the op inline, no CALL
//          through a register, STACK:0.
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/zip.cuh"

namespace cdl {
namespace {

// Named function templates enclose the lambdas, as the extended-lambda rules require. The map
// lambda applies the k-fold sum itself (capturing k), so the skeleton runs it with k = 1:
// that shows a captured run-time value doing real work inside the kernel.
template <class T, class Op>
void map_with_lambda(const map_launch& a, Op op) {
  const int k = a.k;
  const auto f = [op, k] __device__(T x) { return map_apply(op, x, k); };
  skeleton::launch_map(a.form, static_cast<const T*>(a.x), static_cast<T*>(a.y), a.n, 1, f, a.stream);
}
template <class T, class Op>
void zip_with_lambda(const zip_launch& a, Op op) {
  const auto f = [op] __device__(T x, T y) { return op(x, y); };
  skeleton::launch_zip(a.form, static_cast<const T*>(a.x), static_cast<const T*>(a.y), static_cast<T*>(a.z), a.n,
                       f, a.stream);
}
template <class T, class Op>
void points_with_lambda(const points_launch& a, Op op) {
  const auto f = [op] __device__(point<T> p) { return op(p); };
  skeleton::launch_points(a.soa, static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n, f, a.stream);
}

void launch_map(const map_launch& a) {
  visit_op(a.op, [&](auto op) {
    visit_dtype(a.type, [&](auto t) { map_with_lambda<decltype(t)>(a, op); });
  });
}
void launch_zip(const zip_launch& a) {
  visit_op(a.op, [&](auto op) {
    visit_dtype(a.type, [&](auto t) { zip_with_lambda<decltype(t)>(a, op); });
  });
}
void launch_points(const points_launch& a) {
  visit_op(a.op, [&](auto op) {
    visit_dtype(a.type, [&](auto t) { points_with_lambda<decltype(t)>(a, op); });
  });
}

}  // namespace

void register_02_device_lambda(registry& r) {
  r.add_map("02_device_lambda", "", launch_map);
  r.add_zip("02_device_lambda", "", launch_zip);
  r.add_points("02_device_lambda", "", launch_points);
}

}  // namespace cdl
