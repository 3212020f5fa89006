// The library peer of the matmul workload: cuBLAS SGEMM/DGEMM for the (+,×) semiring, with the
// launch signature of every strategy so the same fixture validates and times it. cuBLAS's
// default math mode is used: FP32 (or FP64) fused multiply-adds, no TF32 tensor cores, the
// arithmetic the tiled kernels do.
#pragma once

#include "matmul_workload.hpp"

namespace cdl {

// Throws cdl::error for a semiring other than plus_times (cuBLAS has only that one).
void cublas_matmul(const matmul_launch& a);

}  // namespace cdl
