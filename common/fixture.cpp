#include "fixture.hpp"

#include <mutex>

namespace cdl {

namespace {
// Page-locked memory the outputs are downloaded into: several times faster than a copy into
// pageable memory, which matters when every benchmark validates up to 2 GiB. Grows, never
// shrinks, and is never freed (at exit the CUDA runtime may already be gone).
std::span<std::byte> staging(std::size_t bytes) {
  static std::byte* buffer = nullptr;
  static std::size_t capacity = 0;
  if (bytes > capacity) {
    if (buffer) CDL_CUDA_CHECK(cudaFreeHost(buffer));
    buffer = nullptr;
    capacity = 0;
    void* p = nullptr;
    CDL_CUDA_CHECK(cudaMallocHost(&p, bytes));
    buffer = static_cast<std::byte*>(p);
    capacity = bytes;
  }
  return {buffer, bytes};
}
}  // namespace

validation_result download_and_validate(const void* output, dtype type, std::size_t count,
                                        const std::vector<reference_value>& reference, double tolerance,
                                        cudaStream_t stream) {
  static std::mutex one_at_a_time;  // the staging buffer is shared
  const std::lock_guard lock(one_at_a_time);
  CDL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return visit_dtype(type, [&](auto t) {
    using T = decltype(t);
    const std::span<std::byte> host = staging(count * sizeof(T));
    if (count) CDL_CUDA_CHECK(cudaMemcpy(host.data(), output, host.size(), cudaMemcpyDeviceToHost));
    return validate<T>(std::span<const T>(reinterpret_cast<const T*>(host.data()), count), reference, tolerance);
  });
}

}  // namespace cdl
