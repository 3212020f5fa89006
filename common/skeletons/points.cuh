// The points workload's skeleton: out[i] = f(in[i]) for Point{x, y}, in two data layouts.
//
//   aos - array of structs: one 8- or 16-byte Point per thread, x and y side by side;
//   soa - struct of arrays: xs[] and ys[] separate, two coalesced streams.
// The op sees a Point either way; only the kernel's loads and stores differ.
#pragma once

#include "../ops.cuh"
#include "elementwise.cuh"

#if defined(__CUDACC__)
namespace cdl::skeleton {

template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    points_aos_kernel(const point<T>* __restrict__ in, point<T>* __restrict__ out, std::size_t n, F f) {
  elementwise_scalar(out, n, f, in);
}

template <class T, class F>
__device__ __forceinline__ void points_soa_body(const T* __restrict__ xs, const T* __restrict__ ys,
                                                T* __restrict__ out_x, T* __restrict__ out_y, std::size_t n,
                                                const F& f) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const point<T> p = f(point<T>{xs[i], ys[i]});
  out_x[i] = p.x;
  out_y[i] = p.y;
}

template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    points_soa_kernel(const T* __restrict__ xs, const T* __restrict__ ys, T* __restrict__ out_x,
                      T* __restrict__ out_y, std::size_t n, F f) {
  points_soa_body(xs, ys, out_x, out_y, n, f);
}

}  // namespace cdl::skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace cdl::skeleton {

// in/out hold n points: interleaved (aos) or n xs followed by n ys (soa).
template <class T, class F>
void launch_points(bool soa, const T* in, T* out, std::size_t n, const F& f, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned grid = elementwise_launch_geometry(map_form::scalar, n, sizeof(T), {}).grid;
  if (soa)
    points_soa_kernel<<<grid, elementwise_block, 0, stream>>>(in, in + n, out, out + n, n, f);
  else
    points_aos_kernel<<<grid, elementwise_block, 0, stream>>>(reinterpret_cast<const point<T>*>(in),
                                                              reinterpret_cast<point<T>*>(out), n, f);
  CDL_CHECK_LAUNCH();
}

template <class Launch, class Make>
void launch_points_with(const Launch& a, Make&& make) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    launch_points(a.soa, static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n, make(t), a.stream);
  });
}

}  // namespace cdl::skeleton
#endif
