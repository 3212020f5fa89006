// What the lessons that compile at run time (06, 07, 08, 10) share beside strategies/lesson.cuh:
// NVRTC's check, which prints the compiler's log; this GPU's architecture; the map loop as source
// text around an op's text; and the launch of a loaded kernel (each lesson's `map`).
#pragma once
#include <nvrtc.h>

#include <string>

#include "strategies/lesson.cuh"

namespace lesson {

// A call of NVRTC, nvJitLink or libNVVM that failed: the call, its error and the compiler's log
// (each library's own pair of functions reads it), then exit. The macros below pass each library's.
template <class Handle, class LogSize, class Log>
void jit_check(bool ok, const char* call, const std::string& error, Handle handle, LogSize log_size, Log log,
               const char* file, int line) {
  if (ok) return;
  std::size_t size = 0;
  log_size(handle, &size);
  std::string text(size, '\0');
  log(handle, text.data());
  std::fprintf(stderr, "%s failed: %s (%s:%d)\n%s\n", call, error.c_str(), file, line, text.c_str());
  std::exit(1);
}

}  // namespace lesson

#define NVRTC_CHECK(call, program)                                                                        \
  do {                                                                                                    \
    const nvrtcResult r = (call);                                                                         \
    lesson::jit_check(r == NVRTC_SUCCESS, #call, nvrtcGetErrorString(r), program, nvrtcGetProgramLogSize, \
                      nvrtcGetProgramLog, __FILE__, __LINE__);                                            \
  } while (0)

namespace lesson {

// The GPU's compute capability, XY (90 for sm_90): code for exactly it.
inline int device_arch() {
  int major = 0, minor = 0;
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  return major * 10 + minor;
}

// lesson::map_kernel's loop as text, around the op's text `call` (an expression of v).
inline std::string map_source(const std::string& call) {
  return "extern \"C\" __global__ void map(const float* x, float* y, unsigned long long n, int k) {\n"
         "  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
         "  if (i >= n) return;\n"
         "  float acc = 0.0f;\n"
         "  for (int j = 0; j < k; ++j) {\n"
         "    const float v = x[i] + float(j) * (1.0f / 4096);\n"
         "    acc += " +
         call +
         ";\n"
         "  }\n"
         "  y[i] = acc;\n"
         "}\n";
}

// Launches a loaded `map` kernel on the problem.
inline void launch_map(cudaKernel_t kernel, const problem& p, int k) {
  const float* x = p.dx;
  float* y = p.dy;
  unsigned long long n = p.n;
  void* args[] = {&x, &y, &n, &k};
  CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid(p.n), block, args, 0, 0));
}

}  // namespace lesson
