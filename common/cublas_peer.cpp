// cublas_peer.hpp's launch: cuBLAS SGEMM/DGEMM in row-major terms, one handle per process.
#include "cublas_peer.hpp"

#include <cublas_v2.h>

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

}  // namespace

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
