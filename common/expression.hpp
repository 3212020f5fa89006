// A small expression language for map ops, for the JIT that skips the C++ front end (and the
// interpreter and the patched images that need no compiler). A program is zero or more named
// temporaries and one result, all in the element type T:
//
//   s = sin(x); c = cos(x); exp(s * c)          x * x + 2 * x + 1        x > 0.5 ? 2 * x : x / 2
//
//   program  := (name '=' value ';')* value [';']
//   value    := compare ['?' value ':' value]          (right-associative)
//   compare  := sum [('<' | '<=' | '>' | '>=' | '==' | '!=') sum]    (a condition, only before '?')
//   sum      := product (('+' | '-') product)*
//   product  := unary (('*' | '/') unary)*
//   unary    := ('-' | '+') unary | primary
//   primary  := number | 'x' | name | 'T' '(' value ')' | function '(' value [',' value] ')' | '(' value ')'
//   function := sin cos exp sqrt (one argument) | min max (two)
//
// Every number has the element type, so `2` is T(2) and the catalogue's C++ text (common/ops.cuh,
// which spells the same number T(2)) is also a program of this language: one definition of each
// op serves every strategy. min and max are ops.cuh's (min(a, b) = b < a ? b : a), and the
// functions are libdevice's, as C++ code gets them from NVRTC.
//
// A program is parsed into a tree that the lowering to NVVM IR, the C++ printer and the float64
// interpreter below read; nothing of the input text but its numbers reaches a compiler. Errors name
// the offset and column of the offending character.
#pragma once

#include "check.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cdl::expr {

// A program that is not in the language; what() names the position.
class syntax_error : public error {
 public:
  syntax_error(std::size_t offset, const std::string& message);
  std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

// The language's functions, once: name and number of arguments. The expression's kinds, the parser's
// table and the bytecode's ops (common/bytecode.hpp) list them from here.
#define CDL_EXPR_FUNCTIONS(X) X(sin, 1) X(cos, 1) X(exp, 1) X(sqrt, 1) X(min, 2) X(max, 2)
#define CDL_EXPR_ENUMERATOR(name, arity) name,

enum class kind {
  number,
  x,
  temporary,  // leaves (temporary: value = the binding's index)
  negate,
  add,
  subtract,
  multiply,
  divide,
  less,
  less_equal,
  greater,
  greater_equal,
  equal,
  not_equal,  // conditions
  select,     // a ? b : c, a a condition
  CDL_EXPR_FUNCTIONS(CDL_EXPR_ENUMERATOR)
};
bool is_condition(kind k);
std::string_view function_name(kind k);  // "sin", ...; empty for anything else

struct node {
  kind op;
  double value = 0;            // number: its value; temporary: the binding's index
  int a = -1, b = -1, c = -1;  // operands, indexes into program::nodes
};

struct binding {
  std::string name;
  int value;  // node index
};

struct program {
  std::vector<node> nodes;        // operands before the nodes that use them
  std::vector<binding> bindings;  // in order; each may use the ones before it
  int result = -1;
  bool uses(kind k) const;  // does any node apply k (libdevice is linked only when needed)
};

inline constexpr std::size_t max_source_bytes = 16 * 1024;
inline constexpr int max_depth = 256;  // nesting; deeper input is refused, never overflows the stack
program parse(std::string_view source);

// A number of the program that float cannot hold, as written ("1e39: past float's largest,
// 3.4028235e38"), or "" where float holds them all: a float32 op with one would compute with an
// infinity (or a zero for a nonzero number) that no route's reference has, so it is refused before.
std::string number_float_cannot_hold(const program& p);

// The program as a C++ function body in T, one constant per node (v<index>), for the routes that compile C++.
std::string to_cpp(const program& p);
// The program evaluated in float64, for the reference.
double evaluate(const program& p, double x);

// The program's value at x and its magnitude: the value it would have if nothing cancelled, the
// scale a float evaluation's error is relative to. Each operation on its operands' magnitudes:
// |a| + |b| for a sum or a difference, |a| |b| for a product, the chosen operand's for min, max and
// a select, and a function's own value plus its operand's magnitude times a bound on its slope.
// x / 4 - x * x near x = 1/4 is a difference of two values near 1/16: its float error is a few
// epsilons of 1/16, not of the difference, which can be 0. Never less than |value|, so a
// tolerance relative to it is never tighter than one relative to the value.
struct bounded {
  double value, magnitude;
};
bounded evaluate_bounded(const program& p, double x);

}  // namespace cdl::expr
