// fixture.hpp's download and comparison, shared by every workload's fixture.
#include "fixture.hpp"

#include <mutex>
#include <utility>

namespace cdl {

namespace {
// Page-locked memory the outputs are downloaded into: several times faster than a copy into
// pageable memory, which matters when every benchmark validates up to 2 GiB. Grows, never
// shrinks. Freed at exit, so that a leak check (compute-sanitizer's memcheck) sees nothing
// left: the object is made after the runtime's first call, so it is destroyed before the
// runtime's own teardown.
class staging_buffer {
 public:
  ~staging_buffer() { cudaFreeHost(buffer_); }  // never throws
  std::span<std::byte> get(std::size_t bytes) {
    if (bytes > capacity_) {
      CDL_CUDA_CHECK(cudaFreeHost(std::exchange(buffer_, nullptr)));
      capacity_ = 0;
      void* p = nullptr;
      CDL_CUDA_CHECK(cudaMallocHost(&p, bytes));
      buffer_ = static_cast<std::byte*>(p);
      capacity_ = bytes;
    }
    return {buffer_, bytes};
  }

 private:
  std::byte* buffer_ = nullptr;
  std::size_t capacity_ = 0;
};
}  // namespace

validation_result download_and_validate(const void* output, dtype type, std::size_t count,
                                        const std::vector<reference_value>& reference, double tolerance,
                                        cudaStream_t stream) {
  static std::mutex one_at_a_time;  // the staging buffer is shared
  const std::lock_guard lock(one_at_a_time);
  CDL_CUDA_CHECK(cudaStreamSynchronize(stream));
  static staging_buffer staging;
  return visit_dtype(type, [&](auto t) {
    using T = decltype(t);
    const std::span<std::byte> host = staging.get(count * sizeof(T));
    if (count) CDL_CUDA_CHECK(cudaMemcpy(host.data(), output, host.size(), cudaMemcpyDeviceToHost));
    return validate<T>(std::span<const T>(reinterpret_cast<const T*>(host.data()), count), reference,
                       tolerance);
  });
}

}  // namespace cdl
