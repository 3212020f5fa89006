// What every header compiled by nvcc, the host compiler *and* NVRTC (the routes that compile C++ at
// run time compile the skeletons from source) has in common.
//
// NVRTC ships no C++ standard library. CCCL's <cuda/std/...> headers would supply one, but
// <cuda/std/utility> alone adds ~0.7 s to every run-time compile (measured with NVRTC 13.0),
// so the headers NVRTC sees use nothing from std but size_t, which NVRTC has built in.
#pragma once

#if defined(__CUDACC__)
#define CDL_HD __host__ __device__
#else
#define CDL_HD
#endif

// The skeletons' host-side launch functions (<<<>>>, CDL_CHECK_LAUNCH) are for nvcc only.
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define CDL_HOST_LAUNCHES 1
#else
#define CDL_HOST_LAUNCHES 0
#endif

#if defined(__CUDACC_RTC__)
namespace std {
using ::size_t;
}
#else
#include <cstddef>
#endif
