// Strategy 16's launches (suite/16_interpreter.cu), for its registration, cdl_run --expr, the tests
// and the first-result benchmark.
#pragma once

#include "common/bytecode.hpp"
#include "jit_kernels.hpp"

namespace cdl::interpreter {

// Launches the map with the interpreter running p's steps (bytecode::lower). Whatever their bytes say,
// the kernel reads and writes inside its steps, its numbers and its lanes (the tests launch random
// bytes).
void launch_map(const map_launch& a, const bytecode::steps& p);
// An op's text in 08's language as steps: parsed, encoded and lowered the first time, kept by its
// text. Text outside the language throws expr::syntax_error; a program past the interpreter's
// limits, cdl::error naming the limit.
const bytecode::steps& prepare(const jit::op_text& op);
// Launches the map with the interpreter running the op's steps (prepare's).
void launch_map(const map_launch& a, const jit::op_text& op);
// Whether the interpreter's kernels are loaded: once one has launched in this process, or from the
// start where CUDA_MODULE_LOADING=EAGER has the runtime load every kernel with the context. By
// default the runtime loads a kernel at its first launch, inside it, so the interpreter's first
// launch in a process is not the first result at once that its later ones are.
bool kernels_loaded();

}  // namespace cdl::interpreter
