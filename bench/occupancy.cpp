// cdl_occupancy: each kernel's theoretical occupancy, asked of the CUDA runtime itself
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) at the block size the suite launches it with.
// Every kernel of the suite declares __launch_bounds__ with exactly that block size, which
// cudaFuncGetAttributes returns as maxThreadsPerBlock; a kernel without one reports 1024 (or what
// its registers allow), and the report marks the block size as the bound, not a launch.
//
//   cdl_occupancy < LINES       each line: CUBIN_PATH <tab> MANGLED_KERNEL_NAME
//
// reports/resources.py extracts each object's CUBIN (cuobjdump -xelf) and feeds it the kernels
// ptxas reported; prints a JSON array, one object per line of input. Needs a GPU: without one it
// says so and exits 1. Dynamic shared memory is taken as 0 (the tiled blur adds its halo tile's).
#include "common/check.hpp"
#include "common/device_info.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>

int main() {
  using namespace cdl;
  std::string why;
  if (!gpu_available(&why)) {
    std::fprintf(stderr, "cdl_occupancy: %s\n", why.c_str());
    return 1;
  }
  try {
    int max_threads_per_sm = 0;
    CDL_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                          query_device().ordinal));
    std::map<std::string, cudaLibrary_t> libraries;  // kept loaded until exit
    nlohmann::json out = nlohmann::json::array();
    for (std::string line; std::getline(std::cin, line);) {
      const std::size_t tab = line.find('\t');
      if (tab == std::string::npos) throw error("expected 'CUBIN<tab>KERNEL', got: " + line);
      const std::string path = line.substr(0, tab), name = line.substr(tab + 1);
      cudaLibrary_t& library = libraries[path];
      if (!library)
        CDL_CUDA_CHECK(
            cudaLibraryLoadFromFile(&library, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      cudaKernel_t kernel = nullptr;
      CDL_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, name.c_str()));
      const void* fn = reinterpret_cast<const void*>(kernel);  // accepted wherever a kernel's address is
      cudaFuncAttributes a{};
      CDL_CUDA_CHECK(cudaFuncGetAttributes(&a, fn));
      int blocks = 0;
      CDL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, a.maxThreadsPerBlock, 0));
      out.push_back({{"kernel", name},
                     {"block", a.maxThreadsPerBlock},
                     {"blocks_per_sm", blocks},
                     {"occupancy", double(blocks * a.maxThreadsPerBlock) / max_threads_per_sm},
                     {"registers", a.numRegs}});
    }
    std::cout << out.dump(1) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_occupancy: %s\n", e.what());
    return 1;
  }
  return 0;
}
