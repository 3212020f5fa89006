// The elementwise skeleton shared by map, zip and points: out[i] = g(in0[i], in1[i], ...).
//
// Two forms, both generic over the callable g (the *invoker* a strategy supplies):
//   scalar - one element per thread, the form every article writes;
//   vec    - 16-byte loads and stores (4 floats or 2 doubles at once), for whole vectors only:
//            n a multiple of the lanes and every pointer 16-byte aligned, else the launch
//            falls back to scalar (the geometry returns the form it launched).
// A strategy never writes its own loop: a difference in time is the cost of the call.
#pragma once

#include "../portable.cuh"

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#include "../types.hpp"

#include <initializer_list>
#endif

namespace cdl::skeleton {

inline constexpr int elementwise_block = 256;  // threads per block, both forms
// 16-byte vectors per thread and input in the vec form. One: a full SM of threads with one load
// each already keeps enough bytes in flight, so more buys no bandwidth at k = 1; more would
// amortise the map's k loop counter over more values, but it multiplies the copies of the op in
// every kernel, which is what a JIT pays to compile a new op. To weigh the two on a
// GPU, change this and compare the map benchmarks and `cdl_bench --benchmark_filter=^jit/compile/`.
inline constexpr int vecs_per_thread = 1;

#if !defined(__CUDACC_RTC__)
struct elementwise_geometry {
  map_form form;  // the form actually launched: vec needs 16-byte aligned pointers
  unsigned grid;
};
elementwise_geometry elementwise_launch_geometry(map_form wanted, std::size_t n, std::size_t elem_bytes,
                                                 std::initializer_list<const void*> pointers);
#endif

#if CDL_HOST_LAUNCHES
// Launches, with `args`, the kernel of the form the geometry chose (the three forms' kernels take
// the same arguments), and checks the launch.
template <class Kernel, class... Args>
void launch_in_form(const elementwise_geometry& g, Kernel scalar, Kernel vec, Kernel staged,
                    cudaStream_t stream, const Args&... args) {
  const Kernel kernel = g.form == map_form::vec ? vec : g.form == map_form::staged ? staged : scalar;
  kernel<<<g.grid, elementwise_block, 0, stream>>>(args...);
  CDL_CHECK_LAUNCH();
}
#endif

#if defined(__CUDACC__)
template <class T>
struct vec16;
template <>
struct vec16<float> {
  using type = float4;
};
template <>
struct vec16<double> {
  using type = double2;
};

// g applied lane by lane to one 16-byte vector per input: unary (map) and binary (zip).
template <class G>
__device__ __forceinline__ float4 on_lanes(const G& g, const float4 (&v)[1]) {
  return {g(v[0].x), g(v[0].y), g(v[0].z), g(v[0].w)};
}
template <class G>
__device__ __forceinline__ float4 on_lanes(const G& g, const float4 (&v)[2]) {
  return {g(v[0].x, v[1].x), g(v[0].y, v[1].y), g(v[0].z, v[1].z), g(v[0].w, v[1].w)};
}
template <class G>
__device__ __forceinline__ double2 on_lanes(const G& g, const double2 (&v)[1]) {
  return {g(v[0].x), g(v[0].y)};
}
template <class G>
__device__ __forceinline__ double2 on_lanes(const G& g, const double2 (&v)[2]) {
  return {g(v[0].x, v[1].x), g(v[0].y, v[1].y)};
}

// A 16-byte vector's lanes to and from an array of its element type (the map's fused loop).
__device__ __forceinline__ void to_lanes(const float4& v, float* out) {
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
}
__device__ __forceinline__ void to_lanes(const double2& v, double* out) { out[0] = v.x, out[1] = v.y; }
__device__ __forceinline__ float4 from_lanes(const float* in) { return {in[0], in[1], in[2], in[3]}; }
__device__ __forceinline__ double2 from_lanes(const double* in) { return {in[0], in[1]}; }

// g applied to one value per input: unary (map) and binary (zip).
template <class G, class T>
__device__ __forceinline__ T on_values(const G& g, const T (&v)[1]) {
  return g(v[0]);
}
template <class G, class T>
__device__ __forceinline__ T on_values(const G& g, const T (&v)[2]) {
  return g(v[0], v[1]);
}

// The scalar form with every input staged through shared memory: each thread copies its
// element in, the block synchronises, each thread reads its own element back. No thread reads
// another's element, so nothing is reused: the form exists to measure the articles' advice.
template <class T, class G, class... In>
__device__ __forceinline__ void elementwise_staged(T* __restrict__ y, std::size_t n, const G& g,
                                                   const In* __restrict__... x) {
  constexpr int inputs = sizeof...(In);
  __shared__ T stage[inputs][elementwise_block];
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int a = 0;
  if (i < n) ((stage[a++][threadIdx.x] = x[i]), ...);
  __syncthreads();
  if (i >= n) return;
  T v[inputs];
  for (int b = 0; b < inputs; ++b) v[b] = stage[b][threadIdx.x];
  y[i] = on_values(g, v);
}

template <class T, class G, class... In>
__device__ __forceinline__ void elementwise_scalar(T* __restrict__ y, std::size_t n, const G& g,
                                                   const In* __restrict__... x) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = g(x[i]...);
}

// Each thread loads vecs_per_thread vectors per input, block-strided so a warp's accesses stay
// contiguous, then computes and stores them. No tail: the geometry launches this form only for
// whole vectors, because code for a tail (block 0 doing n % lanes elements) was a second copy of
// the op, and about a fifth of a JIT's compile of the map kernel.
template <class T, class G, class... In>
__device__ __forceinline__ void elementwise_vec(T* __restrict__ y, std::size_t n, const G& g,
                                                const In* __restrict__... x) {
  using V = typename vec16<T>::type;
  constexpr int lanes = sizeof(V) / sizeof(T);
  constexpr std::size_t inputs = sizeof...(In);
  const std::size_t nvec = n / lanes;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x * vecs_per_thread + threadIdx.x;

  V v[vecs_per_thread][inputs];
#pragma unroll
  for (int u = 0; u < vecs_per_thread; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    if (i < nvec) {
      std::size_t a = 0;
      ((v[u][a++] = reinterpret_cast<const V*>(x)[i]), ...);
    }
  }
#pragma unroll
  for (int u = 0; u < vecs_per_thread; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    if (i < nvec) reinterpret_cast<V*>(y)[i] = on_lanes(g, v[u]);
  }
}
#endif

}  // namespace cdl::skeleton
