// The one out-of-line part of check.hpp: the message a failed CUDA call throws with.
#include "check.hpp"

namespace cdl {

cuda_error::cuda_error(cudaError_t code, const char* call, const char* file, int line)
    : error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
            cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
      code_(code) {}

}  // namespace cdl
