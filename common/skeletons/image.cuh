// The image workload's global-memory skeleton: one thread per output pixel, out = f(in, x, y, r),
// reads clamped to the border by image_view. The op and its radius are chosen per launch. The
// shared-memory tiled form comes with strategy 08.
#pragma once

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#endif
#include "../ops.cuh"

#if defined(__CUDACC__)
namespace cdl::skeleton {

inline constexpr int image_block_x = 32, image_block_y = 8;  // a warp spans a row segment

template <class F>
__device__ __forceinline__ void image_body(const image_view<float>& in, float* __restrict__ out, int r, const F& f) {
  const int x = blockIdx.x * image_block_x + threadIdx.x;
  const int y = blockIdx.y * image_block_y + threadIdx.y;
  if (x < in.width && y < in.height) out[std::size_t(y) * in.width + x] = f(in, x, y, r);
}

template <class F>
__global__ void __launch_bounds__(image_block_x * image_block_y)
    image_kernel(image_view<float> in, float* __restrict__ out, int r, F f) {
  image_body(in, out, r, f);
}

}  // namespace cdl::skeleton
#endif  // device code

#if CDL_HOST_LAUNCHES
namespace cdl::skeleton {

inline dim3 image_grid(int width, int height) {
  return dim3((width + image_block_x - 1) / image_block_x, (height + image_block_y - 1) / image_block_y);
}

template <class F>
void launch_image(const float* in, float* out, int width, int height, int r, const F& f, cudaStream_t stream) {
  if (width == 0 || height == 0) return;
  image_kernel<<<image_grid(width, height), dim3(image_block_x, image_block_y), 0, stream>>>(
      image_view<float>{in, width, height}, out, r, f);
  CDL_CHECK_LAUNCH();
}

template <class Launch, class Make>
void launch_image_with(const Launch& a, Make&& make) {
  launch_image(a.in, a.out, a.width, a.height, a.r, make(float{}), a.stream);
}

}  // namespace cdl::skeleton
#endif
