// device_buffer.hpp's allocation and its out-of-memory message; read the header first.
#include "device_buffer.hpp"

#include <cstdio>
#include <string>

namespace cdl {

namespace {
std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
  return text;
}
}  // namespace

void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t code = cudaMalloc(&p, bytes);
  if (code == cudaSuccess) return p;
  if (code == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw error("cannot allocate " + gib(bytes) + " on the device: " + gib(free_bytes) + " free of " +
                gib(total_bytes) + "; choose a smaller size");
  }
  detail::check_cuda(code, "cudaMalloc", __FILE__, __LINE__);
  return nullptr;
}

}  // namespace cdl
