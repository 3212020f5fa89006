// The matmul workload's skeletons: C[i][j] = the semiring's fused step acc = f(acc, A[i][k], B[k][j])
// applied K times from the reduction's identity. Every strategy passes f its own way.
//
//   naive - one thread per C[i][j], A and B read from global memory (each element K times, from
//           the caches if lucky);
//   tiled - strategy 08's form: a block computes a 128 x 128 tile of C, staging 128 x 8 slices
//           of A and B in shared memory (each global element read once per block, then 128
//           times from shared memory) and keeping an 8 x 8 block of C per thread in registers
//           (register blocking: 16 shared-memory reads feed 64 steps).
#pragma once

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#include "../matmul_workload.hpp"
#endif
#include "../ops.cuh"

#if defined(__CUDACC__)
namespace cdl::skeleton {

inline constexpr int matmul_tile = 16;  // 16 x 16 threads per block

template <class T, class F>
__device__ __forceinline__ void matmul_naive_body(const T* __restrict__ A, const T* __restrict__ B,
                                                  T* __restrict__ C, int M, int N, int K, T init,
                                                  const F& f) {
  const int j = blockIdx.x * matmul_tile + threadIdx.x;
  const int i = blockIdx.y * matmul_tile + threadIdx.y;
  if (i >= M || j >= N) return;
  T acc = init;
  for (int k = 0; k < K; ++k) acc = f(acc, A[std::size_t(i) * K + k], B[std::size_t(k) * N + j]);
  C[std::size_t(i) * N + j] = acc;
}

template <class T, class F>
__global__ void __launch_bounds__(matmul_tile* matmul_tile)
    matmul_naive_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N,
                        int K, T init, F f) {
  matmul_naive_body(A, B, C, M, N, K, init, f);
}

// The tiled kernel's shape: a block of 16 x 16 threads, each computing an 8 x 8 block of C.
inline constexpr int tile_m = 128, tile_n = 128, tile_k = 8, thread_m = 8, thread_n = 8;
inline constexpr int tiled_threads = (tile_m / thread_m) * (tile_n / thread_n);

// One k-slice: A[m0.., k0..] into As[k][m] (transposed, so a thread's 8 rows are contiguous),
// B[k0.., n0..] into Bs[k][n]. Out-of-range elements are not read (they are never used: the
// k loop stops at K, and rows and columns past M and N are not stored).
template <class T>
__device__ __forceinline__ void load_slices(const T* __restrict__ A, const T* __restrict__ B, int M, int N,
                                            int K, int m0, int n0, int k0, T (&As)[tile_k][tile_m],
                                            T (&Bs)[tile_k][tile_n]) {
  for (int e = threadIdx.x; e < tile_m * tile_k; e += tiled_threads) {
    const int m = e / tile_k, k = e % tile_k;  // consecutive threads read along a row of A
    if (m0 + m < M && k0 + k < K) As[k][m] = A[std::size_t(m0 + m) * K + (k0 + k)];
  }
  for (int e = threadIdx.x; e < tile_k * tile_n; e += tiled_threads) {
    const int k = e / tile_n, n = e % tile_n;  // ... and along a row of B
    if (k0 + k < K && n0 + n < N) Bs[k][n] = B[std::size_t(k0 + k) * N + (n0 + n)];
  }
}

// kk steps of the thread's 8 x 8 register block. KK is the slice depth when known at compile
// time (full slices, unrolled), else 0 and `depth` is used (the last, partial slice).
template <int KK, class T, class F>
__device__ __forceinline__ void step_slice(const T (&As)[tile_k][tile_m], const T (&Bs)[tile_k][tile_n],
                                           int depth, int row, int col, T (&acc)[thread_m][thread_n],
                                           const F& f) {
  const int kk_end = KK ? KK : depth;
#pragma unroll
  for (int kk = 0; kk < (KK ? KK : tile_k); ++kk) {
    if (!KK && kk >= kk_end) break;
    T a[thread_m], b[thread_n];
#pragma unroll
    for (int i = 0; i < thread_m; ++i) a[i] = As[kk][row + i];
#pragma unroll
    for (int j = 0; j < thread_n; ++j) b[j] = Bs[kk][col + j];
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; ++j) acc[i][j] = f(acc[i][j], a[i], b[j]);
  }
}

template <class T, class F>
__device__ __forceinline__ void matmul_tiled_body(const T* __restrict__ A, const T* __restrict__ B,
                                                  T* __restrict__ C, int M, int N, int K, T init,
                                                  const F& f) {
  __shared__ alignas(16) T As[tile_k][tile_m];  // aligned: a thread reads 8 neighbours as two 16-byte words
  __shared__ alignas(16) T Bs[tile_k][tile_n];
  const int m0 = blockIdx.y * tile_m, n0 = blockIdx.x * tile_n;
  const int row = (threadIdx.x / (tile_n / thread_n)) * thread_m;  // within the tile
  const int col = (threadIdx.x % (tile_n / thread_n)) * thread_n;
  T acc[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) acc[i][j] = init;

  for (int k0 = 0; k0 < K; k0 += tile_k) {
    load_slices(A, B, M, N, K, m0, n0, k0, As, Bs);
    __syncthreads();
    if (K - k0 >= tile_k)
      step_slice<tile_k>(As, Bs, tile_k, row, col, acc, f);
    else
      step_slice<0>(As, Bs, K - k0, row, col, acc, f);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j)
      if (m0 + row + i < M && n0 + col + j < N) C[std::size_t(m0 + row + i) * N + (n0 + col + j)] = acc[i][j];
}

template <class T, class F>
__global__ void __launch_bounds__(tiled_threads)
    matmul_tiled_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N,
                        int K, T init, F f) {
  matmul_tiled_body(A, B, C, M, N, K, init, f);
}

}  // namespace cdl::skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace cdl::skeleton {

inline dim3 matmul_grid(int M, int N) {
  return dim3((N + matmul_tile - 1) / matmul_tile, (M + matmul_tile - 1) / matmul_tile);
}

inline dim3 matmul_tiled_grid(int M, int N) {
  return dim3((N + tile_n - 1) / tile_n, (M + tile_m - 1) / tile_m);
}

template <class T, class F>
void launch_matmul(matmul_form form, const T* A, const T* B, T* C, int M, int N, int K, T init, const F& f,
                   cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  if (form == matmul_form::tiled)
    matmul_tiled_kernel<<<matmul_tiled_grid(M, N), tiled_threads, 0, stream>>>(A, B, C, M, N, K, init, f);
  else
    matmul_naive_kernel<<<matmul_grid(M, N), dim3(matmul_tile, matmul_tile), 0, stream>>>(A, B, C, M, N, K,
                                                                                          init, f);
  CDL_CHECK_LAUNCH();
}

// For strategies: make(T{}) returns the invoker for element type T; the identity of the
// semiring's reduction comes from the catalogue.
template <class Launch, class Make>
void launch_matmul_with(const Launch& a, Make&& make) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T init = visit_op(a.op, [](auto s) { return decltype(s)::template identity<T>(); });
    launch_matmul(a.form, static_cast<const T*>(a.a), static_cast<const T*>(a.b), static_cast<T*>(a.c), a.m,
                  a.n, a.k, init, make(t), a.stream);
  });
}

}  // namespace cdl::skeleton
#endif
