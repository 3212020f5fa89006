// The matmul workload's naive skeleton: one thread per C[i][j], the semiring's fused step
// acc = f(acc, A[i][k], B[k][j]) applied K times from the reduction's identity. Every strategy
// passes f its own way; the shared-memory tiled form comes with strategy 08.
#pragma once

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#include "../types.hpp"
#endif
#include "../ops.cuh"

#if defined(__CUDACC__)
namespace cdl::skeleton {

inline constexpr int matmul_tile = 16;  // 16 x 16 threads per block

template <class T, class F>
__device__ __forceinline__ void matmul_naive_body(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                                  int M, int N, int K, T init, const F& f) {
  const int j = blockIdx.x * matmul_tile + threadIdx.x;
  const int i = blockIdx.y * matmul_tile + threadIdx.y;
  if (i >= M || j >= N) return;
  T acc = init;
  for (int k = 0; k < K; ++k) acc = f(acc, A[std::size_t(i) * K + k], B[std::size_t(k) * N + j]);
  C[std::size_t(i) * N + j] = acc;
}

template <class T, class F>
__global__ void __launch_bounds__(matmul_tile * matmul_tile)
    matmul_naive_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N, int K,
                        T init, F f) {
  matmul_naive_body(A, B, C, M, N, K, init, f);
}

}  // namespace cdl::skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace cdl::skeleton {

inline dim3 matmul_grid(int M, int N) {
  return dim3((N + matmul_tile - 1) / matmul_tile, (M + matmul_tile - 1) / matmul_tile);
}

template <class T, class F>
void launch_matmul(const T* A, const T* B, T* C, int M, int N, int K, T init, const F& f, cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  matmul_naive_kernel<<<matmul_grid(M, N), dim3(matmul_tile, matmul_tile), 0, stream>>>(A, B, C, M, N, K, init, f);
  CDL_CHECK_LAUNCH();
}

// For strategies: make(T{}) returns the invoker for element type T; the identity of the
// semiring's reduction comes from the catalogue.
template <class Launch, class Make>
void launch_matmul_with(const Launch& a, Make&& make) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T init = visit_op(a.op, [](auto s) { return decltype(s)::template identity<T>(); });
    launch_matmul(static_cast<const T*>(a.a), static_cast<const T*>(a.b), static_cast<T*>(a.c), a.m, a.n, a.k, init,
                  make(t), a.stream);
  });
}

}  // namespace cdl::skeleton
#endif
