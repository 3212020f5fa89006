// The image workload: 2D filters on a float image (box blur of radius r, sharpen, invert,
// Sobel), borders clamped, op and radius chosen per launch (skeletons/image.cuh).
#pragma once

#include "fixture.hpp"
#include "ops.cuh"

#include <algorithm>

namespace cdl {

// global: every read from global memory (through the caches); tiled: the block's tile and its
// halo staged in shared memory first, radius at most image_max_radius.
enum class image_form { global, tiled };
inline std::string_view to_string(image_form f) { return f == image_form::global ? "global" : "tiled"; }
inline constexpr int image_max_radius = 64;

struct image_problem {
  image_op op = image_op::box_blur;
  int width = 0, height = 0;
  int r = 1;  // blur radius; the other filters are 3 x 3 and ignore it

  std::string describe() const;
  std::size_t pixels() const { return std::size_t(std::max(width, 0)) * std::max(height, 0); }
  std::size_t min_bytes() const { return 2 * pixels() * sizeof(float); }
};

struct image_launch {
  image_op op;
  image_form form;
  const float* in;
  float* out;
  int width, height, r;
  cudaStream_t stream;
};
using image_launch_fn = void (*)(const image_launch&);

// The host side of a problem, built without a GPU: the image (from `seed`) and the float64
// reference. The fixture uploads it; cdl_problem writes it out for the Python peers.
struct image_host {
  std::vector<float> in;
  std::vector<reference_value> reference;
};
image_host make_image_host(const image_problem& p, std::uint64_t seed);
double image_tolerance(const image_problem& p);

struct image_inputs {
  device_buffer<float> pixels;
};
using image_fixture = fixture<image_problem, image_launch_fn, image_form, image_inputs>;

}  // namespace cdl
