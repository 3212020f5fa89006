// The zip workload's skeleton: z[i] = f(x[i], y[i]), on the shared elementwise loop.
#pragma once

#include "../ops.cuh"
#include "elementwise.cuh"

#if defined(__CUDACC__)
namespace cdl::skeleton {

template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    zip_scalar_kernel(const T* x, const T* y, T* z, std::size_t n, F f) {
  elementwise_scalar(z, n, f, x, y);
}
template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    zip_staged_kernel(const T* x, const T* y, T* z, std::size_t n, F f) {
  elementwise_staged(z, n, f, x, y);
}
template <class T, class F>
__global__ void __launch_bounds__(elementwise_block)
    zip_vec_kernel(const T* x, const T* y, T* z, std::size_t n, F f) {
  elementwise_vec(z, n, f, x, y);
}

}  // namespace cdl::skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace cdl::skeleton {

template <class T, class F>
void launch_zip(map_form wanted, const T* x, const T* y, T* z, std::size_t n, const F& f,
                cudaStream_t stream) {
  if (n == 0) return;
  launch_in_form(elementwise_launch_geometry(wanted, n, sizeof(T), {x, y, z}), zip_scalar_kernel<T, F>,
                 zip_vec_kernel<T, F>, zip_staged_kernel<T, F>, stream, x, y, z, n, f);
}

template <class Launch, class Make>
void launch_zip_with(const Launch& a, Make&& make) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    launch_zip(a.form, static_cast<const T*>(a.x), static_cast<const T*>(a.y), static_cast<T*>(a.z), a.n,
               make(t), a.stream);
  });
}

}  // namespace cdl::skeleton
#endif
