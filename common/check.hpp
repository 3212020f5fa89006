// Checked CUDA calls. Every runtime call in the project goes through CDL_CUDA_CHECK, and
// every launch is followed by CDL_CHECK_LAUNCH, so a failure names the call, file and line
// instead of surfacing later as a wrong number.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace cdl {

// The project's one error type: what went wrong, in words a user can act on.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA runtime call that failed; keeps the code so callers can tell "no GPU" apart.
class cuda_error : public error {
 public:
  cuda_error(cudaError_t code, const char* call, const char* file, int line);
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {
inline void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) throw cuda_error(code, call, file, line);
}
}  // namespace detail

}  // namespace cdl

#define CDL_CUDA_CHECK(call) ::cdl::detail::check_cuda((call), #call, __FILE__, __LINE__)

// A launch reports configuration errors only through cudaGetLastError; faults inside the
// kernel surface at the next synchronising call, which is itself checked.
#define CDL_CHECK_LAUNCH() ::cdl::detail::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
