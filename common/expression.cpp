// expression.hpp's parser (recursive descent, one function per rule of the grammar there), its
// float64 interpreter and its C++ printer. Read the header first.
#include "expression.hpp"
#include "polynomial.hpp"

#include <array>
#include <cctype>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

namespace cdl::expr {

syntax_error::syntax_error(std::size_t offset, const std::string& message)
    : error(message + " (at offset " + std::to_string(offset) + ", column " + std::to_string(offset + 1) +
            ")"),
      offset_(offset) {}

bool is_condition(kind k) { return k >= kind::less && k <= kind::not_equal; }

namespace {

struct function_info {
  std::string_view name;
  kind op;
  int arity;
};
#define CDL_FUNCTION_INFO(name, arity) function_info{#name, kind::name, arity},
constexpr function_info functions[] = {CDL_EXPR_FUNCTIONS(CDL_FUNCTION_INFO)};

const function_info* find_function(std::string_view name) {
  for (const function_info& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Recursive descent over the grammar in expression.hpp, one function per rule.
class parser {
 public:
  explicit parser(std::string_view text) : text_(text) {}

  program run() {
    if (text_.size() > max_source_bytes)
      throw syntax_error(max_source_bytes, "the program is " + std::to_string(text_.size()) +
                                               " bytes; the limit is " + std::to_string(max_source_bytes));
    skip_space();
    if (at_end()) throw syntax_error(0, "the program is empty: write an expression in x, e.g. x * x + 1");
    // name '=' opens a temporary: look past the name for an '=' that is not '=='.
    while (starts_binding()) {
      const std::size_t at = pos_;
      std::string name = read_name();
      if (name == "x" || name == "T" || find_function(name))
        throw syntax_error(at, "'" + name + "' is reserved and cannot name a temporary");
      if (names_.count(name)) throw syntax_error(at, "'" + name + "' is already defined");
      expect('=');
      const int v = value_of(value(), at);
      expect(';');
      names_[name] = int(p_.bindings.size());
      p_.bindings.push_back({std::move(name), v});
    }
    const std::size_t at = pos_;
    if (at_end())
      throw syntax_error(at, "the program ends after its temporaries: the last part must be the result");
    p_.result = value_of(value(), at);
    if (peek() == ';') {
      ++pos_;
      skip_space();
    }
    if (!at_end()) throw syntax_error(pos_, std::string("unexpected '") + peek() + "' after the result");
    return std::move(p_);
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  [[noreturn]] void unexpected(const std::string& wanted) const {
    if (at_end()) throw syntax_error(pos_, "the program ends where " + wanted + " was expected");
    const char c = text_[pos_];
    const std::string seen = std::isprint(static_cast<unsigned char>(c))
                                 ? std::string("'") + c + "'"
                                 : "byte " + std::to_string(int(static_cast<unsigned char>(c)));
    throw syntax_error(pos_, "expected " + wanted + ", found " + seen);
  }

  void expect(char c) {
    if (peek() != c) unexpected(std::string("'") + c + "'");
    ++pos_;
    skip_space();
  }

  bool starts_binding() const {
    std::size_t i = pos_;
    if (i >= text_.size() || !is_name_start(text_[i])) return false;
    while (i < text_.size() && is_name_char(text_[i])) ++i;
    while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
    return i < text_.size() && text_[i] == '=' && (i + 1 >= text_.size() || text_[i + 1] != '=');
  }

  std::string read_name() {
    const std::size_t start = pos_;
    while (!at_end() && is_name_char(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    skip_space();
    return name;
  }

  int add(node n) {
    if (p_.nodes.size() >= max_source_bytes) throw syntax_error(pos_, "the program has too many operations");
    p_.nodes.push_back(n);
    return int(p_.nodes.size()) - 1;
  }

  // A node that must be a number, not a condition.
  int value_of(int n, std::size_t at) const {
    if (is_condition(p_.nodes[std::size_t(n)].op))
      throw syntax_error(at, "a comparison is a condition, not a number: use it before '?' (c ? a : b)");
    return n;
  }

  // Guards each level of nesting; deep input is an error, not a stack overflow.
  struct depth_guard {
    parser& p;
    explicit depth_guard(parser& p_) : p(p_) {
      if (++p.depth_ > max_depth)
        throw syntax_error(p.pos_, "the program nests deeper than " + std::to_string(max_depth));
    }
    ~depth_guard() { --p.depth_; }
  };

  int value() {
    const depth_guard guard(*this);
    const std::size_t at = pos_;
    const int c = compare();
    if (peek() != '?') return c;
    if (!is_condition(p_.nodes[std::size_t(c)].op))
      throw syntax_error(at, "the part before '?' must be a comparison (<, <=, >, >=, ==, !=)");
    expect('?');
    const std::size_t at_a = pos_;
    const int a = value_of(value(), at_a);
    expect(':');
    const std::size_t at_b = pos_;
    const int b = value_of(value(), at_b);
    return add({kind::select, 0, c, a, b});
  }

  int compare() {
    const std::size_t at = pos_;
    const int left = sum();
    static constexpr std::pair<std::string_view, kind> comparisons[] = {
        {"<=", kind::less_equal}, {">=", kind::greater_equal}, {"==", kind::equal},
        {"!=", kind::not_equal},  {"<", kind::less},           {">", kind::greater}};
    for (const auto& [spelling, k] : comparisons) {
      if (text_.substr(pos_, spelling.size()) != spelling) continue;
      value_of(left, at);
      pos_ += spelling.size();
      skip_space();
      const std::size_t at_right = pos_;
      const int right = value_of(sum(), at_right);
      if (peek() == '<' || peek() == '>' || (peek() == '=' && peek(1) == '=') ||
          (peek() == '!' && peek(1) == '='))
        throw syntax_error(pos_, "comparisons do not chain: write (a < b) ? ... with one comparison");
      return add({k, 0, left, right});
    }
    return left;
  }

  // A left-associative level: operands parsed by `operand`, joined by the two operators given.
  int left_to_right(int (parser::*operand)(), char first, kind first_kind, char second, kind second_kind) {
    std::size_t at = pos_;
    int left = (this->*operand)();
    while (peek() == first || peek() == second) {
      value_of(left, at);
      const kind k = peek() == first ? first_kind : second_kind;
      ++pos_;
      skip_space();
      at = pos_;
      left = add({k, 0, left, value_of((this->*operand)(), at)});
    }
    return left;
  }
  int sum() { return left_to_right(&parser::product, '+', kind::add, '-', kind::subtract); }
  int product() { return left_to_right(&parser::unary, '*', kind::multiply, '/', kind::divide); }

  int unary() {
    const depth_guard guard(*this);
    if (peek() == '-' || peek() == '+') {
      const bool negate = peek() == '-';
      ++pos_;
      skip_space();
      const std::size_t at = pos_;
      const int operand = value_of(unary(), at);
      return negate ? add({kind::negate, 0, operand}) : operand;
    }
    return primary();
  }

  int number() {
    const std::size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    if (peek() == '.') {
      ++pos_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (std::isdigit(static_cast<unsigned char>(peek(1))) ||
         ((peek(1) == '+' || peek(1) == '-') && std::isdigit(static_cast<unsigned char>(peek(2)))))) {
      pos_ += 2;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    }
    const std::string digits(text_.substr(start, pos_ - start));
    if (digits == ".") throw syntax_error(start, "a '.' with no digits is not a number");
    if (is_name_char(peek()))
      throw syntax_error(pos_, "a number cannot be followed by '" + std::string(1, peek()) +
                                   "': every number has the element type, so it takes no suffix");
    const double v = std::strtod(digits.c_str(), nullptr);
    if (!std::isfinite(v)) throw syntax_error(start, "the number " + digits + " is too large for float64");
    skip_space();
    return add({kind::number, v});
  }

  int primary() {
    const std::size_t at = pos_;
    const char c = peek();
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (c == '(') {
      expect('(');
      const int v = value();
      expect(')');
      return v;  // a parenthesised comparison stays a condition: (x < 1) ? a : b
    }
    if (!is_name_start(c)) unexpected("a number, x, a name, a function or '('");
    const std::string name = read_name();
    if (name == "x") return add({kind::x});
    if (name == "T") {  // the element type's conversion, as ops.cuh writes a number: T(2)
      expect('(');
      const std::size_t at_v = pos_;
      const int v = value_of(value(), at_v);
      expect(')');
      return v;
    }
    if (const function_info* f = find_function(name)) {
      if (peek() != '(')
        throw syntax_error(pos_, "'" + name + "' is a function: call it as " + name + "(...)");
      expect('(');
      node n{f->op};
      std::size_t at_arg = pos_;
      n.a = value_of(value(), at_arg);
      if (f->arity == 2) {
        expect(',');
        at_arg = pos_;
        n.b = value_of(value(), at_arg);
      }
      if (peek() == ',')
        throw syntax_error(pos_, "'" + name + "' takes " + std::to_string(f->arity) + " argument" +
                                     (f->arity == 1 ? "" : "s"));
      expect(')');
      return add(n);
    }
    const auto found = names_.find(name);
    if (found == names_.end())
      throw syntax_error(at, "unknown name '" + name +
                                 "': the names are x, T, sin, cos, exp, sqrt, min, max and the "
                                 "temporaries defined before this point");
    return add({kind::temporary, double(found->second)});
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  program p_;
  std::map<std::string, int> names_;  // temporary -> binding index
};

// Shortest decimal that reads back as the same double: the C++ printer's numbers.
std::string exact(double v) {
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  (void)ec;
  std::string s(buf.data(), end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string_view function_name(kind k) {
  for (const function_info& f : functions)
    if (f.op == k) return f.name;
  return {};
}

bool program::uses(kind k) const {
  for (const node& n : nodes)
    if (n.op == k) return true;
  return false;
}

program parse(std::string_view source) { return parser(source).run(); }

std::string number_float_cannot_hold(const program& p) {
  for (const node& n : p.nodes) {
    if (n.op != kind::number || std::isnan(n.value) || std::isinf(n.value)) continue;
    const float f = float(n.value);
    char text[96];
    if (std::isinf(f))
      std::snprintf(text, sizeof text, "%.9g: past float's largest, %.9g", n.value, double(FLT_MAX));
    else if (f == 0 && n.value != 0)
      std::snprintf(text, sizeof text, "%.9g: below float's least, %.9g, it rounds to 0", n.value,
                    double(std::numeric_limits<float>::denorm_min()));
    else
      continue;
    return text;
  }
  return "";
}

std::string to_cpp(const program& p) {
  // One constant per node, in order, as the lowering makes one SSA value per node: linear in the
  // program's size however deep it nests (a printer that recursed would not be).
  static constexpr std::string_view infix[] = {"+", "-", "*", "/", "<", "<=", ">", ">=", "==", "!="};
  auto name = [&](int i) {
    const node& n = p.nodes[std::size_t(i)];
    std::string v = "v";  // appended to, not "v" + ...: GCC 12 warns (-Wrestrict) on that falsely
    return v.append(std::to_string(n.op == kind::temporary ? p.bindings[std::size_t(n.value)].value : i));
  };
  std::string body;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const node& n = p.nodes[i];
    std::string e;
    switch (n.op) {
      case kind::temporary: continue;  // its binding's constant is used instead
      case kind::number: e = "T(" + exact(n.value) + ")"; break;
      case kind::x: e = "x"; break;
      case kind::negate: e = std::string(1, '-').append(name(n.a)); break;  // not "-" + ...: see name()
      case kind::select: e = name(n.a) + " ? " + name(n.b) + " : " + name(n.c); break;
      default:
        if (n.op >= kind::add && n.op <= kind::not_equal)
          e = name(n.a) + " " + std::string(infix[int(n.op) - int(kind::add)]) + " " + name(n.b);
        else
          e = std::string(function_name(n.op)) + "(" + name(n.a) + (n.b >= 0 ? ", " + name(n.b) : "") + ")";
    }
    body += (is_condition(n.op) ? "const bool " : "const T ") + name(int(i)) + " = " + e + ";\n";
  }
  return body + "return " + name(p.result) + ";";
}

double evaluate(const program& p, double x) { return evaluate_bounded(p, x).value; }

bounded evaluate_bounded(const program& p, double x) {
  // Operands come before their users, so one pass in order evaluates every node.
  thread_local std::vector<bounded> v;
  v.resize(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const node& n = p.nodes[i];
    const bounded a = n.a >= 0 ? v[std::size_t(n.a)] : bounded{},
                  b = n.b >= 0 ? v[std::size_t(n.b)] : bounded{};
    const double ma = a.magnitude, mb = b.magnitude;
    auto function = [&](double value, double slope) { return bounded{value, std::fabs(value) + slope * ma}; };
    auto truth = [](bool t) { return bounded{double(t), double(t)}; };  // exact: its own magnitude
    switch (n.op) {
      case kind::number: v[i] = {n.value, std::fabs(n.value)}; break;
      case kind::x: v[i] = {x, std::fabs(x)}; break;
      case kind::temporary: v[i] = v[std::size_t(p.bindings[std::size_t(n.value)].value)]; break;
      case kind::negate: v[i] = {-a.value, ma}; break;
      case kind::add: v[i] = {a.value + b.value, ma + mb}; break;
      case kind::subtract: v[i] = {a.value - b.value, ma + mb}; break;
      case kind::multiply: v[i] = {a.value * b.value, ma * mb}; break;
      case kind::divide: {  // (a + da) / (b + db) - a / b is about (da + |a / b| db) / |b|
        const double q = a.value / b.value;
        v[i] = {q, (ma + std::fabs(q) * mb) / std::fabs(b.value)};
        break;
      }
      case kind::less: v[i] = truth(a.value < b.value); break;
      case kind::less_equal: v[i] = truth(a.value <= b.value); break;
      case kind::greater: v[i] = truth(a.value > b.value); break;
      case kind::greater_equal: v[i] = truth(a.value >= b.value); break;
      case kind::equal: v[i] = truth(a.value == b.value); break;
      case kind::not_equal: v[i] = truth(a.value != b.value); break;
      case kind::select: v[i] = a.value != 0 ? b : v[std::size_t(n.c)]; break;
      case kind::sin: v[i] = function(std::sin(a.value), 1); break;
      case kind::cos: v[i] = function(std::cos(a.value), 1); break;
      case kind::exp: v[i] = function(std::exp(a.value), std::exp(a.value)); break;
      case kind::sqrt: {
        const double s = std::sqrt(a.value);
        v[i] = function(s, s > 0 ? 0.5 / s : 0);
        break;
      }
      case kind::min: v[i] = b.value < a.value ? b : a; break;
      case kind::max: v[i] = a.value < b.value ? b : a; break;
    }
  }
  return v[std::size_t(p.result)];
}

}  // namespace cdl::expr

namespace cdl {

std::string polynomial_text(int steps) {
  const auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    return std::string(text);
  };
  if (steps == 1) return "x * 0.5";  // polynomial_value's cases, as text
  std::string text = number(polynomial_coefficient(steps / 2));
  for (int i = steps / 2 - 1; i >= 0; --i) text = "(" + text + ") * x + " + number(polynomial_coefficient(i));
  return text;
}

}  // namespace cdl
