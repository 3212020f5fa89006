// A user's map op, compiled for the host so that what 06 and 07 compute from it can be checked
// against a float64 reference, like every built-in op. The host compiler ($CXX, else c++) sees
// the very text the JIT compiled (jit::op_definition, with __device__ defined empty) and the
// embedded ops.cuh, so `sin(x)` means the same function on both sides.
#pragma once

#include "jit_kernels.hpp"

#include <memory>

namespace cdl {

class host_op {
 public:
  // Compiles and loads op; throws cdl::error with the compiler's output when it cannot.
  explicit host_op(const jit::op_text& op);

  double (*function() const)(double) { return function_; }

 private:
  struct unload {
    void operator()(void* library) const;  // dlclose
  };
  std::unique_ptr<void, unload> library_;  // the shared library the op was built into; not copied
  double (*function_)(double) = nullptr;
};

}  // namespace cdl
