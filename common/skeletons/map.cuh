// The map workload's kernel skeleton: y[i] = sum_{j<k} f(x[i] + j*delta).
//
// Written once, generic over the *invoker* F: anything callable on the device as f(T) -> T.
// A strategy is mostly its invoker: a functor (01), a lambda (02), a switch on an op id (03),
// a function-pointer holder (04), a vtable call (05). Every strategy therefore runs exactly
// this loop, and a difference in time is the cost of the call, nothing else.
//
// The knob k ("intensity") applies f k times per element. The arguments differ by j*delta so
// no evaluation can be merged with another, and the results are summed rather than chained,
// because f(f(x)) overflows for ops like x*x within a few steps. delta is a power of two and
// j is small, so x + j*delta rounds identically on the host and the device: the CPU
// reference sees exactly the arguments the GPU saw, which matters for discontinuous ops.
#pragma once

#include "../check.hpp"
#include "../ops.cuh"
#include "../types.hpp"

#include <cstddef>
#include <cstdint>

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

inline constexpr int map_block = 256;        // threads per block for both forms
inline constexpr int map_vecs_per_thread = 4;  // 16-byte loads in flight per thread (vec form)

// One element per thread: the form every article writes.
template <class T, class F>
__device__ __forceinline__ void map_scalar_body(const T* __restrict__ x, T* __restrict__ y, std::size_t n,
                                                int k, const F& f) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = map_apply(f, x[i], k);
}

// 16-byte vectors of T and the lanes of one, applied with a compile-time lane count.
template <class T> struct vec16;
template <> struct vec16<float> { using type = float4; };
template <> struct vec16<double> { using type = double2; };

template <class G> __device__ __forceinline__ float4 on_lanes(const G& g, float4 v) {
  return {g(v.x), g(v.y), g(v.z), g(v.w)};
}
template <class G> __device__ __forceinline__ double2 on_lanes(const G& g, double2 v) {
  return {g(v.x), g(v.y)};
}

// Each thread loads map_vecs_per_thread 16-byte vectors (block-strided, so a warp's accesses
// stay contiguous) before computing any of them: four independent loads in flight per thread
// is what it takes to cover HBM latency at full bandwidth. The n % lanes tail goes to block 0.
template <class T, class F>
__device__ __forceinline__ void map_vec_body(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k,
                                             const F& f) {
  using V = typename vec16<T>::type;
  constexpr int lanes = sizeof(V) / sizeof(T);
  constexpr int per_thread = map_vecs_per_thread;
  const std::size_t nvec = n / lanes;
  const V* __restrict__ xv = reinterpret_cast<const V*>(x);
  V* __restrict__ yv = reinterpret_cast<V*>(y);
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x * per_thread + threadIdx.x;

  V v[per_thread];
#pragma unroll
  for (int u = 0; u < per_thread; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    if (i < nvec) v[u] = xv[i];
  }
  const auto g = [&](T e) { return map_apply(f, e, k); };
#pragma unroll
  for (int u = 0; u < per_thread; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    if (i < nvec) yv[i] = on_lanes(g, v[u]);
  }
  const std::size_t tail = nvec * lanes + threadIdx.x;
  if (blockIdx.x == 0 && tail < n) y[tail] = map_apply(f, x[tail], k);
}

template <class T, class F>
__global__ void __launch_bounds__(map_block) map_scalar_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                               std::size_t n, int k, F f) {
  map_scalar_body(x, y, n, k, f);
}

template <class T, class F>
__global__ void __launch_bounds__(map_block) map_vec_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                            std::size_t n, int k, F f) {
  map_vec_body(x, y, n, k, f);
}

// The launch geometry of both forms, next to the kernels it belongs to. The vec form needs
// 16-byte aligned pointers; anything else falls back to the scalar form.
struct map_geometry {
  map_form form;
  unsigned grid;
};
map_geometry map_launch_geometry(map_form wanted, const void* x, const void* y, std::size_t n,
                                 std::size_t elem_bytes);

// Launches the generic skeleton with invoker f; checks the launch.
template <class T, class F>
void launch_map(map_form wanted, const T* x, T* y, std::size_t n, int k, const F& f, cudaStream_t stream) {
  if (n == 0) return;
  const map_geometry g = map_launch_geometry(wanted, x, y, n, sizeof(T));
  if (g.form == map_form::vec)
    map_vec_kernel<<<g.grid, map_block, 0, stream>>>(x, y, n, k, f);
  else
    map_scalar_kernel<<<g.grid, map_block, 0, stream>>>(x, y, n, k, f);
  CDL_CHECK_LAUNCH();
}

}  // namespace skeleton
#endif

}  // namespace cdl
