// What the lessons that compile at run time (06, 07, 08, 10) share beside strategies/lesson.cuh:
// the check of a compiler library's call, which prints the compiler's log; a compiler's output read
// out; a CUBIN or PTX loaded; this GPU's architecture; the map loop as source text around an op's
// text; the launch of a loaded kernel; and NVRTC's compile (06's lesson) for the lessons that build
// on it (07's parts, 10's JIT tier).
#pragma once
#include <nvJitLink.h>
#include <nvrtc.h>
#if __has_include(<nvvm.h>)  // 08 puts libNVVM's header on the include path
#include <nvvm.h>
#endif

#include <string>
#include <vector>

#include "strategies/lesson.cuh"

namespace lesson {

// A call of NVRTC, nvJitLink or libNVVM that failed: the call, its error and the compiler's log
// (each library's own pair of functions reads it), then exit.
template <class Handle, class LogSize, class Log>
void jit_fail(const char* call, const std::string& error, Handle handle, LogSize log_size, Log log,
              const char* file, int line) {
  std::size_t size = 0;
  if (handle) log_size(handle, &size);
  std::string text(size, '\0');
  if (size) log(handle, text.data());
  std::fprintf(stderr, "%s failed: %s (%s:%d)\n%s\n", call, error.c_str(), file, line, text.c_str());
  std::exit(1);
}
inline void jit_check(nvrtcResult r, nvrtcProgram p, const char* call, const char* file, int line) {
  if (r != NVRTC_SUCCESS)
    jit_fail(call, nvrtcGetErrorString(r), p, nvrtcGetProgramLogSize, nvrtcGetProgramLog, file, line);
}
inline void jit_check(nvJitLinkResult r, nvJitLinkHandle h, const char* call, const char* file, int line) {
  if (r != NVJITLINK_SUCCESS)
    jit_fail(call, "error " + std::to_string(int(r)), h, nvJitLinkGetErrorLogSize, nvJitLinkGetErrorLog, file,
             line);
}
#if __has_include(<nvvm.h>)
inline void jit_check(nvvmResult r, nvvmProgram p, const char* call, const char* file, int line) {
  if (r != NVVM_SUCCESS)
    jit_fail(call, nvvmGetErrorString(r), p, nvvmGetProgramLogSize, nvvmGetProgramLog, file, line);
}
#endif

// Every one of the three hands back what it made the same way: its size, then its bytes.
template <class Handle, class Size, class Get>
std::vector<char> jit_output(Handle handle, Size size_of, Get get, const char* call, const char* file,
                             int line) {
  std::size_t size = 0;
  jit_check(size_of(handle, &size), handle, call, file, line);
  std::vector<char> out(size);
  jit_check(get(handle, out.data()), handle, call, file, line);
  return out;
}

}  // namespace lesson

// JIT_CHECK(call, handle): the call's result checked, with the log of the program or link `handle`.
// JIT_OUTPUT(handle, nvrtcGetCUBIN): what the program made, read with the getter and its ...Size.
#define JIT_CHECK(call, handle) lesson::jit_check((call), handle, #call, __FILE__, __LINE__)
#define JIT_OUTPUT(handle, getter) \
  lesson::jit_output(handle, getter##Size, getter, #getter, __FILE__, __LINE__)

namespace lesson {

// The GPU's compute capability, XY (90 for sm_90): code for exactly it.
inline int device_arch() {
  int major = 0, minor = 0;
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  return major * 10 + minor;
}

// Loads a CUBIN, or PTX that the driver assembles as it loads it, and finds its kernel `map`.
inline cudaKernel_t load(const std::vector<char>& image, cudaLibrary_t& library) {
  CHECK(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel = nullptr;
  CHECK(cudaLibraryGetKernel(&kernel, library, "map"));
  return kernel;
}

// 06's compile (strategies/06_nvrtc_jit.cu teaches it): `source` compiled by NVRTC with `options`,
// to a CUBIN, or with -dlto to LTO-IR for nvJitLink (07).
inline std::vector<char> nvrtc(const std::string& source, const std::vector<const char*>& options) {
  nvrtcProgram program = nullptr;
  JIT_CHECK(nvrtcCreateProgram(&program, source.c_str(), "lesson.cu", 0, nullptr, nullptr), program);
  JIT_CHECK(nvrtcCompileProgram(program, int(options.size()), options.data()), program);
  const bool lto = std::find(options.begin(), options.end(), std::string("-dlto")) != options.end();
  std::vector<char> out = lto ? JIT_OUTPUT(program, nvrtcGetLTOIR) : JIT_OUTPUT(program, nvrtcGetCUBIN);
  JIT_CHECK(nvrtcDestroyProgram(&program), program);
  return out;
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
