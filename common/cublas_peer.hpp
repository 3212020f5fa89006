// The library peer of the matmul workload: cuBLAS SGEMM/DGEMM for the (+,×) semiring, with the
// launch signature of every strategy so the same fixture validates and times it. cuBLAS's
// default math mode is used: FP32 (or FP64) fused multiply-adds, no TF32 tensor cores, the
// arithmetic the tiled kernels do.
#pragma once

#include "matmul_workload.hpp"

namespace cdl {

// Throws cdl::error for a semiring other than plus_times (cuBLAS has only that one).
void cublas_matmul(const matmul_launch& a);

// The float64 product of row-major a (m x k) and b (k x n) by cuBLAS DGEMM on the GPU, as the
// reference for (+,×) problems too large for the CPU's (matmul_fixture): every element of C, and
// the sum of its terms' magnitudes (the product of |a| and |b|) for its tolerance.
std::vector<reference_value> cublas_reference(const std::vector<double>& a, const std::vector<double>& b,
                                              int m, int n, int k);

}  // namespace cdl
