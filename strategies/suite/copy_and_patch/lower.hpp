// Strategy 17's lowering of an op: 08's language parsed into steps of the stencils' operations on
// virtual registers (each one instruction), constants folded as the GPU would compute them, a select
// of constants written as nvcc writes it, and a multiply fused into the add after it; a function's
// call a step of its own, which a call image's slot runs. What the language has that no stencil can
// do is refused (refused), saying why.
#pragma once

#include "common/expression.hpp"
#include "strategies/suite/copy_and_patch/stencils.hpp"

#include <stdexcept>
#include <vector>

namespace cdl::copy_and_patch::patch {

struct step {
  int op;              // an operation, or -1: a call of `call` on a (a quotient: a / b)
  int dest, a, b;      // virtual registers: 0 is x
  float constant = 0;  // the operations with a constant
  int c = -1;          // sel's third register
  unsigned call = stencil::no_function;
  bool operator==(const step&) const = default;
};
struct refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The calls an op's steps make (a call image's slots).
inline int calls_in(const std::vector<step>& code) {
  int n = 0;
  for (const step& s : code) n += s.call != stencil::no_function;
  return n;
}

// The op as steps on virtual registers (each node its own), appended to `out`. Returns the register
// holding the result.
int select(const cdl::expr::program& p, std::vector<step>& out);
// The steps nothing reads removed, each multiply by a constant whose one reader is an add (or the
// subtrahend of a subtract) fused into it (a * c + b), the registers numbered 1, 2, ... again.
// Returns the result's register.
int fuse(std::vector<step>& code, int result);
// The steps of an op that calls functions in the order that keeps fewest values across its calls
// (though more within the last window): before each call only what it needs and was not made yet,
// then the rest after the last; the registers numbered 1, 2, ... in the new order. Returns the
// result's register.
int by_need(std::vector<step>& code, int result);
// The steps of an op that calls functions spread over the windows its calls part: each in the
// window before the first call that needs it at the latest, and no earlier than what it reads; each
// window given those that must be in it, then others that can be, up to an even share. Returns the
// result's register.
int spread(std::vector<step>& code, int result);
// The op's values made from x alone (no call's result among what they read, however far back) made
// again in each later window that reads them, the same steps to the bit, so that none lives across a
// slot; what is no longer read goes, the registers numbered 1, 2, ... again. Returns the result's
// register.
int remake(std::vector<step>& code, int result);

}  // namespace cdl::copy_and_patch::patch
