// Running this program again, as a new process, for a measurement that must start with nothing
// loaded: a strategy's first use, or a stream of launches that finds no kernel already compiled.
#pragma once

#include <string>
#include <vector>

namespace cdl {

// Runs /proc/self/exe with `args` (argv[1] onwards, no shell: any text passes as it is), its
// standard error shared with this process; waits for it and returns what it printed. Throws, with
// that output, when it cannot start or does not exit with 0.
std::string run_self(const std::vector<std::string>& args);

}  // namespace cdl
