// What every workload fixture does the same way: poison the output before a run, then
// download it and compare every element with the reference.
#pragma once

#include "check.hpp"
#include "types.hpp"
#include "validation.hpp"

#include <vector>

namespace cdl {

inline void poison(void* output, std::size_t bytes, cudaStream_t stream) {
  CDL_CUDA_CHECK(cudaMemsetAsync(output, poison_byte, bytes, stream));
}

// Synchronises `stream`, downloads `count` elements of `type` and validates them.
validation_result download_and_validate(const void* output, dtype type, std::size_t count,
                                        const std::vector<reference_value>& reference, double tolerance,
                                        cudaStream_t stream);

}  // namespace cdl
