#include "fixture.hpp"

namespace cdl {

validation_result download_and_validate(const void* output, dtype type, std::size_t count,
                                        const std::vector<reference_value>& reference, double tolerance,
                                        cudaStream_t stream) {
  CDL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return visit_dtype(type, [&](auto t) {
    using T = decltype(t);
    std::vector<T> host(count);
    CDL_CUDA_CHECK(cudaMemcpy(host.data(), output, count * sizeof(T), cudaMemcpyDeviceToHost));
    return validate<T>(host, reference, tolerance);
  });
}

}  // namespace cdl
