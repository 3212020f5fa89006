// The image workload's skeletons: out = f(in, x, y, r) per pixel, reads clamped to the border by
// image_view. The op and its radius are chosen per launch.
//
//   global - one thread per output pixel, every read from global memory (the caches catch the
//            neighbours' reuse, or do not);
//   tiled  - the staged form: a block stages its 32 x 32 output tile plus a halo of r pixels
//            (at least 1: sharpen and Sobel read 3 x 3) in shared memory, cooperatively, then
//            each thread computes 4 pixels from it. The op is handed an image_view of the
//            shared tile in tile coordinates: it cannot tell, and needs no second signature.
//            A warp reads a row segment of the tile: consecutive words, no bank conflicts.
#pragma once

#if !defined(__CUDACC_RTC__)
#include "../check.hpp"
#include "../image_workload.hpp"
#endif
#include "../ops.cuh"

namespace cdl::skeleton {

inline constexpr int image_block_x = 32, image_block_y = 8;  // a warp spans a row segment
inline constexpr int image_tile = 32;                        // outputs per side of a tiled block

// The tiled form's halo (the ops read at least their 3 x 3 neighbourhood) and tile side.
CDL_HD inline int image_halo(int r) { return r > 1 ? r : 1; }
CDL_HD inline int image_tile_side(int r) { return image_tile + 2 * image_halo(r); }

}  // namespace cdl::skeleton

#if defined(__CUDACC__)
namespace cdl::skeleton {

template <class F>
__device__ __forceinline__ void image_body(const image_view<float>& in, float* __restrict__ out, int r,
                                           const F& f) {
  const int x = blockIdx.x * image_block_x + threadIdx.x;
  const int y = blockIdx.y * image_block_y + threadIdx.y;
  if (x < in.width && y < in.height) out[std::size_t(y) * in.width + x] = f(in, x, y, r);
}

template <class F>
__global__ void __launch_bounds__(image_block_x* image_block_y)
    image_kernel(image_view<float> in, float* __restrict__ out, int r, F f) {
  image_body(in, out, r, f);
}

template <class F>
__device__ __forceinline__ void image_tiled_body(const image_view<float>& in, float* __restrict__ out, int r,
                                                 const F& f) {
  extern __shared__ float tile[];
  const int halo = image_halo(r), side = image_tile_side(r);
  const int x0 = int(blockIdx.x) * image_tile - halo, y0 = int(blockIdx.y) * image_tile - halo;
  for (int ty = threadIdx.y; ty < side; ty += image_block_y)
    for (int tx = threadIdx.x; tx < side; tx += image_block_x) tile[ty * side + tx] = in.at(x0 + tx, y0 + ty);
  __syncthreads();
  const image_view<float> local{tile, side, side};  // clamps nothing: the halo covers every read
  for (int row = threadIdx.y; row < image_tile; row += image_block_y) {
    const int lx = threadIdx.x + halo, ly = row + halo;
    const int x = x0 + lx, y = y0 + ly;
    if (x < in.width && y < in.height) out[std::size_t(y) * in.width + x] = f(local, lx, ly, r);
  }
}

template <class F>
__global__ void __launch_bounds__(image_block_x* image_block_y)
    image_tiled_kernel(image_view<float> in, float* __restrict__ out, int r, F f) {
  image_tiled_body(in, out, r, f);
}

}  // namespace cdl::skeleton
#endif  // device code

#if !defined(__CUDACC_RTC__)
namespace cdl::skeleton {

// The tiled form's dynamic shared memory: above 48 KiB (r > 39) a kernel must be allowed it
// with cudaFuncSetAttribute, which the launches do once per kernel for image_max_radius.
inline std::size_t image_tile_bytes(int r) {
  return std::size_t(image_tile_side(r)) * std::size_t(image_tile_side(r)) * sizeof(float);
}
// Throws cdl::error for a radius the form cannot take.
inline void check_image_radius(image_form form, int r) {
  if (r < 0) throw error("image: negative radius " + std::to_string(r));
  if (form == image_form::tiled && r > image_max_radius)
    throw error("image: the tiled form takes radii up to " + std::to_string(image_max_radius) + ", not " +
                std::to_string(r) + " (its tile and halo must fit in shared memory)");
}

inline dim3 image_grid(image_form form, int width, int height) {
  if (form == image_form::tiled)
    return dim3((width + image_tile - 1) / image_tile, (height + image_tile - 1) / image_tile);
  return dim3((width + image_block_x - 1) / image_block_x, (height + image_block_y - 1) / image_block_y);
}

}  // namespace cdl::skeleton
#endif

#if CDL_HOST_LAUNCHES
namespace cdl::skeleton {

template <class F>
void launch_image(image_form form, const float* in, float* out, int width, int height, int r, const F& f,
                  cudaStream_t stream) {
  check_image_radius(form, r);
  if (width == 0 || height == 0) return;
  const image_view<float> view{in, width, height};
  const dim3 grid = image_grid(form, width, height), block(image_block_x, image_block_y);
  if (form == image_form::tiled) {
    static const bool allowed = [] {  // once per instantiation
      CDL_CUDA_CHECK(cudaFuncSetAttribute(image_tiled_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(image_tile_bytes(image_max_radius))));
      return true;
    }();
    (void)allowed;
    image_tiled_kernel<<<grid, block, image_tile_bytes(r), stream>>>(view, out, r, f);
  } else {
    image_kernel<<<grid, block, 0, stream>>>(view, out, r, f);
  }
  CDL_CHECK_LAUNCH();
}

template <class Launch, class Make>
void launch_image_with(const Launch& a, Make&& make) {
  launch_image(a.form, a.in, a.out, a.width, a.height, a.r, make(float{}), a.stream);
}

}  // namespace cdl::skeleton
#endif
