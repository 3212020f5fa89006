// What every workload fixture does the same way: poison the output before a run, then
// download it and compare every element with the reference.
#pragma once

#include "check.hpp"
#include "types.hpp"
#include "validation.hpp"

#include <vector>

namespace cdl {

// Synchronises `stream`, downloads `count` elements of `type` and validates them.
validation_result download_and_validate(const void* output, dtype type, std::size_t count,
                                        const std::vector<reference_value>& reference, double tolerance,
                                        cudaStream_t stream);

// The validation run of every fixture: fill the output's bytes with NaN, run `launch` (which
// enqueues the kernel on `stream`), then compare every one of the `count` elements.
template <class Launch>
validation_result poison_run_validate(void* output, std::size_t bytes, dtype type, std::size_t count,
                                      const std::vector<reference_value>& reference, double tolerance,
                                      cudaStream_t stream, Launch&& launch) {
  CDL_CUDA_CHECK(cudaMemsetAsync(output, poison_byte, bytes, stream));
  launch();
  return download_and_validate(output, type, count, reference, tolerance, stream);
}

}  // namespace cdl
