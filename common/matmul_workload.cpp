// matmul_workload.hpp's problem, inputs, float64 reference (per semiring) and fixture; the
// kernels are in skeletons/matmul.cuh, and each strategy's launch in strategies/.
#include "matmul_workload.hpp"

#include "cublas_peer.hpp"
#include "inputs.hpp"

#include <algorithm>
#include <cmath>

namespace cdl {

std::string matmul_problem::describe() const {
  return "matmul semiring=" + std::string(info(op).name) + " type=" + std::string(to_string(type)) + " " +
         std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Past 2048^3 terms the CPU's float64 reference takes tens of seconds (minutes at 8192^3); the
// plain product's is then computed in float64 by cuBLAS DGEMM on the GPU (a test checks the two
// references agree). The other semirings, which cuBLAS lacks, are not measured at those sizes.
constexpr double gpu_reference_terms = 2048.0 * 2048.0 * 2048.0;

template <class T>
std::vector<reference_value> matmul_reference(const matmul_problem& p, const std::vector<T>& a,
                                              const std::vector<T>& b) {
  std::vector<reference_value> out(std::size_t(p.m) * p.n);
  visit_op(p.op, [&](auto s) {
    using S = decltype(s);
    parallel_for(std::size_t(p.m), worker_count(std::size_t(p.m) * p.n * p.k, 1 << 16),
                 [&](std::size_t, std::size_t begin, std::size_t end) {
                   // Row by row, k outside j: B is read along its rows, and the j loop
                   // vectorises, which keeps the 4096^3 reference to seconds.
                   std::vector<double> acc(std::size_t(p.n)), sum_abs(std::size_t(p.n));
                   for (std::size_t i = begin; i < end; ++i) {
                     std::fill(acc.begin(), acc.end(), S::template identity<double>());
                     std::fill(sum_abs.begin(), sum_abs.end(), 0.0);
                     for (int k = 0; k < p.k; ++k) {
                       const double x = a[i * p.k + k];
                       const T* b_row = b.data() + std::size_t(k) * p.n;
                       for (int j = 0; j < p.n; ++j) {
                         const double y = b_row[j];
                         acc[j] = s(acc[j], x, y);
                         sum_abs[j] += std::fabs(s(0.0, x, y) - s(0.0, 0.0, 0.0));  // |combine(x, y)|
                       }
                     }
                     // A sum's error grows with its terms' magnitude; a min/max is exact up to the
                     // one rounding of its winning term.
                     for (int j = 0; j < p.n; ++j)
                       out[i * p.n + j] = {acc[j], S::sums ? sum_abs[j] : std::fabs(acc[j])};
                   }
                 });
  });
  return out;
}
template std::vector<reference_value> matmul_reference(const matmul_problem&, const std::vector<float>&,
                                                       const std::vector<float>&);
template std::vector<reference_value> matmul_reference(const matmul_problem&, const std::vector<double>&,
                                                       const std::vector<double>&);

template <>
matmul_fixture::fixture(const matmul_problem& p, std::uint64_t seed)
    : workload_fixture(p, p.type, std::size_t(p.m) * p.n, tolerance_for(epsilon_of(p.type), 2, p.k)),
      in_{.a = device_buffer<std::byte>(std::size_t(p.m) * p.k * size_of(p.type)),
          .b = device_buffer<std::byte>(std::size_t(p.k) * p.n * size_of(p.type))} {
  if (p.m < 0 || p.n < 0 || p.k < 0) throw error("matmul: negative size in " + p.describe());
  visit_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    const std::vector<T> a = uniform_inputs<T>(std::size_t(p.m) * p.k, seed),
                         b = uniform_inputs<T>(std::size_t(p.k) * p.n, seed + 1);
    CDL_CUDA_CHECK(cudaMemcpy(in_.a.data(), a.data(), in_.a.bytes(), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemcpy(in_.b.data(), b.data(), in_.b.bytes(), cudaMemcpyHostToDevice));
    if (p.op == semiring::plus_times && double(p.m) * p.n * p.k > gpu_reference_terms) {
      reference_ = cublas_reference(std::vector<double>(a.begin(), a.end()),
                                    std::vector<double>(b.begin(), b.end()), p.m, p.n, p.k);
      return;
    }
    reference_ = matmul_reference(p, a, b);
  });
}

template <>
void matmul_fixture::launch(matmul_launch_fn fn, matmul_form form, cudaStream_t stream) const {
  fn(matmul_launch{problem_.op, form, problem_.type, in_.a.data(), in_.b.data(), output<void>(), problem_.m,
                   problem_.n, problem_.k, stream});
}

}  // namespace cdl
