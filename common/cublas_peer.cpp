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

// One per process, created on first use and never destroyed: at exit the CUDA runtime may
// already be gone.
cublasHandle_t handle() {
  static const cublasHandle_t h = [] {
    cublasHandle_t made = nullptr;
    CDL_CUBLAS_CHECK(cublasCreate(&made));
    return made;
  }();
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
    CDL_CUBLAS_CHECK(cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one, static_cast<const float*>(a.b),
                                 a.n, static_cast<const float*>(a.a), a.k, &zero, static_cast<float*>(a.c), a.n));
  } else {
    const double one = 1, zero = 0;
    CDL_CUBLAS_CHECK(cublasDgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one,
                                 static_cast<const double*>(a.b), a.n, static_cast<const double*>(a.a), a.k, &zero,
                                 static_cast<double*>(a.c), a.n));
  }
}

}  // namespace cdl
