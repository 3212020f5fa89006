// The map workload's kernel skeleton: y[i] = sum_{j<k} f(x[i] + j*delta).
//
// Written once, generic over the *invoker* F: anything callable on the device as f(T) -> T.
// A strategy is mostly its invoker: a functor (01), a lambda (02), a switch on an op id (03),
// a function-pointer holder (04), a vtable call (05). Every strategy therefore runs exactly
// this loop (skeletons/elementwise.cuh), and a difference in time is the cost of the call.
//
// The knob k ("intensity") applies f k times per element. The arguments differ by j*delta so
// no evaluation can be merged with another, and the results are summed rather than chained,
// because f(f(x)) overflows for ops like x*x within a few steps. delta is a power of two and
// j is small, so x + j*delta rounds identically on the host and the device: the CPU
// reference sees exactly the arguments the GPU saw, which matters for discontinuous ops.
#pragma once

#include "../ops.cuh"
#include "elementwise.cuh"

namespace cdl {

inline constexpr double map_delta = 1.0 / 4096;

template <class T>
CDL_HD inline T map_arg(T x, int j) {
  return x + T(j) * T(map_delta);
}

template <class T, class F>
CDL_HD inline T map_apply(const F& f, T x, int k) {
  T acc = T(0);
  for (int j = 0; j < k; ++j) acc += f(map_arg(x, j));
  return acc;
}

#if defined(__CUDACC__)
namespace skeleton {

template <class T, class F>
__device__ __forceinline__ void map_scalar_body(const T* x, T* y, std::size_t n, int k, const F& f) {
  elementwise_scalar(
      y, n, [&](T e) { return map_apply(f, e, k); }, x);
}
template <class T, class F>
__device__ __forceinline__ void map_vec_body(const T* x, T* y, std::size_t n, int k, const F& f) {
  elementwise_vec(
      y, n, [&](T e) { return map_apply(f, e, k); }, x);
}

template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    map_staged_kernel(const T* x, T* y, std::size_t n, int k, F f) {
  elementwise_staged(
      y, n, [&](T e) { return map_apply(f, e, k); }, x);
}
template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    map_scalar_kernel(const T* x, T* y, std::size_t n, int k, F f) {
  map_scalar_body(x, y, n, k, f);
}
template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    map_vec_kernel(const T* x, T* y, std::size_t n, int k, F f) {
  map_vec_body(x, y, n, k, f);
}

}  // namespace skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace skeleton {

// Launches the generic skeleton with invoker f; checks the launch.
template <class T, class F>
void launch_map(map_form wanted, const T* x, T* y, std::size_t n, int k, const F& f, cudaStream_t stream) {
  if (n == 0) return;
  launch_in_form(elementwise_launch_geometry(wanted, n, sizeof(T), {x, y}), map_scalar_kernel<T, F>,
                 map_vec_kernel<T, F>, map_staged_kernel<T, F>, stream, x, y, n, k, f);
}

// For strategies: `make(T{})` returns the invoker for element type T (e.g. a function pointer of
// the right type); the launch's dtype picks T.
template <class Launch, class Make>
void launch_map_with(const Launch& a, Make&& make) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    launch_map(a.form, static_cast<const T*>(a.x), static_cast<T*>(a.y), a.n, a.k, make(t), a.stream);
  });
}

}  // namespace skeleton
#endif

}  // namespace cdl
