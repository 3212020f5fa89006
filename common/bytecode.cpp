// The encoder of common/bytecode.hpp. Read the header first.
#include "bytecode.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace cdl::bytecode {
namespace {

using expr::kind;

op op_of(kind k) {
  switch (k) {
    case kind::add: return op::add;
    case kind::subtract: return op::subtract;
    case kind::multiply: return op::multiply;
    case kind::divide: return op::divide;
    case kind::negate: return op::negate;
    case kind::less: return op::less;
    case kind::less_equal: return op::less_equal;
    case kind::greater: return op::greater;
    case kind::greater_equal: return op::greater_equal;
    case kind::equal: return op::equal;
    case kind::not_equal: return op::not_equal;
    case kind::select: return op::select;
    case kind::sin: return op::sin;
    case kind::cos: return op::cos;
    case kind::exp: return op::exp;
    case kind::sqrt: return op::sqrt;
    case kind::min: return op::min;
    default: return op::max;
  }
}

// An instruction before registers are given: an op on values named by node index (or a leaf's operand).
struct pending {
  op code;
  int node;  // the value it makes
  int a = -1, b = -1, c = -1;
};

class encoder {
 public:
  explicit encoder(const expr::program& p) : p_(p), uses_(p.nodes.size(), 0), done_(p.nodes.size(), false) {}

  program run() {
    const int result = resolve(p_.result);
    count_uses(result);
    emit(result);
    std::vector<int> last(p_.nodes.size(), -1);  // the step that reads a value last
    for (int s = 0; s < int(steps_.size()); ++s)
      for (int v : {steps_[std::size_t(s)].a, steps_[std::size_t(s)].b, steps_[std::size_t(s)].c})
        if (v >= 0) last[std::size_t(v)] = s;
    std::map<int, std::uint8_t> reg;  // a computed value's register
    std::vector<bool> busy(max_registers, false);
    busy[0] = true;  // x, for the whole program
    for (int s = 0; s < int(steps_.size()); ++s) {
      const pending& st = steps_[std::size_t(s)];
      instruction in{st.code, 0, operand(st.a, reg), operand(st.b, reg), operand(st.c, reg)};
      canonical(in);
      for (int v : {st.a, st.b, st.c})  // read before the write: a freed register may take the result
        if (v >= 0 && last[std::size_t(v)] == s && reg.count(v)) busy[reg[v]] = false;
      const auto free = std::find(busy.begin(), busy.end(), false);
      if (free == busy.end())
        throw error("the program holds more than " + std::to_string(max_registers - 1) +
                    " values at once, more than the interpreter's registers");
      *free = true;
      in.dst = std::uint8_t(free - busy.begin());
      reg[st.node] = in.dst;
      out_.registers = std::max(out_.registers, int(in.dst) + 1);
      out_.code.push_back(in);
    }
    if (out_.code.size() > std::size_t(max_instructions))
      throw error("the program is " + std::to_string(out_.code.size()) + " instructions, more than the " +
                  std::to_string(max_instructions) + " the interpreter holds");
    out_.result = operand(result, reg);
    return out_;
  }

 private:
  // A temporary is the value it names.
  int resolve(int n) const {
    while (p_.nodes[std::size_t(n)].op == kind::temporary)
      n = p_.bindings[std::size_t(p_.nodes[std::size_t(n)].value)].value;
    return n;
  }
  bool leaf(int n) const {
    const kind k = p_.nodes[std::size_t(n)].op;
    return k == kind::number || k == kind::x;
  }
  std::vector<int> operands(int n) const {
    const expr::node& e = p_.nodes[std::size_t(n)];
    std::vector<int> out;
    for (int o : {e.a, e.b, e.c})
      if (o >= 0) out.push_back(resolve(o));
    return out;
  }
  void count_uses(int n) {
    if (uses_[std::size_t(n)]++ > 0 || leaf(n)) return;  // a value's operands are counted once
    for (int o : operands(n)) count_uses(o);
  }
  // Steps in an order where every operand comes first; a product read only by an addition is
  // folded into it as a fused multiply-add.
  void emit(int n) {
    if (leaf(n) || done_[std::size_t(n)]) return;
    done_[std::size_t(n)] = true;
    const expr::node& e = p_.nodes[std::size_t(n)];
    std::vector<int> o = operands(n);
    if (e.op == kind::add) {
      for (int side = 0; side < 2; ++side) {
        const int m = o[std::size_t(side)];
        if (p_.nodes[std::size_t(m)].op == kind::multiply && uses_[std::size_t(m)] == 1 &&
            !done_[std::size_t(m)]) {
          const std::vector<int> f = operands(m);
          done_[std::size_t(m)] = true;
          for (int v : {f[0], f[1], o[std::size_t(1 - side)]}) emit(v);
          steps_.push_back({op::fma, n, f[0], f[1], o[std::size_t(1 - side)]});
          return;
        }
      }
    }
    for (int v : o) emit(v);
    pending st{op_of(e.op), n};
    if (o.size() > 0) st.a = o[0];
    if (o.size() > 1) st.b = o[1];
    if (o.size() > 2) st.c = o[2];
    steps_.push_back(st);
  }
  // Two rewrites that change no result and spare the interpreter work: a number goes to operand b
  // of an addition, a product or an fma's product, where the kernel reads it once for all of its
  // values (both are commutative in IEEE arithmetic); and a division by a power of two becomes the
  // product with its inverse, which is exact (as nvcc compiles x / 2.0f), where a division is a
  // dozen instructions and a branch.
  void canonical(instruction& in) {
    const bool commutes = in.code == op::add || in.code == op::multiply || in.code == op::fma;
    if (commutes && (in.a & constant_bit) && !(in.b & constant_bit)) std::swap(in.a, in.b);
    if (in.code != op::divide || !(in.b & constant_bit)) return;
    const double d = out_.constants[in.b & ~constant_bit];
    int exponent = 0;
    // A power of two whose inverse a float holds too (no subnormal, no infinity).
    if (std::frexp(d, &exponent) != 0.5 || exponent < -124 || exponent > 126) return;
    in.code = op::multiply;
    in.b = constant(1.0 / d);
  }
  std::uint8_t constant(double value) {
    auto& c = out_.constants;
    auto at = std::find(c.begin(), c.end(), value);
    if (at == c.end()) {
      if (c.size() == std::size_t(max_constants))
        throw error("the program has more than " + std::to_string(max_constants) +
                    " different numbers, more than the interpreter holds");
      at = c.insert(c.end(), value);
    }
    return std::uint8_t(constant_bit | (at - c.begin()));
  }
  std::uint8_t operand(int n, const std::map<int, std::uint8_t>& reg) {
    if (n < 0) return 0;
    const expr::node& e = p_.nodes[std::size_t(n)];
    if (e.op == kind::x) return 0;
    if (e.op != kind::number) return reg.at(n);
    return constant(e.value);
  }

  const expr::program& p_;
  std::vector<int> uses_;
  std::vector<bool> done_;  // emitted, or folded into the fma that reads it
  std::vector<pending> steps_;
  program out_;
};

#define CDL_FUNCTION_NAME(name, arity) #name,
const char* const names[] = {"add",      "subtract",
                             "multiply", "divide",
                             "fma",      "negate",
                             "less",     "less_equal",
                             "greater",  "greater_equal",
                             "equal",    "not_equal",
                             "select",   CDL_EXPR_FUNCTIONS(CDL_FUNCTION_NAME)};
static_assert(sizeof names / sizeof *names == std::size_t(op::count_));

}  // namespace

program encode(const expr::program& p) { return encoder(p).run(); }

bool valid(const program& p) {
  if (p.registers < 1 || p.registers > max_registers || p.constants.size() > std::size_t(max_constants) ||
      p.code.size() > std::size_t(max_instructions))
    return false;
  const auto inside = [&](std::uint8_t o) {
    return o & constant_bit ? std::size_t(o & ~constant_bit) < p.constants.size() : o < p.registers;
  };
  for (const instruction& in : p.code)
    if (std::uint8_t(in.code) >= std::uint8_t(op::count_) || in.dst == 0 || in.dst >= p.registers ||
        !inside(in.a) || !inside(in.b) || !inside(in.c))
      return false;
  return inside(p.result);
}

namespace {
// The operands an instruction reads.
std::vector<std::uint8_t> reads(const instruction& in) {
  if (in.code == op::fma || in.code == op::select) return {in.a, in.b, in.c};
  const bool unary = in.code == op::negate || in.code == op::sin || in.code == op::cos ||
                     in.code == op::exp || in.code == op::sqrt;
  return unary ? std::vector<std::uint8_t>{in.a} : std::vector<std::uint8_t>{in.a, in.b};
}
bool is_register(std::uint8_t o) { return !(o & constant_bit); }
}  // namespace

steps lower(const program& p) {
  if (!valid(p)) throw error("lower: not a valid program:\n" + to_string(p));
  if (p.registers > max_slots + 1)
    throw error("the program holds " + std::to_string(p.registers - 1) + " values at once, more than the " +
                std::to_string(max_slots) + " slots beside the interpreter kernel's accumulator");
  steps out{{}, p.constants};
  const std::size_t n = p.code.size();
  // A comparison of x with a number whose only reader is a select's condition is folded into the
  // select (form::select_x_if / select_x_else): x and the number are still there when it runs.
  std::vector<bool> folded(n, false);            // a comparison that went into a select
  std::vector<const instruction*> condition(n);  // a select's folded comparison, else none
  const auto is_comparison = [](op c) { return c >= op::less && c <= op::not_equal; };
  for (std::size_t i = 0; i < n; ++i) {
    const instruction& in = p.code[i];
    if (!is_comparison(in.code) || in.a != 0 || is_register(in.b)) continue;
    std::size_t reader = n, readers = 0, k = i + 1;
    for (; k < n; ++k) {
      for (std::uint8_t o : reads(p.code[k]))
        if (o == in.dst) ++readers, reader = k;
      if (p.code[k].dst == in.dst) break;
    }
    if (k == n && p.result == in.dst) ++readers;  // the comparison is the result
    if (readers == 1 && p.code[reader].code == op::select && p.code[reader].a == in.dst) {
      folded[i] = true;
      condition[reader] = &in;
    }
  }
  // What an instruction reads once folding is done; a folded comparison, nothing.
  const auto read_by = [&](std::size_t i) {
    const instruction& in = p.code[i];
    if (folded[i]) return std::vector<std::uint8_t>{};
    return condition[i] ? std::vector<std::uint8_t>{in.b, in.c} : reads(in);
  };
  // live_after[i][r]: register r's value after instruction i is read later, or is the result.
  std::vector<std::array<bool, max_registers>> live_after(n);
  std::array<bool, max_registers> live{};
  if (is_register(p.result)) live[p.result] = true;
  for (std::size_t i = n; i-- > 0;) {
    live_after[i] = live;
    live[p.code[i].dst] = false;
    for (std::uint8_t o : read_by(i))
      if (is_register(o)) live[o] = true;
  }
  // Every live value is in the accumulator, or in its register's slot (x is always source 0).
  int acc = -1;  // the register whose value the accumulator holds, or 256 + a number's operand; -1, none
  const auto id = [](std::uint8_t o) { return is_register(o) ? int(o) : 256 + o; };
  const auto holds = [&](std::uint8_t o) { return acc == id(o); };
  std::array<bool, max_registers> saved{};
  saved[0] = true;
  const auto emit = [&](form f, op code = op::add, std::uint8_t b = 0, std::uint8_t c = 0) {
    out.code.push_back({f, code, b, c});
  };
  // x and numbers are read where they are; a register's value from the accumulator, else its slot.
  const auto source = [&](std::uint8_t o) -> std::uint8_t {
    return is_register(o) && o != 0 && holds(o) ? acc_source : o;
  };
  // Before the accumulator is overwritten: its value into its register's slot, if it is read later.
  const auto keep = [&](bool read_later) {
    if (acc > 0 && acc < 256 && !saved[std::size_t(acc)] && read_later) {
      emit(form::save, op::add, std::uint8_t(acc));
      out.slots = std::max(out.slots, acc);
      saved[std::size_t(acc)] = true;
    }
  };
  const auto register_held = [&] { return acc > 0 && acc < 256; };
  for (std::size_t i = 0; i < n; ++i) {
    if (folded[i]) continue;
    const instruction& in = p.code[i];
    form f = form::load;
    op code = in.code;
    std::uint8_t sb = 0, sc = 0;
    const auto plan = [&] {  // the form and its sources, given what the accumulator holds
      if (condition[i]) {
        code = condition[i]->code, sc = condition[i]->b;
        if (holds(in.c))
          f = form::select_x_if, sb = source(in.b);
        else if (holds(in.b))
          f = form::select_x_else, sb = source(in.c);
        else
          return false;
      } else if (in.code == op::fma) {
        if (holds(in.c))
          f = form::fma_last, sb = source(in.a), sc = source(in.b);
        else if (holds(in.a))
          f = form::fma_first, sb = source(in.b), sc = source(in.c);
        else if (holds(in.b))
          f = form::fma_first, sb = source(in.a), sc = source(in.c);
        else
          return false;
      } else if (in.code == op::select) {
        if (holds(in.a))
          f = form::select_if, sb = source(in.b), sc = source(in.c);
        else if (holds(in.c))
          f = form::select_else, sb = source(in.a), sc = source(in.b);
        else
          return false;
      } else if (reads(in).size() == 1) {
        if (holds(in.a))
          f = form::unary;
        else if (in.a == 0)
          f = form::unary_x;
        else
          return false;
      } else {
        if (holds(in.a))
          f = form::binary, sb = source(in.b);
        else if (in.a == 0)
          f = form::binary_x, sb = source(in.b);
        else if (holds(in.b))
          f = form::reversed, sb = source(in.a);
        else
          return false;
      }
      return true;
    };
    if (!plan()) {  // the accumulator first takes the operand the form reads there
      bool read = register_held() && live_after[i][std::size_t(acc)];
      for (std::uint8_t r : read_by(i)) read = read || holds(r);
      keep(read);
      const std::uint8_t o = condition[i] || in.code == op::fma ? in.c : in.a;
      emit(form::load, op::add, source(o));
      acc = id(o);
      plan();
    }
    keep(register_held() && acc != int(in.dst) && live_after[i][std::size_t(acc)]);
    if (f == form::fma_first && sb == 0 && (sc & constant_bit)) f = form::horner;
    emit(f, code, sb, sc);
    if (condition[i]) out.slots = std::max(out.slots, 1);
    acc = in.dst;
    saved[in.dst] = false;
  }
  if (!holds(p.result)) emit(form::load, op::add, source(p.result));
  if (out.code.size() > std::size_t(max_steps))
    throw error("the program is " + std::to_string(out.code.size()) +
                " steps for the interpreter kernel, more than " + std::to_string(max_steps));
  return out;
}

// GCC 12 at -O3 warns (-Wrestrict, GCC bug 105329) of an overlap inside "text" + std::string that
// cannot happen; the listings below are built that way.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
std::string to_string(const steps& s) {
  static const char* const forms[] = {"load",        "save",        "binary",        "binary_x", "reversed",
                                      "unary",       "unary_x",     "fma_first",     "fma_last", "select_if",
                                      "select_else", "select_x_if", "select_x_else", "horner"};
  static_assert(sizeof forms / sizeof *forms == std::size_t(form::count_));
  const auto name = [&](std::uint8_t o) -> std::string {
    if (o & constant_bit) return std::to_string(s.constants.at(o & ~constant_bit));
    return o == 0 ? "x" : o == acc_source ? "acc" : "s" + std::to_string(o);
  };
  std::string out;
  for (const step& st : s.code) {
    out += forms[int(st.f)];
    const bool select_x = st.f == form::select_x_if || st.f == form::select_x_else;
    if (st.f != form::load && st.f != form::save && (st.f < form::fma_first || select_x))
      out += std::string(" ") + names[int(st.code)];
    if (st.f != form::unary && st.f != form::unary_x) out += " " + name(st.b);
    if (st.f >= form::fma_first) out += " " + name(st.c);
    out += "\n";
  }
  return out;
}

std::string to_string(const program& p) {
  const auto name = [&](std::uint8_t o) {
    return o & constant_bit ? std::to_string(p.constants.at(o & ~constant_bit)) : "r" + std::to_string(o);
  };
  std::string out;
  for (const instruction& in : p.code)
    out += "r" + std::to_string(in.dst) + " = " + names[int(in.code)] + " " + name(in.a) + " " + name(in.b) +
           " " + name(in.c) + "\n";
  return out + "result " + name(p.result) + " (" + std::to_string(p.registers) + " registers)\n";
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace cdl::bytecode
