// The matmul workload's skeletons: C[i][j] = the semiring's fused step acc = f(acc, A[i][k], B[k][j])
// applied K times from the reduction's identity. Every strategy passes f its own way.
//
//   naive - one thread per C[i][j], A and B read from global memory (each element K times, from
//           the caches if lucky);
//   tiled - a block computes a 128 x 128 tile of C, staging 128 x 8 slices of A and B in shared
//           memory (each global element read once per block, then 128 times from shared memory)
//           and keeping an 8 x 8 block of C per thread in registers (register blocking: 16
//           shared-memory values feed 64 steps). The steps that bring it towards cuBLAS's SGEMM
//           are its template parameter `Step` (0: none of them), each adding to the one before;
//           the report's progression measures each form in the same run:
//             1. a thread's 8 rows and 8 columns as two runs of 4 half a tile apart, read as
//                16-byte words without bank conflicts; 16-byte global loads where a slice is
//                whole; two shared buffers, the next slice loaded while this one is computed,
//                one barrier per slice;
//             2. B copied global -> shared by cp.async, through no register, which brings the
//                kernel within two blocks per SM's share of the register file, unspilled;
//             3. A's shared rows padded, so the two threads storing a row's halves use two banks;
//             4. two slices per trip of the k loop, so that which buffer is computed on and which
//                is filled is known at compile time (ncu: fewer instructions, fewer cycles
//                stalled at the barrier).
//           Not taken, as they cost more than they gain here: 16-deep slices (they spill at two
//           blocks per SM), a warp's threads arranged 4 x 8 instead of 2 x 16, and blocks swizzled
//           in groups of rows for the L2.
#pragma once

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#include "../matmul_workload.hpp"
#endif
#include "../ops.cuh"
#include "elementwise.cuh"

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

// The tiled kernel's shape: a block of 16 x 16 threads computes a 128 x 128 tile of C, each
// thread an 8 x 8 block of it, from 8-deep slices of A and B staged in shared memory.
inline constexpr int tile_m = 128, tile_n = 128, tile_k = 8, thread_m = 8, thread_n = 8;
inline constexpr int tiled_threads = (tile_m / thread_m) * (tile_n / thread_n);

// The tiled kernel is written once, with the steps that made it fast (see the top of this file)
// switched on one by one by `Step`: 0 is the kernel before them, tiled_final_step all of them.
// Every strategy runs the last; the template strategy also registers the earlier ones (the forms
// tiled_step0 ... tiled_step3), so a run measures the whole progression (the report's plot).
inline constexpr int tiled_final_step = 4;

// Step 0: a thread's 8 rows (and 8 columns) are contiguous. From step 1 they are two runs of 4,
// half the tile apart: the 16 threads of a half-warp that share a row read 16 consecutive
// 16-byte words of a B row (all 32 banks, no conflict), and the two threads' rows of a warp are
// two broadcasts.
template <int Step>
inline constexpr int run = Step >= 1 ? 4 : 8;
inline constexpr int run_stride = tile_m / 2;

// Step 3: A's rows in shared memory are padded by 4 elements: the two threads that store the
// two halves of a row of A's slice (k 0-3 and 4-7) would otherwise hit the same bank.
template <int Step>
inline constexpr int a_row = Step >= 3 ? tile_m + 4 : tile_m;

template <class T, int Step>
// From step 1, two of each: one is computed on while the next slice is stored into the other.
struct matmul_slices {
  static constexpr int buffers = Step >= 1 ? 2 : 1;
  alignas(16) T a[buffers][tile_k][a_row<Step>];  // A transposed: a thread's rows are contiguous
  alignas(16) T b[buffers][tile_k][tile_n];
};

// 16 bytes from global to shared memory without passing through registers (cp.async, sm_80 on):
// the copy runs while the thread computes, and wait_copies() waits for the thread's copies.
// (Before sm_80, an ordinary copy through a register.)
__device__ __forceinline__ void copy_16_bytes_async(void* shared, const void* global) {
#if __CUDA_ARCH__ >= 800
  const unsigned to = unsigned(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(global) : "memory");
#else
  *static_cast<float4*>(shared) = *static_cast<const float4*>(global);
#endif
}
__device__ __forceinline__ void wait_copies() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// One k-slice of A (128 x 8) and B (8 x 128) from global into shared memory, in two halves so
// that the next slice's loads are in flight while the current one is computed on: load() starts
// them, store() finishes them. A is transposed on the way (a thread's rows must be contiguous in
// shared memory), so it passes through registers: from step 1, where the slice is whole and rows
// are 16-byte aligned, one 16-byte load per thread, stored as four values by store(). B's layout
// is the same in shared memory as in global memory: at step 1 it passes through registers too,
// and from step 2 it is copied by cp.async, through no register. Elsewhere (step 0, the edges of
// C, the last slice of K, rows not a multiple of 16 bytes) both go element by element, and
// elements past the edges are not read (the k loop stops at K; rows and columns past M and N are
// not stored).
template <class T, int Step>
struct slice_loader {
  using V = typename vec16<T>::type;
  static constexpr int lanes = sizeof(V) / sizeof(T);
  static constexpr int a_elems = tile_m * tile_k / tiled_threads, b_elems = tile_k * tile_n / tiled_threads;
  static constexpr bool b_async = Step >= 2;
  T a[a_elems];  // the thread's elements of A: a_elems / lanes vectors, a block's stride apart
  T b[b_async ? 1 : b_elems] = {};  // ... and of B, until step 2
  bool b_in_registers = false;

  // The i-th element a thread moves of a slice, numbered along the rows of A (k fastest) or B.
  static __device__ __forceinline__ int element(int i) {
    return (threadIdx.x + i / lanes * tiled_threads) * lanes + i % lanes;
  }

  __device__ __forceinline__ void load(const T* __restrict__ A, const T* __restrict__ B, int M, int N, int K,
                                       int m0, int n0, int k0, bool vector_rows, T (&Bs)[tile_k][tile_n]) {
    const bool whole = Step >= 1 && vector_rows && m0 + tile_m <= M && n0 + tile_n <= N && k0 + tile_k <= K;
    b_in_registers = false;
    if (whole) {
#pragma unroll
      for (int i = 0; i < a_elems; i += lanes) {  // consecutive threads read along a row of A
        const int e = element(i), m = e / tile_k, k = e % tile_k;
        to_lanes(*reinterpret_cast<const V*>(A + std::size_t(m0 + m) * K + k0 + k), a + i);
      }
#pragma unroll
      for (int i = 0; i < b_elems; i += lanes) {  // ... and along a row of B
        const int e = element(i), k = e / tile_n, n = e % tile_n;
        const T* from = B + std::size_t(k0 + k) * N + n0 + n;
        if constexpr (b_async)
          copy_16_bytes_async(&Bs[k][n], from);
        else
          to_lanes(*reinterpret_cast<const V*>(from), b + i);
      }
      b_in_registers = !b_async;
      return;
    }
#pragma unroll
    for (int i = 0; i < a_elems; ++i) {
      const int e = element(i), m = e / tile_k, k = e % tile_k;
      if (m0 + m < M && k0 + k < K) a[i] = A[std::size_t(m0 + m) * K + k0 + k];
    }
#pragma unroll
    for (int i = 0; i < b_elems; ++i) {
      const int e = element(i), k = e / tile_n, n = e % tile_n;
      if (k0 + k < K && n0 + n < N) Bs[k][n] = B[std::size_t(k0 + k) * N + n0 + n];
    }
  }

  __device__ __forceinline__ void store(T (&As)[tile_k][a_row<Step>], T (&Bs)[tile_k][tile_n]) const {
#pragma unroll
    for (int i = 0; i < a_elems; ++i) {
      const int e = element(i);
      As[e % tile_k][e / tile_k] = a[i];
    }
    if constexpr (b_async) {
      wait_copies();
    } else if (b_in_registers) {
#pragma unroll
      for (int i = 0; i < b_elems; i += lanes) {
        const int e = element(i);
        *reinterpret_cast<V*>(&Bs[e / tile_n][e % tile_n]) = from_lanes(b + i);
      }
    }
  }
};

// The `count` neighbours at `from` as 16-byte shared-memory reads.
template <int count, class T>
__device__ __forceinline__ void read_run(const T* from, T* to) {
  using V = typename vec16<T>::type;
  constexpr int lanes = sizeof(V) / sizeof(T);
#pragma unroll
  for (int r = 0; r < count; r += lanes) to_lanes(*reinterpret_cast<const V*>(from + r), to + r);
}

// kk steps of the thread's 8 x 8 register block: each step reads 8 values of A and 8 of B (four
// 16-byte reads for float) and applies f 64 times. KK is the slice depth when known at compile
// time (whole slices, unrolled), else 0 and `depth` is used (the last, partial slice).
template <int KK, int Step, class T, class F>
__device__ __forceinline__ void step_slice(const T (&As)[tile_k][a_row<Step>], const T (&Bs)[tile_k][tile_n],
                                           int depth, int row, int col, T (&acc)[thread_m][thread_n],
                                           const F& f) {
  constexpr int r = run<Step>;
#pragma unroll
  for (int kk = 0; kk < (KK ? KK : tile_k); ++kk) {
    if (!KK && kk >= depth) break;
    T a[thread_m], b[thread_n];
#pragma unroll
    for (int i = 0; i < thread_m; i += r) {
      read_run<r>(&As[kk][row + i / r * run_stride], a + i);
      read_run<r>(&Bs[kk][col + i / r * run_stride], b + i);
    }
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; ++j) acc[i][j] = f(acc[i][j], a[i], b[j]);
  }
}

// A slice of `depth` steps: unrolled when whole.
template <int Step, class T, class F>
__device__ __forceinline__ void compute_slice(const T (&As)[tile_k][a_row<Step>],
                                              const T (&Bs)[tile_k][tile_n], int depth, int row, int col,
                                              T (&acc)[thread_m][thread_n], const F& f) {
  if (depth >= tile_k)
    step_slice<tile_k, Step>(As, Bs, tile_k, row, col, acc, f);
  else
    step_slice<0, Step>(As, Bs, depth, row, col, acc, f);
}

// Where a block's slices come from: the operands, their shape and the block's tile of C.
template <class T>
struct slice_source {
  const T* __restrict__ A;
  const T* __restrict__ B;
  int M, N, K, m0, n0;
  bool vector_rows;  // 16-byte loads need every row of A and B to start on 16 bytes
};

// One trip of the double-buffered loop (step 1 on): slice t+1's loads start before slice t is
// computed on and finish after it, into the other buffer, so one barrier per slice separates the
// two. The other buffer is free from the start of a trip: the barrier that ended the previous one
// was after its last read. `now` is the buffer computed on.
template <int Step, class T, class F>
__device__ __forceinline__ void pipelined_slice(const slice_source<T>& in, int k0, int now,
                                                matmul_slices<T, Step>& s, slice_loader<T, Step>& next,
                                                int row, int col, T (&acc)[thread_m][thread_n], const F& f) {
  const bool more = k0 + tile_k < in.K;
  if (more) next.load(in.A, in.B, in.M, in.N, in.K, in.m0, in.n0, k0 + tile_k, in.vector_rows, s.b[now ^ 1]);
  compute_slice<Step>(s.a[now], s.b[now], in.K - k0, row, col, acc, f);
  if (more) next.store(s.a[now ^ 1], s.b[now ^ 1]);
  __syncthreads();
}

// The kernel owns the shared memory `s` (a kernel that holds several bodies, one per op, shares
// one).
template <int Step, class T, class F>
__device__ __forceinline__ void matmul_tiled_body(const T* __restrict__ A, const T* __restrict__ B,
                                                  T* __restrict__ C, int M, int N, int K, T init, const F& f,
                                                  matmul_slices<T, Step>& s) {
  constexpr int r = run<Step>;
  const int m0 = blockIdx.y * tile_m, n0 = blockIdx.x * tile_n;
  const int row = (threadIdx.x / (tile_n / thread_n)) * r;  // the first of the thread's runs
  const int col = (threadIdx.x % (tile_n / thread_n)) * r;
  constexpr int lanes = slice_loader<T, Step>::lanes;
  const bool vector_rows = K % lanes == 0 && N % lanes == 0 && (unsigned long long)(A) % 16 == 0 &&
                           (unsigned long long)(B) % 16 == 0;
  const slice_source<T> in{A, B, M, N, K, m0, n0, vector_rows};
  T acc[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) acc[i][j] = init;

  slice_loader<T, Step> next;
  next.load(A, B, M, N, K, m0, n0, 0, vector_rows, s.b[0]);
  next.store(s.a[0], s.b[0]);
  __syncthreads();
  if constexpr (Step == 0) {
    // One buffer: compute on a slice, wait for every thread to finish reading it, load the next
    // one over it, wait for every thread's part. Two barriers per slice, and no load in flight
    // while the block computes.
    for (int k0 = 0; k0 < K; k0 += tile_k) {
      compute_slice<Step>(s.a[0], s.b[0], K - k0, row, col, acc, f);
      __syncthreads();
      if (k0 + tile_k >= K) break;
      next.load(A, B, M, N, K, m0, n0, k0 + tile_k, vector_rows, s.b[0]);
      next.store(s.a[0], s.b[0]);
      __syncthreads();
    }
  } else if constexpr (Step < 4) {
    for (int k0 = 0, now = 0; k0 < K; k0 += tile_k, now ^= 1)
      pipelined_slice(in, k0, now, s, next, row, col, acc, f);
  } else {
    // Step 4: two slices per trip, one per buffer, so that in each the buffer is a constant: every
    // shared-memory address of the slice is a constant offset from one register, where with `now`
    // in a register each is computed. (A branch on `now` per slice measured as fast in nvcc's
    // build, but slower in NVRTC's build of the same source, for a reason not found yet.)
    for (int k0 = 0; k0 < K; k0 += 2 * tile_k) {
      pipelined_slice(in, k0, 0, s, next, row, col, acc, f);
      if (k0 + tile_k < K) pipelined_slice(in, k0 + tile_k, 1, s, next, row, col, acc, f);
    }
  }
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const int m = m0 + row + (i / r) * run_stride + i % r;
#pragma unroll
    for (int j = 0; j < thread_n; ++j) {
      const int n = n0 + col + (j / r) * run_stride + j % r;
      if (m < M && n < N) C[std::size_t(m) * N + n] = acc[i][j];
    }
  }
}

// From step 2, two blocks per SM for float: a thread gets 65536 / 512 of the register file,
// enough for its 64 sums, the 16 values of a step and A's next values in flight (B's no longer
// pass through registers); double's sums alone take all of that, so one.
template <class T, int Step>
inline constexpr int tiled_min_blocks = sizeof(T) == 4 && Step >= 2 ? 2 : 1;

template <class T, class F, int Step = tiled_final_step>
__global__ void __launch_bounds__(tiled_threads, (tiled_min_blocks<T, Step>))
    matmul_tiled_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M, int N,
                        int K, T init, F f) {
  __shared__ matmul_slices<T, Step> s;
  matmul_tiled_body<Step>(A, B, C, M, N, K, init, f, s);
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

template <int Step, class T, class F>
void launch_tiled(const T* A, const T* B, T* C, int M, int N, int K, T init, const F& f,
                  cudaStream_t stream) {
  matmul_tiled_kernel<T, F, Step>
      <<<matmul_tiled_grid(M, N), tiled_threads, 0, stream>>>(A, B, C, M, N, K, init, f);
}

// Steps: whether the earlier steps of the tiled kernel (tiled_step0 ... tiled_step3) are compiled
// in; only the template strategy registers them, so only its launch instantiates them.
template <bool Steps = false, class T, class F>
void launch_matmul(matmul_form form, const T* A, const T* B, T* C, int M, int N, int K, T init, const F& f,
                   cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  if (form == matmul_form::naive) {
    matmul_naive_kernel<<<matmul_grid(M, N), dim3(matmul_tile, matmul_tile), 0, stream>>>(A, B, C, M, N, K,
                                                                                          init, f);
  } else if (form == matmul_form::tiled) {
    launch_tiled<tiled_final_step>(A, B, C, M, N, K, init, f, stream);
  } else if constexpr (Steps) {
    static_assert(int(matmul_form::tiled_step3) - int(matmul_form::tiled_step0) == tiled_final_step - 1);
    switch (int(form) - int(matmul_form::tiled_step0)) {
      case 0: launch_tiled<0>(A, B, C, M, N, K, init, f, stream); break;
      case 1: launch_tiled<1>(A, B, C, M, N, K, init, f, stream); break;
      case 2: launch_tiled<2>(A, B, C, M, N, K, init, f, stream); break;
      default: launch_tiled<3>(A, B, C, M, N, K, init, f, stream); break;
    }
  } else {
    throw error("matmul: the form " + std::string(to_string(form)) +
                " is built by the template strategy only");
  }
  CDL_CHECK_LAUNCH();
}

// For strategies: make(T{}) returns the invoker for element type T; the identity of the
// semiring's reduction comes from the catalogue.
template <bool Steps = false, class Launch, class Make>
void launch_matmul_with(const Launch& a, Make&& make) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const T init = visit_op(a.op, [](auto s) { return decltype(s)::template identity<T>(); });
    launch_matmul<Steps>(a.form, static_cast<const T*>(a.a), static_cast<const T*>(a.b), static_cast<T*>(a.c),
                         a.m, a.n, a.k, init, make(t), a.stream);
  });
}

}  // namespace cdl::skeleton
#endif
