#include "map_workload.hpp"

#include "inputs.hpp"
#include "parallel.hpp"
#include "registry.hpp"
#include "skeletons/map.cuh"

#include <cmath>
#include <limits>

namespace cdl {

std::string map_problem::describe() const {
  return "map op=" + std::string(info(op).name) + " type=" + std::string(to_string(type)) +
         " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

template <class T>
std::vector<reference_value> map_reference(map_op op, std::span<const T> x, int k) {
  std::vector<reference_value> ref(x.size());
  visit_op(op, [&](auto f) {
    parallel_for(x.size(), worker_count(x.size() * std::size_t(k)), [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        reference_value r;
        for (int j = 0; j < k; ++j) {
          const double term = f(double(map_arg(x[i], j)));  // argument rounded in T, op in double
          r.value += term;
          r.scale += std::fabs(term);
        }
        ref[i] = r;
      }
    });
  });
  return ref;
}
template std::vector<reference_value> map_reference<float>(map_op, std::span<const float>, int);
template std::vector<reference_value> map_reference<double>(map_op, std::span<const double>, int);

double map_tolerance(const map_problem& p) {
  const double eps = p.type == dtype::f32 ? epsilon_of<float>() : epsilon_of<double>();
  return tolerance_for(eps, info(p.op).max_ulps, p.k);
}

map_fixture::map_fixture(const map_problem& p, std::uint64_t seed)
    : problem_(p), x_(p.n * size_of(p.type)), y_(p.n * size_of(p.type)) {
  if (p.k < 1) throw error("map: k must be at least 1, got " + std::to_string(p.k));
  visit_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    const std::vector<T> x = uniform_inputs<T>(p.n, seed);
    CDL_CUDA_CHECK(cudaMemcpy(x_.data(), x.data(), x_.bytes(), cudaMemcpyHostToDevice));
    reference_ = map_reference<T>(p.op, x, p.k);
  });
}

void map_fixture::launch(map_launch_fn launch, map_form form, cudaStream_t stream) const {
  launch(map_launch{problem_.op, problem_.type, form, x_.data(), const_cast<std::byte*>(y_.data()), problem_.n,
                    problem_.k, stream});
}

validation_result map_fixture::run_and_validate(map_launch_fn fn, map_form form, cudaStream_t stream) const {
  CDL_CUDA_CHECK(cudaMemsetAsync(const_cast<std::byte*>(y_.data()), poison_byte, y_.bytes(), stream));
  launch(fn, form, stream);
  CDL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return visit_dtype(problem_.type, [&](auto t) {
    using T = decltype(t);
    std::vector<T> y(problem_.n);
    CDL_CUDA_CHECK(cudaMemcpy(y.data(), y_.data(), y_.bytes(), cudaMemcpyDeviceToHost));
    return validate<T>(y, reference_, map_tolerance(problem_));
  });
}

validation_result map_fixture::run_and_validate(const map_entry& entry, cudaStream_t stream) const {
  return run_and_validate(entry.launch, entry.form, stream);
}

namespace skeleton {
map_geometry map_launch_geometry(map_form wanted, const void* x, const void* y, std::size_t n,
                                 std::size_t elem_bytes) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vec = wanted == map_form::vec && aligned(x) && aligned(y);
  const std::size_t per_block =
      vec ? std::size_t(map_block) * map_vecs_per_thread * (16 / elem_bytes) : std::size_t(map_block);
  const std::size_t grid = std::max<std::size_t>(1, (n + per_block - 1) / per_block);
  if (grid > std::size_t(std::numeric_limits<int>::max()))
    throw error("map: n = " + std::to_string(n) + " needs more blocks than a launch allows");
  return {vec ? map_form::vec : map_form::scalar, unsigned(grid)};
}
}  // namespace skeleton

}  // namespace cdl
