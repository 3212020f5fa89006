// The map workload's kernel skeleton: y[i] = sum_{j<k} f(x[i] + j*delta).
//
// Written once, generic over the *invoker* F: anything callable on the device as f(T) -> T.
// A strategy is mostly its invoker: a functor, a lambda, a switch on an op id, a function-pointer
// holder, a vtable call. Every strategy therefore runs exactly
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

// map_apply for m values at once: one k loop whose body applies f to every value, each with its
// own sum added in map_apply's order, so the results are map_apply's bit for bit (j * delta is
// exact, so computing it once per step, apart from the additions, changes nothing). The m
// evaluations of a step are independent, which is the parallelism an unrolled loop would give, so
// the loop is not unrolled: an unrolled runtime-trip loop is a copy of the body per step plus a
// remainder loop, which lengthens NVRTC's and nvJitLink's work for a new op and adds no
// parallelism the m values do not already give.
//
// The m values' statements are written out by template recursion (add_each), not by a loop the
// optimiser is asked to unroll: each index is then a constant whatever the optimiser does, and the
// arrays stay in registers. `#pragma unroll` is only a request, which NVRTC's --Ofast-compile=mid
// (a variant of the NVRTC route) does not grant; an array indexed by a loop counter goes to local
// memory (the stack frame in the resources data).
template <int q = 0, int m, class T>
__device__ __forceinline__ void zero_each(T (&acc)[m]) {
  if constexpr (q < m) {
    acc[q] = T(0);
    zero_each<q + 1>(acc);
  }
}
template <int q = 0, int m, class T, class F>
__device__ __forceinline__ void add_each(const F& f, const T (&x)[m], T (&acc)[m], T offset) {
  if constexpr (q < m) {
    acc[q] += f(x[q] + offset);
    add_each<q + 1>(f, x, acc, offset);
  }
}

template <int m, class T, class F>
__device__ __forceinline__ void map_apply_fused(const F& f, const T (&x)[m], T (&acc)[m], int k) {
  zero_each(acc);
#pragma unroll 1
  for (int j = 0; j < k; ++j) add_each(f, x, acc, T(j) * T(map_delta));  // map_arg's, shared by the m values
}

// The vec form (elementwise_vec's loads and stores) with one k loop for all of a thread's values
// (vecs_per_thread vectors of 4 floats or 2 doubles): map_apply per value would run a loop per
// value one after the other, each paying its own loop counter, compare and branch per step.
// The loop is what a tuned kernel runs, and its price falls on the calls that are not inlined
// (through a pointer or a vtable): every value and every sum is live across each call through a
// register, held in registers the calling convention preserves (the report's resources table and
// profile section give the counts): part of what such a call costs is what it stops the compiler
// from doing around it.
template <class T, class F>
__device__ __forceinline__ void map_vec_body(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k,
                                             const F& f) {
  using V = typename vec16<T>::type;
  constexpr int lanes = sizeof(V) / sizeof(T);
  constexpr int values = vecs_per_thread * lanes;
  const std::size_t nvec = n / lanes;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x * vecs_per_thread + threadIdx.x;
  T e[values], acc[values];
#pragma unroll
  for (int u = 0; u < vecs_per_thread; ++u) {  // every load issued before any value is used
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    V v{};  // past the end: zeros, computed on and never stored
    if (i < nvec) v = reinterpret_cast<const V*>(x)[i];
    to_lanes(v, e + u * lanes);
  }
  map_apply_fused(f, e, acc, k);
#pragma unroll
  for (int u = 0; u < vecs_per_thread; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    if (i < nvec) reinterpret_cast<V*>(y)[i] = from_lanes(acc + u * lanes);
  }
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
