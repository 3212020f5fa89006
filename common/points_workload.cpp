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

points_fixture::points_fixture(const points_problem& p, std::uint64_t seed)
    : workload_fixture(p, p.type, 2 * p.n, tolerance_for(epsilon_of(p.type), info(p.op).max_ulps, 2)),
      aos_(2 * p.n * size_of(p.type)),
      soa_(aos_.size()) {
  visit_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    const std::vector<T> xs = uniform_inputs<T>(p.n, seed), ys = uniform_inputs<T>(p.n, seed + 1);
    std::vector<T> aos(2 * p.n), soa(2 * p.n);
    reference_.resize(2 * p.n);
    reference_soa_.resize(2 * p.n);
    visit_op(p.op, [&](auto f) {
      for (std::size_t i = 0; i < p.n; ++i) {
        aos[2 * i] = soa[i] = xs[i];
        aos[2 * i + 1] = soa[p.n + i] = ys[i];
        const point<double> r = f(point<double>{double(xs[i]), double(ys[i])});
        // Scale: the coordinates' magnitude, since an op may produce a small value from large ones.
        const double scale = std::fabs(double(xs[i])) + std::fabs(double(ys[i]));
        reference_[2 * i] = reference_soa_[i] = {r.x, scale};
        reference_[2 * i + 1] = reference_soa_[p.n + i] = {r.y, scale};
      }
    });
    CDL_CUDA_CHECK(cudaMemcpy(aos_.data(), aos.data(), aos_.bytes(), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemcpy(soa_.data(), soa.data(), soa_.bytes(), cudaMemcpyHostToDevice));
  });
}

void points_fixture::launch(points_launch_fn fn, layout l, cudaStream_t stream) const {
  fn(points_launch{problem_.op, problem_.type, l == layout::soa, l == layout::aos ? aos_.data() : soa_.data(),
                   output<void>(), problem_.n, stream});
}

}  // namespace cdl
