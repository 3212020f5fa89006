// cublas_peer.hpp's launch: cuBLAS SGEMM/DGEMM in row-major terms, one handle per process.
#include "cublas_peer.hpp"

#include "device_buffer.hpp"

#include <cublas_v2.h>

#include <cmath>

namespace cdl {

namespace {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw error(std::string(call) + " failed: " + cublasGetStatusString(status) + " (" + file + ":" +
                std::to_string(line) + ")");
}
#define CDL_CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// One per process, created on first use and destroyed at exit (before the CUDA runtime's own
// teardown, which was set up by the runtime's first call, earlier), so that a leak check sees
// cuBLAS's workspace freed.
class cublas_handle {
 public:
  cublas_handle() { CDL_CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~cublas_handle() { cublasDestroy(handle_); }  // never throws
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  operator cublasHandle_t() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

cublasHandle_t handle() {
  static const cublas_handle h;
  return h;
}

// Row-major C = A B through column-major DGEMM (see cublas_matmul), on the handle's stream.
void dgemm(const double* a, const double* b, double* c, int m, int n, int k) {
  const double one = 1, zero = 0;
  CDL_CUBLAS_CHECK(cublasSetStream(handle(), nullptr));
  CDL_CUBLAS_CHECK(cublasDgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n));
}

}  // namespace

std::vector<reference_value> cublas_reference(const std::vector<double>& a, const std::vector<double>& b,
                                              int m, int n, int k) {
  device_buffer<double> da(a.size()), db(b.size()), dc(std::size_t(m) * n);
  std::vector<double> product(std::size_t(m) * n), magnitudes(product.size());
  auto run = [&](const std::vector<double>& ha, const std::vector<double>& hb, std::vector<double>& out) {
    CDL_CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), da.bytes(), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), db.bytes(), cudaMemcpyHostToDevice));
    dgemm(da.data(), db.data(), dc.data(), m, n, k);
    CDL_CUDA_CHECK(cudaMemcpy(out.data(), dc.data(), dc.bytes(), cudaMemcpyDeviceToHost));
  };
  run(a, b, product);
  std::vector<double> abs_a(a.size()), abs_b(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
  run(abs_a, abs_b, magnitudes);
  std::vector<reference_value> r(product.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = {product[i], magnitudes[i]};
  return r;
}

void cublas_matmul(const matmul_launch& a) {
  if (a.op != semiring::plus_times)
    throw error("cuBLAS computes only the (+,×) product, not " + std::string(info(a.op).name));
  if (a.m == 0 || a.n == 0) return;
  CDL_CUBLAS_CHECK(cublasSetStream(handle(), a.stream));
  // Row-major C = A B is, read column-major, C^T = B^T A^T: swap the operands, no transposes.
  if (a.type == dtype::f32) {
    const float one = 1, zero = 0;
    CDL_CUBLAS_CHECK(cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one,
                                 static_cast<const float*>(a.b), a.n, static_cast<const float*>(a.a), a.k,
                                 &zero, static_cast<float*>(a.c), a.n));
  } else {
    const double one = 1, zero = 0;
    CDL_CUBLAS_CHECK(cublasDgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one,
                                 static_cast<const double*>(a.b), a.n, static_cast<const double*>(a.a), a.k,
                                 &zero, static_cast<double*>(a.c), a.n));
  }
}

}  // namespace cdl
