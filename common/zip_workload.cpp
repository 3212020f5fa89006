// zip_workload.hpp's problem, inputs, float64 reference and fixture; the kernels are in
// skeletons/zip.cuh, and each strategy's launch in strategies/.
#include "zip_workload.hpp"

#include "inputs.hpp"

#include <cmath>

namespace cdl {

std::string zip_problem::describe() const {
  return "zip op=" + std::string(info(op).name) + " type=" + std::string(to_string(type)) +
         " n=" + std::to_string(n);
}

template <class T>
zip_host<T> make_zip_host(const zip_problem& p, std::uint64_t seed) {
  zip_host<T> h{uniform_inputs<T>(p.n, seed), uniform_inputs<T>(p.n, seed + 1),
                std::vector<reference_value>(p.n)};
  visit_op(p.op, [&](auto f) {
    parallel_for(p.n, worker_count(p.n), [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const double v = f(double(h.x[i]), double(h.y[i]));
        h.reference[i] = {v, std::fabs(v)};
      }
    });
  });
  return h;
}
template zip_host<float> make_zip_host<float>(const zip_problem&, std::uint64_t);
template zip_host<double> make_zip_host<double>(const zip_problem&, std::uint64_t);

double zip_tolerance(const zip_problem& p) {
  return tolerance_for(epsilon_of(p.type), info(p.op).max_ulps, 1);
}

template <>
zip_fixture::fixture(const zip_problem& p, std::uint64_t seed)
    : workload_fixture(p, p.type, p.n, zip_tolerance(p)),
      in_{.x = device_buffer<std::byte>(p.n * size_of(p.type)),
          .y = device_buffer<std::byte>(p.n * size_of(p.type))} {
  visit_dtype(p.type, [&](auto t) {
    zip_host<decltype(t)> h = make_zip_host<decltype(t)>(p, seed);
    CDL_CUDA_CHECK(cudaMemcpy(in_.x.data(), h.x.data(), in_.x.bytes(), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemcpy(in_.y.data(), h.y.data(), in_.y.bytes(), cudaMemcpyHostToDevice));
    reference_ = std::move(h.reference);
  });
}

template <>
void zip_fixture::launch(zip_launch_fn fn, map_form form, cudaStream_t stream) const {
  fn(zip_launch{problem_.op, problem_.type, form, in_.x.data(), in_.y.data(), output<void>(), problem_.n,
                stream});
}

}  // namespace cdl
