// Strategy 16's interpreter kernels (float), compiled ahead of time by nvcc into a file of their
// own, build/<preset>/plugins/cdl_interpreter.fatbin, for a program that has no compiler at run
// time and no C++ build of its own: the Python peers load it with PyCUDA (module_from_file) and run
// a user's op as data, the program written by `cdl_run --steps`. The kernels have C names (no
// mangling), the contract between the file and its loader; each is the suite's kernel of the same
// form (suite/16_interpreter.cu), its body from strategies/suite/interpreter_kernels.cuh.
//   cdl_interpreter_scalar_f32_<S>_<slots>      an element a thread, S steps of the k loop a pass
//   cdl_interpreter_vec_f32_<V>_<S>_<slots>     V 16-byte vectors a thread, S steps a pass
// Their last parameter is cdl::interpreter::kernel_program<float>, by value.
#include "strategies/suite/interpreter_kernels.cuh"

using cdl::interpreter::kernel_program;

#define CDL_SCALAR(S, SLOTS)                                                                       \
  extern "C" __global__ void __launch_bounds__(cdl::skeleton::elementwise_block)                   \
      cdl_interpreter_scalar_f32_##S##_##SLOTS(const float* __restrict__ x, float* __restrict__ y, \
                                               std::size_t n, int k,                               \
                                               const __grid_constant__ kernel_program<float> p) {  \
    cdl::interpreter::interpreter_scalar_body<S, SLOTS>(x, y, n, k, p);                            \
  }
#define CDL_VEC(V, S, SLOTS)                                                                          \
  extern "C" __global__ void __launch_bounds__(cdl::skeleton::elementwise_block)                      \
      cdl_interpreter_vec_f32_##V##_##S##_##SLOTS(const float* __restrict__ x, float* __restrict__ y, \
                                                  std::size_t n, int k,                               \
                                                  const __grid_constant__ kernel_program<float> p) {  \
    cdl::interpreter::interpreter_vec_body<V, S, SLOTS>(x, y, n, k, p);                               \
  }
// The forms suite/16_interpreter.cu launches for float: scalar, 16 lanes where k has the steps, else
// one; vec, 4 steps a pass where k has them, else one, on four vectors a thread for a long program
// that saves nothing.
CDL_SCALAR(1, 0)
CDL_SCALAR(1, 4)
CDL_SCALAR(16, 0)
CDL_SCALAR(16, 4)
CDL_VEC(2, 1, 0)
CDL_VEC(2, 1, 4)
CDL_VEC(4, 1, 0)
CDL_VEC(1, 4, 0)
CDL_VEC(1, 4, 4)
