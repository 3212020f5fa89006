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
//          library's out-of-line slow path for large sin/cos arguments), and no stack frame for
//          map_quadratic_vec<float>. Strategy 01's kernels compile to the same instructions:
//          the abstraction of a functor costs nothing. The tasks kernel, a switch on each
//          element's op id, compiles to a BRX jump through a table, like 03's.
//
// The loop around the op (bounds, 16-byte vector loads, the k evaluations) is the shared
// skeleton's body in common/skeletons/map.cuh, so the only thing that differs from the
// other strategies is how the op reaches the loop.
// Run it.  `cdl_run --strategy 00_inline/vec --op quadratic --n 2^24`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/00_inline.cu. This is the general form, each op
//          written into a copy of the skeleton's loop by a macro, as in every workload, so that every
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

using skeleton::elementwise_block;

// For each op, kernels with the expression in a local lambda: one per form (map, zip) or data
// layout (points). `using namespace ops` makes sin/cos/exp resolve to the catalogue's
// float-preserving math. The CDL_*_OPS lists write them, so each op is still defined once.
#define CDL_INLINE_MAP_KERNELS(name, ulps, expr)                                                \
  template <class T>                                                                            \
  __global__ void __launch_bounds__(elementwise_block)                                          \
      map_##name##_scalar(const T* __restrict__ xs, T* __restrict__ ys, std::size_t n, int k) { \
    using namespace ops;                                                                        \
    skeleton::map_scalar_body(xs, ys, n, k, [](T x) { return expr; });                          \
  }                                                                                             \
  template <class T>                                                                            \
  __global__ void __launch_bounds__(elementwise_block)                                          \
      map_##name##_vec(const T* __restrict__ xs, T* __restrict__ ys, std::size_t n, int k) {    \
    using namespace ops;                                                                        \
    skeleton::map_vec_body(xs, ys, n, k, [](T x) { return expr; });                             \
  }
#define CDL_INLINE_ZIP_KERNELS(name, ulps, expr)                                               \
  template <class T>                                                                           \
  __global__ void __launch_bounds__(elementwise_block) zip_##name##_scalar(                    \
      const T* __restrict__ xs, const T* __restrict__ ys, T* __restrict__ zs, std::size_t n) { \
    skeleton::elementwise_scalar(                                                              \
        zs, n, [](T x, T y) { return expr; }, xs, ys);                                         \
  }                                                                                            \
  template <class T>                                                                           \
  __global__ void __launch_bounds__(elementwise_block) zip_##name##_vec(                       \
      const T* __restrict__ xs, const T* __restrict__ ys, T* __restrict__ zs, std::size_t n) { \
    skeleton::elementwise_vec(                                                                 \
        zs, n, [](T x, T y) { return expr; }, xs, ys);                                         \
  }
#define CDL_INLINE_POINT_KERNELS(name, ulps, new_x, new_y)                                              \
  template <class T>                                                                                    \
  __global__ void __launch_bounds__(elementwise_block)                                                  \
      points_##name##_aos(const point<T>* __restrict__ in, point<T>* __restrict__ out, std::size_t n) { \
    skeleton::elementwise_scalar(                                                                       \
        out, n,                                                                                         \
        [](point<T> p) {                                                                                \
          const T x = p.x, y = p.y;                                                                     \
          return point<T>{new_x, new_y};                                                                \
        },                                                                                              \
        in);                                                                                            \
  }                                                                                                     \
  template <class T>                                                                                    \
  __global__ void __launch_bounds__(elementwise_block)                                                  \
      points_##name##_soa(const T* __restrict__ xs, const T* __restrict__ ys, T* __restrict__ ox,       \
                          T* __restrict__ oy, std::size_t n) {                                          \
    skeleton::points_soa_body(xs, ys, ox, oy, n, [](point<T> p) {                                       \
      const T x = p.x, y = p.y;                                                                         \
      return point<T>{new_x, new_y};                                                                    \
    });                                                                                                 \
  }
#define CDL_INLINE_MATMUL_KERNEL(name, sums, identity, step)                                          \
  template <class T>                                                                                  \
  __global__ void __launch_bounds__(skeleton::matmul_tile* skeleton::matmul_tile) matmul_##name(      \
      const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K) {     \
    using namespace ops;                                                                              \
    skeleton::matmul_naive_body(A, B, C, M, N, K, T(identity), [](T acc, T a, T b) { return step; }); \
  }
#define CDL_INLINE_IMAGE_KERNEL(name, weight, ...)                                                    \
  __global__ void __launch_bounds__(skeleton::image_block_x* skeleton::image_block_y)                 \
      image_##name(image_view<float> in, float* __restrict__ out, int r) {                            \
    using namespace ops;                                                                              \
    skeleton::image_body(in, out, r, [](const image_view<float>& img, int x, int y, int r) -> float { \
      using T = float;                                                                                \
      (void)r;                                                                                        \
      __VA_ARGS__                                                                                     \
    });                                                                                               \
  }
CDL_SEMIRINGS(CDL_INLINE_MATMUL_KERNEL)
CDL_IMAGE_OPS(CDL_INLINE_IMAGE_KERNEL)
#undef CDL_INLINE_MATMUL_KERNEL
#undef CDL_INLINE_IMAGE_KERNEL

// With an op per element there is nothing to paste: the inline form of the choice is the
// switch itself, written in the kernel (the articles' if/else on the task's op id). Strategy
// 03 reaches the same code through its invoker.
__global__ void __launch_bounds__(skeleton::tasks_block)
    tasks_inline(const float* __restrict__ xs, const task* __restrict__ t, float* __restrict__ ys,
                 std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const task k = t[i];
  const float x = xs[i];
  ys[i] = visit<task_ops>(k.op, [&](auto op) { return op(x, k.p1, k.p2); });
}

CDL_MAP_OPS(CDL_INLINE_MAP_KERNELS)
CDL_ZIP_OPS(CDL_INLINE_ZIP_KERNELS)
CDL_POINT_OPS(CDL_INLINE_POINT_KERNELS)
#undef CDL_INLINE_MAP_KERNELS
#undef CDL_INLINE_ZIP_KERNELS
#undef CDL_INLINE_POINT_KERNELS

// Host side: pick the kernel for the op id and form. A switch per workload, written by the
// same X-macro lists.
void launch_map(const map_launch& a) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(a.x);
    T* y = static_cast<T*>(a.y);
    if (a.form == map_form::staged) throw error("00_inline has no staged map kernels");
    const auto g = skeleton::elementwise_launch_geometry(a.form, a.n, sizeof(T), {x, y});
    const bool vec = g.form == map_form::vec;
    switch (a.op) {
#define CDL_CASE(name, ...)                                                                           \
  case map_op::name:                                                                                  \
    (vec ? map_##name##_vec<T> : map_##name##_scalar<T>)<<<g.grid, elementwise_block, 0, a.stream>>>( \
        x, y, a.n, a.k);                                                                              \
    break;
      CDL_MAP_OPS(CDL_CASE)
#undef CDL_CASE
    }
    CDL_CHECK_LAUNCH();
  });
}

void launch_zip(const zip_launch& a) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T *x = static_cast<const T*>(a.x), *y = static_cast<const T*>(a.y);
    T* z = static_cast<T*>(a.z);
    if (a.form == map_form::staged) throw error("00_inline has no staged zip kernels");
    const auto g = skeleton::elementwise_launch_geometry(a.form, a.n, sizeof(T), {x, y, z});
    const bool vec = g.form == map_form::vec;
    switch (a.op) {
#define CDL_CASE(name, ...)                                                                           \
  case zip_op::name:                                                                                  \
    (vec ? zip_##name##_vec<T> : zip_##name##_scalar<T>)<<<g.grid, elementwise_block, 0, a.stream>>>( \
        x, y, z, a.n);                                                                                \
    break;
      CDL_ZIP_OPS(CDL_CASE)
#undef CDL_CASE
    }
    CDL_CHECK_LAUNCH();
  });
}

void launch_points(const points_launch& a) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T* in = static_cast<const T*>(a.in);
    T* out = static_cast<T*>(a.out);
    const unsigned grid = skeleton::elementwise_launch_geometry(map_form::scalar, a.n, sizeof(T), {}).grid;
    const auto* in_aos = reinterpret_cast<const point<T>*>(in);
    auto* out_aos = reinterpret_cast<point<T>*>(out);
    switch (a.op) {
#define CDL_CASE(name, ...)                                                                                \
  case point_op::name:                                                                                     \
    if (a.soa)                                                                                             \
      points_##name##_soa<T><<<grid, elementwise_block, 0, a.stream>>>(in, in + a.n, out, out + a.n, a.n); \
    else                                                                                                   \
      points_##name##_aos<T><<<grid, elementwise_block, 0, a.stream>>>(in_aos, out_aos, a.n);              \
    break;
      CDL_POINT_OPS(CDL_CASE)
#undef CDL_CASE
    }
    CDL_CHECK_LAUNCH();
  });
}

void launch_matmul(const matmul_launch& a) {
  if (a.form != matmul_form::naive)
    throw error("00_inline has no " + std::string(to_string(a.form)) + " matmul kernels");
  if (a.m == 0 || a.n == 0) return;
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T *A = static_cast<const T*>(a.a), *B = static_cast<const T*>(a.b);
    T* C = static_cast<T*>(a.c);
    const dim3 grid = skeleton::matmul_grid(a.m, a.n), block(skeleton::matmul_tile, skeleton::matmul_tile);
    switch (a.op) {
#define CDL_CASE(name, ...)                                                 \
  case semiring::name:                                                      \
    matmul_##name<T><<<grid, block, 0, a.stream>>>(A, B, C, a.m, a.n, a.k); \
    break;
      CDL_SEMIRINGS(CDL_CASE)
#undef CDL_CASE
    }
    CDL_CHECK_LAUNCH();
  });
}

void launch_image(const image_launch& a) {
  if (a.width == 0 || a.height == 0) return;
  if (a.form != image_form::global)
    throw error("00_inline has no " + std::string(to_string(a.form)) + " image kernels");
  const dim3 grid = skeleton::image_grid(a.form, a.width, a.height),
             block(skeleton::image_block_x, skeleton::image_block_y);
  const image_view<float> in{a.in, a.width, a.height};
  switch (a.op) {
#define CDL_CASE(name, ...) \
  case image_op::name: image_##name<<<grid, block, 0, a.stream>>>(in, a.out, a.r); break;
    CDL_IMAGE_OPS(CDL_CASE)
#undef CDL_CASE
  }
  CDL_CHECK_LAUNCH();
}

void launch_tasks(const tasks_launch& a) {
  if (a.n == 0) return;
  tasks_inline<<<skeleton::tasks_grid(a.n), skeleton::tasks_block, 0, a.stream>>>(a.x, a.tasks, a.y, a.n);
  CDL_CHECK_LAUNCH();
}

}  // namespace

void register_00_inline(registry& r) {
  r.add_all("00_inline", {launch_map, launch_zip, launch_points, launch_image, launch_matmul,
                          registry::per_element_tasks(launch_tasks)});
}

}  // namespace cdl
