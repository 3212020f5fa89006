// Strategy 16's launches (suite/16_interpreter.cu), for its registration, cdl_run --expr, the tests
// and the first-result benchmark.
#pragma once

#include "common/bytecode.hpp"
#include "jit_kernels.hpp"

namespace cdl::interpreter {

// Launches the map with the interpreter running p. Throws cdl::error for a program that
// bytecode::valid refuses.
void launch_map(const map_launch& a, const bytecode::program& p);
// The same for an op's text in 08's language: parsed and encoded on its first launch (kept for the
// next ones by its text). Text outside the language throws expr::syntax_error; a program past the
// interpreter's limits, cdl::error.
void launch_map(const map_launch& a, const jit::op_text& op);
// For the tests: p launched whatever its bytes say, with only the kernel's own guards (whatever an
// instruction says, it reads and writes inside the program's numbers and the machine's registers).
void launch_map_unguarded(const map_launch& a, const bytecode::program& p);

}  // namespace cdl::interpreter
