// 00 - Inline baseline: the op written straight into the kernel.
//
// Idea.    The function is not passed at all: its expression is pasted into the body of a
//          kernel written for that one op. This is what the articles' kernels do, and it is
//          the reference point every other strategy is measured against.
// Cost.    None at run time; the compiler sees the whole computation and schedules it
//          freely. The cost is in the source: one kernel per op (here the preprocessor writes
//          them from CDL_MAP_OPS, so each op is still defined once, in common/ops.cuh).
// Use it   when there is one function, known when you write the kernel.
// See it.  `cuobjdump -sass -fun '<mangled name>' build/release/strategies/libcdl_strategies.a`
//          shows the op's arithmetic (FFMA/FMUL, the sinf/expf polynomial) inline in the loop
//          and no call through a register (the only CALLs are direct ones to the math
//          library's out-of-line slow path for large sin/cos arguments). Strategy 01's kernels
//          compile to the same instructions: the abstraction of a functor costs nothing.
//
// The loop around the op (bounds, 16-byte vector loads, the k evaluations) is the shared
// skeleton's body in common/skeletons/map.cuh, so the only thing that differs from the
// other strategies is how the op reaches the loop.
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"

namespace cdl {
namespace {

// For each op: a scalar-form and a vec-form kernel with the expression in a local lambda.
// `using namespace ops` makes sin/cos/exp resolve to the catalogue's float-preserving math.
#define CDL_INLINE_MAP_KERNELS(name, ulps, expr)                                                      \
  template <class T>                                                                                  \
  __global__ void __launch_bounds__(skeleton::map_block)                                              \
      inline_##name##_scalar(const T* __restrict__ xs, T* __restrict__ ys, std::size_t n, int k) {    \
    using namespace ops;                                                                              \
    skeleton::map_scalar_body(xs, ys, n, k, [](T x) { return expr; });                                \
  }                                                                                                   \
  template <class T>                                                                                  \
  __global__ void __launch_bounds__(skeleton::map_block)                                              \
      inline_##name##_vec(const T* __restrict__ xs, T* __restrict__ ys, std::size_t n, int k) {       \
    using namespace ops;                                                                              \
    skeleton::map_vec_body(xs, ys, n, k, [](T x) { return expr; });                                   \
  }
CDL_MAP_OPS(CDL_INLINE_MAP_KERNELS)
#undef CDL_INLINE_MAP_KERNELS

template <class T>
void launch_typed(const map_launch& a) {
  const T* x = input<T>(a);
  T* y = output<T>(a);
  const auto g = skeleton::map_launch_geometry(a.form, x, y, a.n, sizeof(T));
  const bool vec = g.form == map_form::vec;
  switch (a.op) {
#define CDL_INLINE_CASE(name, ulps, expr)                                                          \
  case map_op::name:                                                                               \
    (vec ? inline_##name##_vec<T> : inline_##name##_scalar<T>)<<<g.grid, skeleton::map_block, 0, \
                                                                 a.stream>>>(x, y, a.n, a.k);      \
    break;
    CDL_MAP_OPS(CDL_INLINE_CASE)
#undef CDL_INLINE_CASE
  }
  CDL_CHECK_LAUNCH();
}

void launch(const map_launch& a) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) { launch_typed<decltype(t)>(a); });
}

}  // namespace

void register_00_inline(registry& r) { add_map_entries(r, "00_inline", "", launch); }

}  // namespace cdl
