// 13 - A precompiled plugin: the op built ahead of time by nvcc into a file, loaded at run time.
//
// Idea.    How a plugin ships: the op, with the map kernel around it, is compiled by nvcc on its own
//          into a file (a fatbin: machine code for the GPUs it was built for, and PTX for later
//          ones). A program built without knowing the op loads the file when the op is chosen
//          (cudaLibraryLoadFromFile) and finds the kernel by its C name (cudaLibraryGetKernel). No
//          compiler runs in the program. This one file is both: with -DPLUGIN it is the plugin.
// Cost.    A file per op to build, ship and find, and a contract no compiler checks (the kernel's
//          name and parameters: a mismatch is a wrong launch, not a build error); a file read and a
//          module load per op. The kernel is the template's: the op is inlined (the report's map
//          table gives both forms beside 01; the suite's `.lto` form links the op's LTO-IR instead).
// Use it   when ops come from elsewhere (a user, a vendor) and no compiler can run where the
//          program runs.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. -DPLUGIN -fatbin strategies/13_precompiled_plugin.cu \
//            -o quadratic.fatbin
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/13_precompiled_plugin.cu -o 13 \
//            && ./13 quadratic.fatbin
// See it.  cuobjdump -sass quadratic.fatbin: the template's loop with the op's FFMAs, no CALL.
// Suite.   strategies/suite/13_precompiled_plugin.cu and strategies/plugins/map_plugin.cu: every op,
//          built by CMake into build/<preset>/plugins/, and the LTO form.
#include "strategies/lesson.cuh"

#ifdef PLUGIN
// The plugin: the map kernel with its op, under a C name, the contract with the loader.
extern "C" __global__ void plugin_map(const float* x, float* y, std::size_t n, int k) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) acc += lesson::quadratic{}(x[i] + float(j) * lesson::delta);
  y[i] = acc;
}
#else
// The program: it knows the contract, not the op.
int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.fatbin (built by this file's first Build line)\n", argv[0]);
    return 2;
  }
  lesson::problem p;
  cudaLibrary_t library = nullptr;
  CHECK(cudaLibraryLoadFromFile(&library, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel = nullptr;
  CHECK(cudaLibraryGetKernel(&kernel, library, "plugin_map"));
  const int status =
      lesson::compare(p, {{"plugin", [&](int k) {
                             const float* x = p.dx;
                             float* y = p.dy;
                             std::size_t n = p.n;
                             void* args[] = {&x, &y, &n, &k};
                             CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), lesson::grid(n),
                                                    lesson::block, args, 0, 0));
                           }}});
  CHECK(cudaLibraryUnload(library));
  return status;
}
#endif
