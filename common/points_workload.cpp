// points_workload.hpp's problem, inputs in both layouts, float64 reference and fixture; the
// kernels are in skeletons/points.cuh.
#include "points_workload.hpp"

#include "inputs.hpp"

#include <cmath>

namespace cdl {

std::string points_problem::describe() const {
  return "points op=" + std::string(info(op).name) + " type=" + std::string(to_string(type)) +
         " n=" + std::to_string(n);
}

template <class T>
points_host<T> make_points_host(const points_problem& p, std::uint64_t seed) {
  const std::vector<T> xs = uniform_inputs<T>(p.n, seed), ys = uniform_inputs<T>(p.n, seed + 1);
  points_host<T> h{std::vector<T>(2 * p.n), std::vector<T>(2 * p.n), std::vector<reference_value>(2 * p.n)};
  visit_op(p.op, [&](auto f) {
    for (std::size_t i = 0; i < p.n; ++i) {
      h.aos[2 * i] = h.soa[i] = xs[i];
      h.aos[2 * i + 1] = h.soa[p.n + i] = ys[i];
      const point<double> r = f(point<double>{double(xs[i]), double(ys[i])});
      // Scale: the coordinates' magnitude, since an op may produce a small value from large ones.
      const double scale = std::fabs(double(xs[i])) + std::fabs(double(ys[i]));
      h.reference[2 * i] = {r.x, scale};
      h.reference[2 * i + 1] = {r.y, scale};
    }
  });
  return h;
}
template points_host<float> make_points_host<float>(const points_problem&, std::uint64_t);
template points_host<double> make_points_host<double>(const points_problem&, std::uint64_t);

points_fixture::points_fixture(const points_problem& p, std::uint64_t seed)
    : workload_fixture(p, p.type, 2 * p.n, tolerance_for(epsilon_of(p.type), info(p.op).max_ulps, 2)),
      aos_(2 * p.n * size_of(p.type)),
      soa_(aos_.size()) {
  visit_dtype(p.type, [&](auto t) {
    points_host<decltype(t)> h = make_points_host<decltype(t)>(p, seed);
    CDL_CUDA_CHECK(cudaMemcpy(aos_.data(), h.aos.data(), aos_.bytes(), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemcpy(soa_.data(), h.soa.data(), soa_.bytes(), cudaMemcpyHostToDevice));
    reference_soa_.resize(2 * p.n);  // the same values, the xs first
    for (std::size_t i = 0; i < p.n; ++i)
      reference_soa_[i] = h.reference[2 * i], reference_soa_[p.n + i] = h.reference[2 * i + 1];
    reference_ = std::move(h.reference);
  });
}

void points_fixture::launch(points_launch_fn fn, layout l, cudaStream_t stream) const {
  fn(points_launch{problem_.op, problem_.type, l == layout::soa, l == layout::aos ? aos_.data() : soa_.data(),
                   output<void>(), problem_.n, stream});
}

}  // namespace cdl
