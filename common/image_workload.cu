#include "image_workload.hpp"

#include "fixture.hpp"
#include "inputs.hpp"

#include <cmath>

namespace cdl {

std::string image_problem::describe() const {
  return "image op=" + std::string(info(op).name) + " " + std::to_string(width) + "x" + std::to_string(height) +
         " r=" + std::to_string(r);
}

image_fixture::image_fixture(const image_problem& p, std::uint64_t seed)
    : problem_(p), in_(std::size_t(p.width) * p.height), out_(std::size_t(p.width) * p.height) {
  if (p.width < 0 || p.height < 0 || p.r < 0) throw error("image: negative size or radius in " + p.describe());
  const std::size_t pixels = std::size_t(p.width) * p.height;
  const std::vector<float> in = uniform_inputs<float>(pixels, seed);
  in_.copy_from(in);
  const std::vector<double> wide(in.begin(), in.end());
  const image_view<double> view{wide.data(), p.width, p.height};
  reference_.resize(pixels);
  visit_op(p.op, [&](auto f) {
    // Error bound: the filter's coefficient weight times the largest pixel, plus the value.
    const double weight = double(decltype(f)::weight) * input_hi;
    parallel_for(std::size_t(p.height), worker_count(pixels, 1 << 12), [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t y = begin; y < end; ++y)
        for (int x = 0; x < p.width; ++x) {
          const double v = f(view, x, int(y), p.r);
          reference_[y * p.width + x] = {v, std::fabs(v) + weight};
        }
    });
  });
}

void image_fixture::launch(image_launch_fn fn, image_form form, cudaStream_t stream) const {
  fn(image_launch{problem_.op, form, in_.data(), out_.data(), problem_.width, problem_.height, problem_.r,
                  stream});
}

validation_result image_fixture::run_and_validate(image_launch_fn fn, image_form form, cudaStream_t stream) const {
  const int terms = std::max(9, (2 * problem_.r + 1) * (2 * problem_.r + 1));
  return poison_run_validate(out_.data(), out_.bytes(), dtype::f32, out_.size(), reference_,
                             tolerance_for(epsilon_of<float>(), 4, terms), stream, [&] { launch(fn, form, stream); });
}

}  // namespace cdl
