// cdl_occupancy: each kernel's theoretical occupancy, asked of the CUDA driver
// (cuOccupancyMaxActiveBlocksPerMultiprocessor) at the block size the suite launches it with.
// Every kernel of the suite declares __launch_bounds__ with exactly that block size, which the
// driver returns as the kernel's maximum threads per block; a kernel without one reports 1024 (or
// what its registers allow), and the report marks the block size as the bound, not a launch.
//
//   cdl_occupancy < LINES       each line: MANGLED_KERNEL_NAME <tab> CUBIN [<tab> CUBIN ...]
//
// reports/resources.py extracts each object's CUBINs (cuobjdump -xelf) and feeds it the kernels
// ptxas reported, each with the CUBINs that may hold it loadable, tried in turn: its own object's,
// then its library's device link (a kernel of relocatable device code loads only from there, where
// the device runtime's symbols are resolved). Prints a JSON array, one object per line of input:
// the kernel's figures, or, for a kernel no CUBIN could give, the error, so that one kernel the
// driver cannot be asked about never costs the others theirs.
// Needs a GPU: without one it says so and exits 1. Dynamic shared memory is taken as 0 (the tiled
// blur adds its halo tile's).
//
// The runtime's library API loads each CUBIN (cudaLibraryLoadFromFile) and finds the kernel; the
// driver's own calls, fetched at run time (this program links no libcuda), ask about it.
#include "common/check.hpp"
#include "common/device_info.hpp"

#include <cuda.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cdl;

// A driver call, fetched through the runtime for the CUDA version this program was built with.
template <class Fn>
Fn driver_entry(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CDL_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &fn, CUDART_VERSION, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw error(std::string("the driver has no ") + symbol + " for CUDA " + std::to_string(CUDART_VERSION));
  return reinterpret_cast<Fn>(fn);
}

struct driver {
  decltype(&cuKernelGetFunction) kernel_function =
      driver_entry<decltype(&cuKernelGetFunction)>("cuKernelGetFunction");
  decltype(&cuFuncGetAttribute) attribute = driver_entry<decltype(&cuFuncGetAttribute)>("cuFuncGetAttribute");
  decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy =
      driver_entry<decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor)>(
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
};

void check_driver(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) throw error(std::string(call) + " failed: CUresult " + std::to_string(int(r)));
}

// One kernel from one CUBIN: its block size, blocks per SM, fraction of the SM's threads, registers.
nlohmann::json ask(const driver& d, cudaLibrary_t library, const std::string& name, int max_threads_per_sm) {
  cudaKernel_t kernel = nullptr;
  CDL_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, name.c_str()));
  CUfunction fn = nullptr;
  check_driver(d.kernel_function(&fn, reinterpret_cast<CUkernel>(kernel)), "cuKernelGetFunction");
  int block = 0, registers = 0, blocks = 0;
  check_driver(d.attribute(&block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn), "cuFuncGetAttribute");
  check_driver(d.attribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), "cuFuncGetAttribute");
  check_driver(d.occupancy(&blocks, fn, block, 0), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return {{"kernel", name},
          {"block", block},
          {"blocks_per_sm", blocks},
          {"occupancy", double(blocks * block) / max_threads_per_sm},
          {"registers", registers}};
}

}  // namespace

int main() {
  std::string why;
  if (!gpu_available(&why)) {
    std::fprintf(stderr, "cdl_occupancy: %s\n", why.c_str());
    return 1;
  }
  try {
    int max_threads_per_sm = 0;
    CDL_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                          query_device().ordinal));
    CDL_CUDA_CHECK(cudaFree(nullptr));  // the primary context, current: the driver's calls use it
    const driver d;
    std::map<std::string, cudaLibrary_t> libraries;  // kept loaded until exit
    nlohmann::json out = nlohmann::json::array();
    for (std::string line; std::getline(std::cin, line);) {
      std::istringstream fields(line);
      std::string name, cubin;
      std::vector<std::string> cubins;
      std::getline(fields, name, '\t');
      while (std::getline(fields, cubin, '\t')) cubins.push_back(cubin);
      if (name.empty() || cubins.empty())
        throw error("expected 'KERNEL<tab>CUBIN[<tab>CUBIN...]', got: " + line);
      nlohmann::json answer;
      std::string errors;
      for (const std::string& path : cubins) {
        try {
          cudaLibrary_t& library = libraries[path];
          if (!library)
            CDL_CUDA_CHECK(
                cudaLibraryLoadFromFile(&library, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
          answer = ask(d, library, name, max_threads_per_sm);
          break;
        } catch (const error& e) {
          errors += (errors.empty() ? "" : "; ") + path + ": " + e.what();
          (void)cudaGetLastError();  // a failed load or lookup is this kernel's, not the next one's
        }
      }
      out.push_back(answer.is_null() ? nlohmann::json{{"kernel", name}, {"error", errors}} : answer);
    }
    std::cout << out.dump(1) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_occupancy: %s\n", e.what());
    return 1;
  }
  return 0;
}
