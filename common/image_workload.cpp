// image_workload.hpp's problem, inputs, float64 reference and fixture; the kernels are in
// skeletons/image.cuh, and each strategy's launch in strategies/.
#include "image_workload.hpp"

#include "inputs.hpp"

#include <cmath>

namespace cdl {

std::string image_problem::describe() const {
  return "image op=" + std::string(info(op).name) + " " + std::to_string(width) + "x" +
         std::to_string(height) + " r=" + std::to_string(r);
}

image_host make_image_host(const image_problem& p, std::uint64_t seed) {
  if (p.width < 0 || p.height < 0 || p.r < 0)
    throw error("image: negative size or radius in " + p.describe());
  const std::size_t pixels = std::size_t(p.width) * p.height;
  image_host h{uniform_inputs<float>(pixels, seed), std::vector<reference_value>(pixels)};
  const std::vector<double> wide(h.in.begin(), h.in.end());
  const image_view<double> view{wide.data(), p.width, p.height};
  visit_op(p.op, [&](auto f) {
    // Error bound: the filter's coefficient weight times the largest pixel, plus the value.
    const double weight = double(decltype(f)::weight) * input_hi;
    parallel_for(std::size_t(p.height), worker_count(pixels, 1 << 12),
                 [&](std::size_t, std::size_t begin, std::size_t end) {
                   for (std::size_t y = begin; y < end; ++y)
                     for (int x = 0; x < p.width; ++x) {
                       const double v = f(view, x, int(y), p.r);
                       h.reference[y * p.width + x] = {v, std::fabs(v) + weight};
                     }
                 });
  });
  return h;
}

double image_tolerance(const image_problem& p) {
  return tolerance_for(epsilon_of<float>(), 4, std::max(9, (2 * p.r + 1) * (2 * p.r + 1)));
}

template <>
image_fixture::fixture(const image_problem& p, std::uint64_t seed)
    : workload_fixture(p, dtype::f32, p.pixels(), image_tolerance(p)),
      in_{.pixels = device_buffer<float>(p.pixels())} {
  image_host h = make_image_host(p, seed);
  in_.pixels.copy_from(h.in);
  reference_ = std::move(h.reference);
}

template <>
void image_fixture::launch(image_launch_fn fn, image_form form, cudaStream_t stream) const {
  fn(image_launch{problem_.op, form, in_.pixels.data(), output<float>(), problem_.width, problem_.height,
                  problem_.r, stream});
}

}  // namespace cdl
