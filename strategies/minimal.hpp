// Each strategy's mechanism in its smallest complete form: one op (y = x*x + 2x + 1 on floats; for
// 09, whose mechanism pays only where threads share data, a 3 x 3 box blur), one kernel, one
// launch, written as a reader would write it in their own code, at the top of the strategy's file.
// The JIT forms (06, 07, 08, 10) call NVRTC, nvJitLink and libNVVM directly, as a reader's program
// would, so they are built only into tests/gpu_minimal_test, which links those libraries
// (CDL_MINIMAL_JIT): the suite's programs load the compilers at their first compile instead
// (common/jit.cpp says why), and their forms below have no function to run. The rest of each file
// generalises it (an invoker the shared skeletons call, for every op and workload) so that every
// strategy runs the same loop and a difference in time is the call. tests/gpu_minimal_test.cu
// validates each against the float64 reference the suite's own strategies are checked against.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#if CDL_MINIMAL_JIT
#include <nvrtc.h>

#include <string>
#include <vector>
#endif

namespace cdl::minimal {

// Each form's entry point: y = op(x) for n elements, launched on `stream`.
using map_form_fn = void(const float* x, float* y, std::size_t n, cudaStream_t stream);
map_form_fn inline_op, functor, device_lambda, switch_on_id, function_pointer, virtual_call;    // 00-05
map_form_fn type_from_address, variant_visit, precompiled_plugin, graph_switch, device_launch;  // 11-15
void tiled_blur(const float* in, float* out, int width, int height, cudaStream_t stream);       // 09
// Built with CDL_MINIMAL_JIT only:
map_form_fn nvrtc_jit, jit_lto, nvvm_jit;                                  // 06-08
int tiered(const float* x, float* y, std::size_t n, cudaStream_t stream);  // 10
#if CDL_MINIMAL_JIT
// The steps the JIT forms share, written once in 06's block.
// A compiler's or linker's log: NVRTC, nvJitLink and libNVVM each give its size, then its text.
template <class Handle, class SizeFn, class TextFn>
std::string compiler_log(Handle h, SizeFn size_of_log, TextFn text_of_log) {
  std::size_t size = 0;
  size_of_log(h, &size);
  std::string log(size, '\0');
  if (size) text_of_log(h, log.data());
  return log;
}
int device_arch();                                // this GPU's sm_XY as XY
void nvrtc_check(nvrtcResult r, nvrtcProgram p);  // throws with the compiler's log
cudaKernel_t load_kernel(const std::vector<char>& image, const char* name);
cudaKernel_t compile_quadratic();  // 06's compile, which 10 runs on a host thread
void launch_quadratic(cudaKernel_t kernel, const float* x, float* y, std::size_t n, cudaStream_t stream);
#endif

// Where each is written (the line its block opens at), for `cdl_run --list` and the
// tests, which iterate this table.
// One of run (the map's op) and run_image (the blur) is set, or neither for a JIT form.
struct form {
  const char* strategy;
  map_form_fn* run;
  void (*run_image)(const float* in, float* out, int width, int height, cudaStream_t stream);
  const char* file;
  int line;
};
extern const form inline_form, functor_form, lambda_form, switch_form, pointer_form, virtual_form, nvrtc_form,
    lto_form, nvvm_form, tiled_blur_form, tiered_form, type_from_address_form, variant_form, plugin_form,
    graph_switch_form, device_launch_form;
inline const form* const all[] = {
    &inline_form,  &functor_form,    &lambda_form,       &switch_form,
    &pointer_form, &virtual_form,    &nvrtc_form,        &lto_form,
    &nvvm_form,    &tiled_blur_form, &tiered_form,       &type_from_address_form,
    &variant_form, &plugin_form,     &graph_switch_form, &device_launch_form};

}  // namespace cdl::minimal
