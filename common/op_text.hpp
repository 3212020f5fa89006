// A user's op as the routes that run an op given at run time see it: a name for logs and file
// names, its source text, and the program parsed from it where it is in 08's language. The text is
// an expression (map: in x; zip: in x and y; points: the new x and y, separated by a comma; matmul:
// the fused step in acc, a and b) or a function body with `return`. Where whoever holds the text
// parsed it already (cdl_run, a user's --expr), the program comes with it, and the routes that read
// the language (08, 16, 17) take it.
#pragma once

#include "expression.hpp"

#include <memory>
#include <string>

namespace cdl::jit {

struct op_text {
  std::string name;
  std::string source;
  std::shared_ptr<const expr::program> program = nullptr;  // source parsed, or null
};
// op's program: the one it carries, else its text parsed now.
inline expr::program program_of(const op_text& op) {
  return op.program ? *op.program : expr::parse(op.source);
}
// op as the routes that take C++ see it: a program of the language as the C++ it prints (the same op,
// so that every route compiles one op), any other text as it is.
inline op_text as_cpp(const op_text& op) {
  return op.program ? op_text{op.name, expr::to_cpp(*op.program), nullptr} : op;
}

}  // namespace cdl::jit
