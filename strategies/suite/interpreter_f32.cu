// Strategy 16's float kernels under C names (declared, with the forms, in interpreter_kernels.cuh):
// suite/16_interpreter.cu launches them for float, and the build copies this object's fatbin out as
// plugins/cdl_interpreter.fatbin, the file the Python peers load. An object of their own, so that
// the file holds them alone and each kernel is compiled once.
#include "strategies/suite/interpreter_kernels.cuh"

#define CDL_DEFINE_SCALAR(S, SLOTS) \
  CDL_INTERPRETER_F32_SCALAR(S, SLOTS) { cdl::interpreter::interpreter_scalar_body<S, SLOTS>(x, y, n, k, p); }
#define CDL_DEFINE_VEC(V, S, SLOTS) \
  CDL_INTERPRETER_F32_VEC(V, S, SLOTS) { cdl::interpreter::interpreter_vec_body<V, S, SLOTS>(x, y, n, k, p); }
CDL_INTERPRETER_F32_FORMS(CDL_DEFINE_SCALAR, CDL_DEFINE_VEC)
