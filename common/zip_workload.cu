#include "zip_workload.hpp"

#include "fixture.hpp"
#include "inputs.hpp"

#include <cmath>

namespace cdl {

std::string zip_problem::describe() const {
  return "zip op=" + std::string(info(op).name) + " type=" + std::string(to_string(type)) + " n=" + std::to_string(n);
}

zip_fixture::zip_fixture(const zip_problem& p, std::uint64_t seed)
    : problem_(p), x_(p.n * size_of(p.type)), y_(p.n * size_of(p.type)), z_(p.n * size_of(p.type)) {
  visit_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    const std::vector<T> x = uniform_inputs<T>(p.n, seed), y = uniform_inputs<T>(p.n, seed + 1);
    CDL_CUDA_CHECK(cudaMemcpy(x_.data(), x.data(), x_.bytes(), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemcpy(y_.data(), y.data(), y_.bytes(), cudaMemcpyHostToDevice));
    reference_.resize(p.n);
    visit_op(p.op, [&](auto f) {
      parallel_for(p.n, worker_count(p.n), [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          const double v = f(double(x[i]), double(y[i]));
          reference_[i] = {v, std::fabs(v)};
        }
      });
    });
  });
}

void zip_fixture::launch(zip_launch_fn fn, map_form form, cudaStream_t stream) const {
  fn(zip_launch{problem_.op, problem_.type, form, x_.data(), y_.data(), z_.data(),
                problem_.n, stream});
}

validation_result zip_fixture::run_and_validate(zip_launch_fn fn, map_form form, cudaStream_t stream) const {
  const double eps = problem_.type == dtype::f32 ? epsilon_of<float>() : epsilon_of<double>();
  return poison_run_validate(z_.data(), z_.bytes(), problem_.type, problem_.n, reference_,
                             tolerance_for(eps, info(problem_.op).max_ulps, 1), stream,
                             [&] { launch(fn, form, stream); });
}

}  // namespace cdl
