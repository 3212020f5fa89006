// 06 - NVRTC: the op is source text, compiled with its kernel while the program runs.
//
// Idea.    The op arrives as text (a user's formula, a config file). The program pastes it into the
//          map kernel's source and NVRTC, the CUDA C++ compiler as a library, compiles that to a
//          CUBIN for this GPU; cudaLibraryLoadData loads it and the kernel runs like one built
//          ahead of time, the op inlined.
// Cost.    The compile and the load, tens of milliseconds, once per new op (the report's compile
//          table and its break-even against a switch); then the template's speed. A cache keyed
//          by the text makes the second time cheap (the suite keeps one in memory and on disk).
// Use it   when the op is written after the program is built and will run long enough to repay
//          the compile; 08 compiles a small language without a C++ front end, sooner.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/06_nvrtc_jit.cu -o 06_nvrtc_jit -lnvrtc
// See it.  Write the CUBIN to a file (nvrtcGetCUBIN below) and cuobjdump -sass it: the op's FFMAs in
//          the loop, as 01's kernel has them.
// Suite.   strategies/suite/06_nvrtc_jit.cu: every workload, the skeleton's header embedded, the cache.
#include <chrono>

#include "strategies/lesson_jit.cuh"

// Source -> CUBIN for this GPU (sm_XY: nothing left for the driver to compile) -> a loaded kernel.
cudaKernel_t compile(const std::string& op, cudaLibrary_t& library) {
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(lesson::device_arch());
  const char* options[] = {arch.c_str()};
  const std::string source = lesson::map_source(op);
  nvrtcProgram program = nullptr;
  JIT_CHECK(nvrtcCreateProgram(&program, source.c_str(), "map.cu", 0, nullptr, nullptr), program);
  JIT_CHECK(nvrtcCompileProgram(program, 1, options), program);
  const std::vector<char> cubin = JIT_OUTPUT(program, nvrtcGetCUBIN);  // its size, then its bytes
  JIT_CHECK(nvrtcDestroyProgram(&program), program);
  return lesson::load(cubin, library);
}

int main() {
  lesson::problem p;
  const std::string op = "v * v + 2.0f * v + 1.0f";  // as a user would type it at run time
  const auto start = std::chrono::steady_clock::now();
  cudaLibrary_t library = nullptr;
  const cudaKernel_t kernel = compile(op, library);
  std::printf("compiled and loaded in %.1f ms (once per new op)\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  const int status = lesson::compare(p, {{"nvrtc", [&](int k) { lesson::launch_map(kernel, p, k); }}});
  CHECK(cudaLibraryUnload(library));
  return status;
}
