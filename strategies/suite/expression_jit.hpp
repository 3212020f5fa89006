// Strategy 08's stages (08_expression_jit.cu), for its launches, cdl_run --expr, the tests and
// the compile-time benchmarks.
#pragma once

#include "common/expression.hpp"
#include "jit_kernels.hpp"

namespace cdl::expression_jit {

// How much of the compiler a new op gets. optimised: libNVVM's optimiser (-opt=3), the kernels
// every other strategy runs. baseline: none (-opt=0) on IR already in the optimiser's form, as a
// language runtime's first tier compiles: a new op sooner, its kernel nearly as fast (the report
// measures both).
enum class tier { optimised, baseline };

// The module 08 compiles for a program: the op, map_apply, and the map skeleton's kernel of one
// form (map_scalar or map_vec), in NVVM IR for element type t.
jit::nvvm_module map_module(const expr::program& p, dtype t, map_form form, const std::string& name,
                            tier level = tier::optimised);
// Everything that determines the PTX: the IR, libNVVM's version and options.
std::string cache_key(const jit::nvvm_module& m, int arch);
// IR -> PTX (libNVVM), no cache. The PTX is what 08 loads (jit::loaded): the driver assembles it
// then, whole-program, as nvcc's builds are (08_expression_jit.cu's header says why).
jit::module_image compile_uncached(const jit::nvvm_module& m, int arch);
// op's kernel of a form the geometry launches (skeleton::elementwise_launch_geometry's; launched
// by jit::launch_map_kernel, taking no op object): parsed, compiled (through the JIT cache) and
// loaded the first time, found after that. Text outside the language throws expr::syntax_error.
cudaKernel_t map_kernel(dtype t, map_form form, const jit::op_text& op, tier level);
// Launches op's kernel (map_kernel's, on its first launch compiled and loaded).
void launch_map(const map_launch& a, const jit::op_text& op, tier level = tier::optimised);

}  // namespace cdl::expression_jit
