// The tests' own reading of the expression language (common/expression.hpp's grammar), written apart
// from common/expression.cpp so that a fault in the suite's parser, its lowering or its float64
// interpreter cannot hide behind a reference computed by the same code. It evaluates the text as it
// reads it, by precedence climbing (the suite's parser is recursive descent into a tree), in
// float64, and says with each value how far a float evaluation of the same text may honestly land
// from it (its magnitude: what the value would be if nothing cancelled) and whether a float
// evaluation may take another path (a comparison, or a sqrt, too near its edge to tell).
#pragma once

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cdl::oracle {

struct value {
  double v = 0, magnitude = 0;  // the value, and the scale of a float evaluation's rounding error
  bool fragile = false;         // a float evaluation may take another branch or leave sqrt's domain
  double peak = 0;              // the largest magnitude a part of it reached (float may overflow there)
};

// An operation's result: its magnitude at least float's least normal (near zero, float rounds to its
// subnormals' spacing, whatever the value: exp(-150) is 0 there, and its square root 0 too), its
// peak the largest of its operands' and its own.
inline value rounded(value r, const value& a, const value& b = {}) {
  r.magnitude = std::max(r.magnitude, double(FLT_MIN));
  r.peak = std::max({a.peak, b.peak, r.magnitude});
  return r;
}

// How near a comparison's two sides may be, relative to their magnitudes, before a float evaluation
// and this one can disagree on it (set against float64 code, a few of its roundings).
inline constexpr double float_edge = 1e-4, double_edge = 1e-12;

class evaluator {
 public:
  evaluator(std::string_view text, double x, double edge) : s_(text), x_(x), edge_(edge) {}

  value run() {
    space();
    while (binding_ahead()) {
      const std::string name = word();
      expect('=');
      names_[name] = choice();
      expect(';');
    }
    const value v = choice();
    if (peek() == ';') ++at_, space();
    if (at_ != s_.size()) fail("text after the result");
    return v;
  }

 private:
  // choice := relation ['?' choice ':' choice]; the relation a comparison only before '?'
  value choice() {
    bool compared = false, truth = false;
    const value cond = relation(compared, truth);
    if (peek() != '?') {
      if (compared) fail("a comparison outside a select");
      return cond;
    }
    if (!compared) fail("a select of a number");
    return select(cond, truth);
  }

  // '?' yes ':' no, after a comparison: the one it picks, fragile where the comparison was
  value select(const value& cond, bool truth) {
    expect('?');
    const value yes = choice();
    expect(':');
    const value no = choice();
    value out = truth ? yes : no;
    out.fragile = out.fragile || cond.fragile;
    return out;
  }

  // A comparison of two sums, or one sum; a comparison's `fragile` holds whether its two sides are
  // too near to tell.
  value relation(bool& compared, bool& truth) {
    const value a = binary(0);
    static const char* ops[] = {"<=", ">=", "==", "!=", "<", ">"};
    for (const char* op : ops) {
      const std::string o(op);
      if (s_.compare(at_, o.size(), o) != 0) continue;
      at_ += o.size(), space();
      const value b = binary(0);
      compared = true;
      truth = o == "<"    ? a.v < b.v
              : o == "<=" ? a.v <= b.v
              : o == ">"  ? a.v > b.v
              : o == ">=" ? a.v >= b.v
              : o == "==" ? a.v == b.v
                          : !(a.v == b.v);
      // (sides past float's largest, for a float evaluation: infinities there, which may compare
      // either way)
      const bool near = std::fabs(a.v - b.v) <= edge_ * (a.magnitude + b.magnitude),
                 past = edge_ >= float_edge && std::max(a.peak, b.peak) > FLT_MAX;
      return {0, 0, a.fragile || b.fragile || near || past};
    }
    return a;
  }

  // Precedence climbing over + - (level 0) and * / (level 1), each left-associative.
  value binary(int level) {
    value a = level == 0 ? binary(1) : unary();
    for (;;) {
      const char c = peek();
      if (level == 0 ? (c != '+' && c != '-') : (c != '*' && c != '/')) return a;
      ++at_, space();
      const value b = level == 0 ? binary(1) : unary();
      value r;
      r.fragile = a.fragile || b.fragile;
      if (c == '+' || c == '-') {
        r.v = c == '+' ? a.v + b.v : a.v - b.v;
        r.magnitude = a.magnitude + b.magnitude;
      } else if (c == '*') {
        r.v = a.v * b.v;
        r.magnitude = a.magnitude * b.magnitude;
      } else {
        r.v = a.v / b.v;
        r.magnitude = (a.magnitude + std::fabs(r.v) * b.magnitude) / std::fabs(b.v);
        r.fragile = r.fragile || std::fabs(b.v) <= edge_ * b.magnitude;
      }
      a = rounded(r, a, b);
    }
  }

  value unary() {
    if (peek() == '-' || peek() == '+') {
      const bool minus = peek() == '-';
      ++at_, space();
      value v = unary();
      if (minus) v.v = -v.v;
      return v;
    }
    return primary();
  }

  value primary() {
    const char c = peek();
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      const double v = std::strtod(s_.data() + at_, &end);
      at_ = std::size_t(end - s_.data());
      space();
      return {v, std::fabs(v), false, std::fabs(v)};
    }
    if (c == '(') {  // a value in parentheses, or a comparison in parentheses before '?'
      ++at_, space();
      bool compared = false, truth = false;
      const value v = relation(compared, truth);
      if (compared && peek() == '?') {
        const value out = select(v, truth);
        expect(')');
        return out;
      }
      if (peek() == '?') fail("a select of a number");
      expect(')');
      if (!compared) return v;
      if (peek() != '?') fail("a comparison outside a select");
      return select(v, truth);
    }
    const std::string name = word();
    if (name == "x") return {x_, std::fabs(x_), false, std::fabs(x_)};
    if (names_.count(name)) return names_.at(name);
    expect('(');
    const value a = choice();
    value b;
    if (name == "min" || name == "max") {
      expect(',');
      b = choice();
    }
    expect(')');
    if (name == "T") return a;
    value r{0, 0, a.fragile || b.fragile};
    if (name == "min" || name == "max") {  // ops.cuh's: min(a, b) = b < a ? b : a
      const bool second = name == "min" ? b.v < a.v : a.v < b.v;
      r.v = second ? b.v : a.v;
      r.magnitude = std::max(a.magnitude, b.magnitude);
      r.fragile = r.fragile || std::fabs(a.v - b.v) <= edge_ * (a.magnitude + b.magnitude);
    } else if (name == "sin" || name == "cos") {  // slope at most 1
      r.v = name == "sin" ? std::sin(a.v) : std::cos(a.v);
      r.magnitude = std::fabs(r.v) + a.magnitude;
    } else if (name == "exp") {  // slope exp(a)
      r.v = std::exp(a.v);
      r.magnitude = r.v * (1 + a.magnitude);
    } else if (name == "sqrt") {  // slope 1 / (2 sqrt(a)): fragile near 0
      r.v = std::sqrt(a.v);
      r.magnitude = r.v + a.magnitude / (2 * std::max(r.v, 1e-30));
      r.fragile = r.fragile || a.v <= edge_ * a.magnitude;
    } else {
      fail("no function " + name);
    }
    return rounded(r, a, b);
  }

  bool binding_ahead() const {
    std::size_t i = at_;
    if (i >= s_.size() || !(std::isalpha(static_cast<unsigned char>(s_[i])) || s_[i] == '_')) return false;
    while (i < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i])) || s_[i] == '_')) ++i;
    while (i < s_.size() && std::isspace(static_cast<unsigned char>(s_[i]))) ++i;
    return i + 1 < s_.size() && s_[i] == '=' && s_[i + 1] != '=';
  }
  std::string word() {
    const std::size_t from = at_;
    while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_')) ++at_;
    if (at_ == from) fail("a name or a number");
    std::string w(s_.substr(from, at_ - from));
    space();
    return w;
  }
  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  void space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("'") + c + "'");
    ++at_, space();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("oracle: expected " + what + " at offset " + std::to_string(at_) + " of `" +
                                std::string(s_) + "`");
  }

  std::string_view s_;
  double x_, edge_;
  std::size_t at_ = 0;
  std::map<std::string, value> names_;
};

// The op's value at x; `edge` how near a comparison's sides count as too near to tell.
inline value at(std::string_view text, double x, double edge = float_edge) {
  evaluator e(text, x, edge);
  return e.run();
}

// The map's value of an element: the op summed over k steps of x (x + j * delta, j < k), as the
// skeleton and the lessons compute it; its magnitude the sum of the steps'.
inline value mapped(std::string_view text, double x, int k, double delta, double edge = float_edge) {
  value sum;
  for (int j = 0; j < k; ++j) {
    const value v = at(text, x + j * delta, edge);
    sum.v += v.v, sum.magnitude += v.magnitude, sum.fragile = sum.fragile || v.fragile;
    sum.peak = std::max({sum.peak, v.peak, sum.magnitude});
  }
  return sum;
}

// Whether `got`, computed in a type of `epsilon` (float's 2^-23 or double's 2^-52), is the oracle's
// value to within `ulps` of that type's rounding at its magnitude: NaN where the oracle has NaN, and
// infinite (of its sign) where the value is past the type's largest. Where only a part of the op
// is past it (its magnitude or a part's, not its value: exp(250 x) * 0, sqrt(exp(250 x))), the
// type's result is no value the oracle can judge, and any is taken.
inline bool agrees(double got, const value& want, double epsilon, double ulps = 64) {
  if (std::isnan(want.v)) return std::isnan(got);
  if (std::isinf(want.v)) return got == want.v;
  const double largest = epsilon >= 0x1p-24 ? double(FLT_MAX) : DBL_MAX, band = 1 + ulps * epsilon;
  if (std::fabs(want.v) > largest * band) return std::isinf(got) && (got > 0) == (want.v > 0);
  if (std::max(want.magnitude, want.peak) > largest / band) return true;
  return std::fabs(got - want.v) <= ulps * epsilon * (want.magnitude + 1e-30);
}

}  // namespace cdl::oracle
