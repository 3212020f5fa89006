// 07 - JIT LTO: the kernel compiled ahead with the op only declared, the op linked in at run time.
//
// Idea.    The kernel is compiled once to LTO-IR (NVVM's intermediate form) with the op declared
//          and not defined; each new op is compiled on its own to LTO-IR, and nvJitLink links the
//          two with link-time optimisation (-lto): the call is inlined across them, as if the op
//          had been in the kernel's source, and ptxas makes the CUBIN.
// Cost.    Per new op, a compile of the op alone (small) and the link, which optimises and
//          assembles the whole kernel; the kernel's LTO-IR is made once, here at start-up (a
//          program ships it). The report's compile table gives each stage beside 06's compile.
// Use it   when the kernels are large and fixed and the ops small and new: the kernels' front end
//          is paid once, not per op; a plugin (13) ships the op's LTO-IR prebuilt.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/07_jit_lto.cu -o 07 -lnvrtc -lnvJitLink
// See it.  cuobjdump -sass of the linked CUBIN (nvJitLinkGetLinkedCubin below): the op's FFMAs inside
//          the loop, no CALL: the link inlined it.
// Suite.   strategies/suite/07_jit_lto.cu: every workload, and the kernels' LTO-IR preoptimised.
#include <nvJitLink.h>

#include <chrono>

#include "strategies/lesson_jit.cuh"

// Source -> LTO-IR (-dlto, relocatable: the op may stay undefined until the link), by 06's compile.
std::vector<char> ltoir(const std::string& source, const std::string& arch) {
  const std::string arch_option = "-arch=" + arch;
  return lesson::nvrtc(source, {arch_option.c_str(), "-dlto", "-rdc=true"});
}

// The kernel's LTO-IR and an op's, linked and optimised as one, to a loaded kernel.
cudaKernel_t link(const std::vector<char>& kernel_ir, const std::string& op, const std::string& arch,
                  cudaLibrary_t& library) {
  const std::vector<char> op_ir = ltoir("__device__ float op(float v) { return " + op + "; }", arch);
  const std::string arch_option = "-arch=" + arch;
  const char* options[] = {arch_option.c_str(), "-lto"};
  nvJitLinkHandle handle = nullptr;
  JIT_CHECK(nvJitLinkCreate(&handle, 2, options), handle);
  JIT_CHECK(nvJitLinkAddData(handle, NVJITLINK_INPUT_LTOIR, kernel_ir.data(), kernel_ir.size(), "map"),
            handle);
  JIT_CHECK(nvJitLinkAddData(handle, NVJITLINK_INPUT_LTOIR, op_ir.data(), op_ir.size(), "op"), handle);
  JIT_CHECK(nvJitLinkComplete(handle), handle);
  const std::vector<char> cubin = JIT_OUTPUT(handle, nvJitLinkGetLinkedCubin);
  JIT_CHECK(nvJitLinkDestroy(&handle), handle);
  return lesson::load(cubin, library);
}

int main() {
  lesson::problem p;
  const std::string arch = "sm_" + std::to_string(lesson::device_arch());
  const std::vector<char> kernel_ir =  // made once: the kernel with the op declared, not defined
      ltoir("extern __device__ float op(float);\n" + lesson::map_source("op(v)"), arch);
  const auto start = std::chrono::steady_clock::now();
  cudaLibrary_t library = nullptr;
  const cudaKernel_t kernel = link(kernel_ir, "v * v + 2.0f * v + 1.0f", arch, library);  // a new op
  std::printf("the op compiled, linked and loaded in %.1f ms (once per new op)\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  const int status = lesson::compare(p, {{"jit_lto", [&](int k) { lesson::launch_map(kernel, p, k); }}});
  CHECK(cudaLibraryUnload(library));
  return status;
}
