// The one probe of cdl_build_facts that is run, not only compiled: a kernel that launches another
// kernel (dynamic parallelism). It needs relocatable device code and the device runtime
// (cudadevrt), so this file alone is compiled with -rdc (bench/CMakeLists.txt), and it needs a GPU:
// without one the probe says so and is not counted either way.
#include "dynamic_parallelism.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace {

__global__ void dp_inner(float* y) { y[threadIdx.x] *= 2.0f; }
__global__ void dp_outer(float* y) { dp_inner<<<1, 32>>>(y); }

// The first error of a sequence of calls, as "call: message", kept as data: a probe that fails
// is a finding to record, not a reason to stop the other probes.
struct first_error {
  std::string text;
  bool ok(cudaError_t e, const char* call) {
    if (e != cudaSuccess && text.empty()) text = std::string(call) + ": " + cudaGetErrorString(e);
    return text.empty();
  }
};

}  // namespace

namespace cdl {

nlohmann::json run_dynamic_parallelism() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();  // the "no device" error must not stick to a later call
    return {{"runs", nullptr}, {"reason", "no CUDA device: not run"}};
  }
  std::vector<float> host(32);
  for (int i = 0; i < 32; ++i) host[i] = float(i + 1);
  float* y = nullptr;
  first_error e;
  e.ok(cudaMalloc(&y, host.size() * sizeof(float)), "cudaMalloc") &&
      e.ok(cudaMemcpy(y, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") &&
      e.ok((dp_outer<<<1, 1>>>(y), cudaGetLastError()), "dp_outer<<<1, 1>>>") &&
      e.ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize") &&
      e.ok(cudaMemcpy(host.data(), y, host.size() * sizeof(float), cudaMemcpyDeviceToHost),
           "cudaMemcpy back");
  if (y) cudaFree(y);
  if (!e.text.empty()) return {{"runs", false}, {"valid", false}, {"error", e.text}};
  bool valid = true;
  for (int i = 0; i < 32; ++i) valid = valid && host[i] == 2.0f * float(i + 1);
  return {{"runs", true}, {"valid", valid}};
}

}  // namespace cdl
