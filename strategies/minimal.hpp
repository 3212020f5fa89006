// Each strategy's mechanism in its smallest complete form: one op (y = x*x + 2x + 1 on floats; for
// 09, whose mechanism pays only where threads share data, a 3 x 3 box blur), one kernel, one
// launch, written as a reader would write it in their own code, at the top of the strategy's file.
// The rest of each file generalises it (an invoker the shared skeletons call, for every op and
// workload) so that every strategy runs the same loop and a difference in time is the call.
// tests/gpu_minimal_test.cu validates each against the float64 reference the suite's own strategies
// are checked against. The JIT strategies (06, 07, 08, 10) have no such form: their lessons
// (strategies/NN_<name>.cu) call NVRTC, nvJitLink and libNVVM as a reader's program would, and
// tests/docs/test_run_lines.py builds, runs and validates them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace cdl::minimal {

// Each form's entry point: y = op(x) for n elements, launched on `stream`.
using map_form_fn = void(const float* x, float* y, std::size_t n, cudaStream_t stream);
map_form_fn inline_op, functor, device_lambda, switch_on_id, function_pointer, virtual_call;    // 00-05
map_form_fn type_from_address, variant_visit, precompiled_plugin, graph_switch, device_launch;  // 11-15
void tiled_blur(const float* in, float* out, int width, int height, cudaStream_t stream);       // 09

// Where each is written (the line its block opens at), for `cdl_run --list` and the
// tests, which iterate this table.
// One of run (the map's op) and run_image (the blur) is set.
struct form {
  const char* strategy;
  map_form_fn* run;
  void (*run_image)(const float* in, float* out, int width, int height, cudaStream_t stream);
  const char* file;
  int line;
};
extern const form inline_form, functor_form, lambda_form, switch_form, pointer_form, virtual_form,
    tiled_blur_form, type_from_address_form, variant_form, plugin_form, graph_switch_form, device_launch_form;
inline const form* const all[] = {&inline_form,  &functor_form, &lambda_form,       &switch_form,
                                  &pointer_form, &virtual_form, &tiled_blur_form,   &type_from_address_form,
                                  &variant_form, &plugin_form,  &graph_switch_form, &device_launch_form};

}  // namespace cdl::minimal
