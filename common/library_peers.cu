// library_peers.hpp's launches: the op handed to cub::DeviceTransform and thrust::transform as a
// functor type, the way CCCL's own users pass it.
#include "library_peers.hpp"

#include "check.hpp"
#include "skeletons/map.cuh"

#include <cub/device/device_transform.cuh>
#include <thrust/execution_policy.h>
#include <thrust/transform.h>

#include <type_traits>

namespace cdl {
namespace {

// The map workload's k evaluations around the catalogue functor F, as one unary functor.
template <class T, class F>
struct map_sum {
  F f;
  int k;
  __host__ __device__ T operator()(T x) const { return map_apply(f, x, k); }
};

// Calls body with the launch's typed pointers (inputs, then output) and its op as one functor;
// a launch of no elements launches nothing.
template <class Launch, class Body>
void with_typed(const Launch& a, Body&& body) {
  if (a.n == 0) return;
  visit_op(a.op, [&](auto op) {
    visit_dtype(a.type, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<Launch, map_launch>)
        body(static_cast<const T*>(a.x), static_cast<T*>(a.y), map_sum<T, decltype(op)>{op, a.k});
      else
        body(static_cast<const T*>(a.x), static_cast<const T*>(a.y), static_cast<T*>(a.z), op);
    });
  });
}

}  // namespace

void cub_transform_map(const map_launch& a) {
  with_typed(a, [&](auto x, auto y, auto f) {
    CDL_CUDA_CHECK(cub::DeviceTransform::Transform(x, y, a.n, f, a.stream));
  });
}
void cub_transform_zip(const zip_launch& a) {
  with_typed(a, [&](auto x, auto y, auto z, auto f) {
    CDL_CUDA_CHECK(cub::DeviceTransform::Transform(::cuda::std::make_tuple(x, y), z, a.n, f, a.stream));
  });
}

// par_nosync: Thrust would otherwise synchronise the stream after the launch, which a timed
// launch must not do. Thrust throws thrust::system_error on a failed launch.
void thrust_transform_map(const map_launch& a) {
  with_typed(a, [&](auto x, auto y, auto f) {
    thrust::transform(thrust::cuda::par_nosync.on(a.stream), x, x + a.n, y, f);
  });
}
void thrust_transform_zip(const zip_launch& a) {
  with_typed(a, [&](auto x, auto y, auto z, auto f) {
    thrust::transform(thrust::cuda::par_nosync.on(a.stream), x, x + a.n, y, z, f);
  });
}

}  // namespace cdl
