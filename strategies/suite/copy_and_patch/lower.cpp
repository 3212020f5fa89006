// lower.hpp's lowering: an op's program to steps. Read the header first.
#include "strategies/suite/copy_and_patch/lower.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace cdl::copy_and_patch::patch {
namespace {

// Whether m * (k1 - k2) + k2, in float as the GPU computes it, is k1 for m = 1 and k2 for m = 0, to
// the bit (not where k1 - k2 rounds, nor for -0.0, infinities or NaN).
bool picks_exactly(float k1, float k2) {
  const float d = k1 - k2;
  const auto same = [](float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  };
  return std::isfinite(d) && same(1.0f * d + k2, k1) && same(0.0f * d + k2, k2);
}

// The function a call image's slot runs for a node of the language, or none.
unsigned slot_function(cdl::expr::kind k) {
  const std::string_view name = cdl::expr::function_name(k);
#define CDL_FUNCTION_OF(function, fn) \
  if (name == #function) return stencil::fn_##function;
  CDL_SLOT_FUNCTIONS(CDL_FUNCTION_OF)
  return stencil::no_function;
}

}  // namespace

// The op as steps on virtual registers (each node its own), constants folded in float as the GPU
// would compute them; a function called again on the same value is called once, as a compiler would
// (a call is dearer than any step, and each takes a slot); a division by a value is a call too, of
// nvcc's division. Returns the register holding the result.
int select(const cdl::expr::program& p, std::vector<step>& out) {
  using cdl::expr::kind;
  struct value {
    bool constant;
    float c;
    int reg;
  };
  std::vector<value> v(p.nodes.size());
  std::map<std::tuple<unsigned, int, int>, int> called;  // (function, argument, divisor) -> the result
  int next = 1;
  const auto call = [&](unsigned f, int arg, int divisor = -1) {
    if (const auto again = called.find({f, arg, divisor}); again != called.end()) return again->second;
    out.push_back({-1, next, arg, divisor, 0, -1, f});
    return called[{f, arg, divisor}] = next++;
  };
  auto emit = [&](int op, int a, int b, float c, int third = -1) {
    out.push_back({op, next, a, b, c, third});
    return value{false, 0, next++};
  };
  auto materialise = [&](value x) {  // a constant as a register: max then min with it, whatever was there
    if (!x.constant) return x.reg;
    emit(stencil::max, 0, -1, x.c);
    return emit(stencil::min, next - 1, -1, x.c).reg;
  };
  // a / c, c a constant: its reciprocal y = 1 / c correctly rounded on the host, q = a * y, then one
  // correction, q + (a - q * c) * y, its residual exact in an FMA: the quotient correctly rounded
  // (Markstein's theorem) wherever y and q are normal floats; by a power of two, a zero or an
  // infinity, a * y is the quotient exactly. So that q overflows nowhere the quotient does not, a
  // divisor below 1 is scaled by a power of two into [1, 2) and the quotient scaled back (exact, or
  // the infinity the quotient is); an infinite a's q is infinite, and its residual inf - inf, so the
  // residual is taken from q held to float's range. A division by a value is nvcc's own in a slot (a
  // reciprocal whose result arrives after a time no stall field holds, then a slow path for
  // operands outside the normal range: no stencil holds either).
  const auto divide = [&](int a, float c) -> value {
    int exponent = 0;
    const float fraction = std::frexp(c, &exponent), y = 1.0f / c;  // c = fraction * 2^exponent
    if (c == 0 || !std::isfinite(c) || (std::fabs(fraction) == 0.5f && std::isfinite(y) && y != 0))
      return emit(stencil::mul, a, -1, y);
    const int shift = std::fabs(c) < 1 ? 1 - exponent : 0;
    const float scaled = std::ldexp(c, shift), back = std::ldexp(1.0f, shift), ys = 1.0f / scaled;
    if (!std::isnormal(ys) || !std::isnormal(back))
      throw refused("a division by a constant whose reciprocal is not a normal float (beyond 2^126)");
    constexpr float largest = std::numeric_limits<float>::max();
    const int q = emit(stencil::mul, a, -1, ys).reg;
    const int bounded = emit(stencil::min, emit(stencil::max, q, -1, -largest).reg, -1, largest).reg;
    const int residual = emit(stencil::fmac, bounded, a, -scaled).reg;  // a - q * c
    const value quotient = emit(stencil::fmac, residual, q, ys);
    return shift == 0 ? quotient : emit(stencil::mul, quotient.reg, -1, back);
  };
  const auto made = [&](int reg) -> const step& { return out[std::size_t(reg - 1)]; };
  // A register made by a multiply by a constant from a node of the program (not a temporary,
  // whose value other nodes may read), or null.
  const auto product_of = [&](value r, const cdl::expr::node& e) -> const step* {
    if (r.constant || r.reg == 0 || (e.op != kind::multiply && e.op != kind::divide)) return nullptr;
    return made(r.reg).op == stencil::mul ? &made(r.reg) : nullptr;
  };
  std::vector<int> refs(p.nodes.size(), 0);  // the nodes and the result that read each node
  for (const auto& e : p.nodes)
    for (int r : {e.a, e.b, e.c})
      if (r >= 0) ++refs[std::size_t(r)];
  for (const auto& bound : p.bindings) ++refs[std::size_t(bound.value)];
  ++refs[std::size_t(p.result)];
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const auto& e = p.nodes[n];
    const value a = e.a >= 0 ? v[e.a] : value{}, b = e.b >= 0 ? v[e.b] : value{};
    const bool both = e.a >= 0 && e.b >= 0 && a.constant && b.constant;
    switch (e.op) {
      case kind::number: v[n] = {true, float(e.value), -1}; break;
      case kind::x: v[n] = {false, 0, 0}; break;
      case kind::temporary: v[n] = v[p.bindings[std::size_t(e.value)].value]; break;
      case kind::negate:
        v[n] = a.constant ? value{true, -a.c, -1} : emit(stencil::rsub, a.reg, -1, -0.0f);
        break;
      case kind::add:
        v[n] = both         ? value{true, a.c + b.c, -1}
               : a.constant ? emit(stencil::add, b.reg, -1, a.c)
               : b.constant ? emit(stencil::add, a.reg, -1, b.c)
                            : emit(stencil::addr, a.reg, b.reg, 0);
        break;
      case kind::subtract:
        v[n] = both         ? value{true, a.c - b.c, -1}
               : a.constant ? emit(stencil::rsub, b.reg, -1, a.c)
               : b.constant ? emit(stencil::sub, a.reg, -1, b.c)
                            : emit(stencil::subr, a.reg, b.reg, 0);
        break;
      case kind::multiply:
        v[n] = both         ? value{true, a.c * b.c, -1}
               : a.constant ? emit(stencil::mul, b.reg, -1, a.c)
               : b.constant ? emit(stencil::mul, a.reg, -1, b.c)
                            : emit(stencil::mulr, a.reg, b.reg, 0);
        break;
      case kind::divide:
        v[n] = both         ? value{true, a.c / b.c, -1}
               : b.constant ? divide(a.reg, b.c)
                            : value{false, 0, call(stencil::fn_div, materialise(a), b.reg)};
        break;
      case kind::min:
      case kind::max: {
        const bool lo = e.op == kind::min;
        v[n] = both         ? value{true, lo ? stencil::gpu_min(a.c, b.c) : stencil::gpu_max(a.c, b.c), -1}
               : a.constant ? emit(lo ? stencil::min : stencil::max, b.reg, -1, a.c)
               : b.constant ? emit(lo ? stencil::min : stencil::max, a.reg, -1, b.c)
                            : emit(lo ? stencil::minr : stencil::maxr, a.reg, b.reg, 0);
        break;
      }
      case kind::select: {  // a condition's mask picks the bits of one arm or the other
        if (a.constant) {
          v[n] = a.c != 0 ? b : v[e.c];
          break;
        }
        // As nvcc does: c ? k1 : k2 is one value of the compare's 1.0 or 0.0, m * (k1 - k2) + k2,
        // and c ? y * k1 : y * k2 is y times it, where that gives k1 and k2 to the bit.
        const value f = v[e.c];
        const step* yes = product_of(b, p.nodes[std::size_t(e.b)]);
        const step* no = product_of(f, p.nodes[std::size_t(e.c)]);
        const bool products =
            yes && no && yes->a == no->a && refs[std::size_t(e.b)] == 1 && refs[std::size_t(e.c)] == 1;
        const float k1 = products ? yes->constant : b.c, k2 = products ? no->constant : f.c;
        if ((products || (b.constant && f.constant)) && picks_exactly(k1, k2)) {
          const int truth = made(a.reg).a;       // the compare's 1.0 or 0.0, which the mask was made from
          const int y = products ? yes->a : -1;  // (out grows below)
          const value picked = emit(stencil::add, emit(stencil::mul, truth, -1, k1 - k2).reg, -1, k2);
          v[n] = products ? emit(stencil::mulr, y, picked.reg, 0) : picked;
        } else {
          v[n] = emit(stencil::sel, a.reg, materialise(b), 0, materialise(f));
        }
        break;
      }
      default:
        if (const unsigned f = slot_function(e.op); f != stencil::no_function) {
          if (a.constant) {  // folded as the compiler folds sinf(2.0f): on the host
            v[n] = {true, stencil::call(f, a.c, 0), -1};
          } else {
            v[n] = {false, 0, call(f, a.reg)};
          }
          break;
        }
        if (!cdl::expr::is_condition(e.op))
          throw refused("`" + std::string(cdl::expr::function_name(e.op)) +
                        "` has no one-instruction stencil");
        // a compare (1.0 or 0.0), then its mask; b < a is a > b where one side is a constant
        int order = int(e.op) - int(kind::less);  // <, <=, >, >=, ==, !=
        if (both) {
          const bool truth[] = {a.c<b.c, a.c <= b.c, a.c> b.c, a.c >= b.c, a.c == b.c, a.c != b.c};
          v[n] = {true, truth[order] ? 1.0f : 0.0f, -1};
          break;
        }
        const int swapped[] = {2, 3, 0, 1, 4, 5};
        value compared;
        if (a.constant || b.constant) {
          if (a.constant) order = swapped[order];
          compared = emit(stencil::lt + order, a.constant ? b.reg : a.reg, -1, a.constant ? a.c : b.c);
        } else {  // registers: a > b is b < a
          const int with_registers[] = {stencil::ltr, stencil::ler, stencil::ltr,
                                        stencil::ler, stencil::eqr, stencil::ner};
          const bool swap = order == 2 || order == 3;
          compared = emit(with_registers[order], swap ? b.reg : a.reg, swap ? a.reg : b.reg, 0);
        }
        v[n] = emit(stencil::mask, compared.reg, -1, 0);
    }
  }
  return materialise(v[p.result]);
}

namespace {

// The steps nothing reads, directly or through others (but the result's): each marked gone.
std::vector<bool> unread(const std::vector<step>& code, int result) {
  std::size_t values = 1;
  for (const step& s : code) values = std::max(values, std::size_t(s.dest) + 1);
  std::vector<int> reads(values, 0);
  for (const step& s : code)
    for (int r : {s.a, s.b, s.c})
      if (r >= 0) ++reads[std::size_t(r)];
  std::vector<bool> gone(code.size(), false);
  for (std::size_t n = code.size(); n-- > 0;)
    if (code[n].dest != result && reads[std::size_t(code[n].dest)] == 0) {
      gone[n] = true;
      for (int r : {code[n].a, code[n].b, code[n].c})
        if (r >= 0) --reads[std::size_t(r)];
    }
  return gone;
}

// The steps not gone, their registers numbered 1, 2, ... again. Returns the result's.
int keep(std::vector<step>& code, const std::vector<bool>& gone, int result) {
  std::size_t values = std::size_t(result) + 1;
  for (const step& s : code) values = std::max(values, std::size_t(s.dest) + 1);
  std::vector<int> renamed(values, -1);
  renamed[0] = 0;
  std::size_t kept = 0;
  for (std::size_t n = 0; n < code.size(); ++n)
    if (!gone[n]) renamed[std::size_t(code[n].dest)] = int(kept + 1), code[kept++] = code[n];
  code.resize(kept);
  for (step& s : code) {
    s.dest = renamed[std::size_t(s.dest)], s.a = renamed[std::size_t(s.a)];
    if (s.b >= 0) s.b = renamed[std::size_t(s.b)];
    if (s.c >= 0) s.c = renamed[std::size_t(s.c)];
  }
  return renamed[std::size_t(result)];
}

}  // namespace

// A step nothing reads goes (a select that picks constants leaves its mask and its arms' products
// unread); a multiply whose one reader is an add becomes one step with it, as nvcc contracts them:
// by a constant, added to a register (or the subtrahend of a subtract), a * c + b (b - a * c is
// a * -c + b); of two registers, with a constant added or subtracted (or subtracted from one),
// a * b + c (a * b - c is a * b + -c; c - a * b is -(a * b) + c); and with a register added (or
// subtracted from one), a * b + r (r - a * b is -(a * b) + r).
int fuse(std::vector<step>& code, int result) {
  std::vector<bool> gone = unread(code, result);
  std::vector<int> reads(code.size() + 2, 0), made_by(code.size() + 2, -1);
  for (std::size_t n = 0; n < code.size(); ++n) {
    made_by[std::size_t(code[n].dest)] = int(n);
    for (int r : {code[n].a, code[n].b, code[n].c})
      if (r >= 0 && !gone[n]) ++reads[std::size_t(r)];
  }
  const auto fusable = [&](int r, int op) {  // the step making r, where it is an `op` only one step reads
    const int m = r > 0 ? made_by[std::size_t(r)] : -1;
    return m >= 0 && !gone[std::size_t(m)] && code[std::size_t(m)].op == op && reads[std::size_t(r)] == 1 &&
                   r != result
               ? m
               : -1;
  };
  for (step& s : code) {
    if (gone[std::size_t(&s - code.data())]) continue;
    if (s.op == stencil::add || s.op == stencil::sub || s.op == stencil::rsub) {
      if (const int m = fusable(s.a, stencil::mulr); m >= 0) {
        const step& product = code[std::size_t(m)];
        s = {s.op == stencil::rsub ? stencil::fnmar : stencil::fmar, s.dest, product.a, product.b,
             s.op == stencil::sub ? -s.constant : s.constant};
        gone[std::size_t(m)] = true;
      }
      continue;
    }
    if (s.op != stencil::addr && s.op != stencil::subr) continue;
    const int before = s.op;
    for (int side : {0, 1}) {
      const int m = fusable(side == 0 ? s.a : s.b, stencil::mul);
      if (m < 0 || (s.op == stencil::subr && side == 0)) continue;
      const step& product = code[std::size_t(m)];
      s = {stencil::fmac, s.dest, product.a, side == 0 ? s.b : s.a,
           s.op == stencil::subr ? -product.constant : product.constant};
      gone[std::size_t(m)] = true;
      break;
    }
    for (int side : {0, 1}) {  // a product of two registers: a * b + r (r - a * b: its subtrahend alone)
      const int m = s.op == before ? fusable(side == 0 ? s.a : s.b, stencil::mulr) : -1;
      if (m < 0 || (s.op == stencil::subr && side == 0)) continue;
      const step& product = code[std::size_t(m)];
      s = {s.op == stencil::subr ? stencil::fnmarr : stencil::fmarr,
           s.dest,
           product.a,
           product.b,
           0,
           side == 0 ? s.b : s.a};
      gone[std::size_t(m)] = true;
    }
  }
  return keep(code, gone, result);
}

int by_need(std::vector<step>& code, int result) {
  std::vector<int> made_by(code.size() + 2, -1), renamed(code.size() + 2, -1);
  for (std::size_t n = 0; n < code.size(); ++n) made_by[std::size_t(code[n].dest)] = int(n);
  std::vector<step> ordered;
  renamed[0] = 0;                                       // x
  const auto need = [&](auto& self, int reg) -> void {  // reg's making, after what it reads
    if (renamed[std::size_t(reg)] >= 0) return;
    step s = code[std::size_t(made_by[std::size_t(reg)])];
    for (int* r : {&s.a, &s.b, &s.c})
      if (*r >= 0) self(self, *r), *r = renamed[std::size_t(*r)];
    s.dest = renamed[std::size_t(reg)] = int(ordered.size()) + 1;
    ordered.push_back(s);
  };
  for (const step& s : code)
    if (s.call) need(need, s.dest);
  need(need, result);
  code = std::move(ordered);
  return renamed[std::size_t(result)];
}

int spread(std::vector<step>& code, int result) {
  const std::size_t values = code.size() + 2;
  const int calls = calls_in(code);
  std::vector<int> made_by(values, -1), call_of(values, -1);  // a value's step; a call result's index
  for (std::size_t n = 0, k = 0; n < code.size(); ++n) {
    made_by[std::size_t(code[n].dest)] = int(n);
    if (code[n].call) call_of[std::size_t(code[n].dest)] = int(k++);
  }
  // The latest window each step can be in: before the first call that reads it, directly or not
  std::vector<int> latest(code.size(), calls);
  for (std::size_t n = code.size(); n-- > 0;) {
    const int by = code[n].call ? call_of[std::size_t(code[n].dest)] : latest[n];
    for (int v : {code[n].a, code[n].b, code[n].c})
      if (v > 0 && !code[std::size_t(made_by[std::size_t(v)])].call)
        latest[std::size_t(made_by[std::size_t(v)])] =
            std::min(latest[std::size_t(made_by[std::size_t(v)])], by);
  }
  const int share = int(code.size()) / (calls + 1);  // the steps and calls, over the windows
  std::vector<int> window(code.size(), -1);          // each step's, once given
  const auto ready = [&](std::size_t n, int w) {     // what it reads is made by window w
    for (int v : {code[n].a, code[n].b, code[n].c}) {
      if (v <= 0) continue;
      const int m = made_by[std::size_t(v)];
      if (code[std::size_t(m)].call ? call_of[std::size_t(v)] >= w : window[std::size_t(m)] < 0) return false;
    }
    return true;
  };
  std::vector<step> ordered;
  std::vector<int> renamed(values, -1);
  renamed[0] = 0;
  const auto emit = [&](std::size_t n) {
    step s = code[n];
    for (int* r : {&s.a, &s.b, &s.c})
      if (*r >= 0) *r = renamed[std::size_t(*r)];
    s.dest = renamed[std::size_t(code[n].dest)] = int(ordered.size()) + 1;
    ordered.push_back(s);
  };
  for (int w = 0; w <= calls; ++w) {
    // those that must be here, then others that can be, up to an even share of the steps
    int placed = 0;
    for (bool more = true; more;) {
      more = false;
      for (std::size_t n = 0; n < code.size(); ++n)
        if (!code[n].call && window[n] < 0 && ready(n, w) && (latest[n] == w || placed < share))
          window[n] = w, ++placed, more = true, emit(n);
    }
    for (std::size_t n = 0; n < code.size() && w < calls; ++n)  // then the window's call
      if (code[n].call && call_of[std::size_t(code[n].dest)] == w) emit(n);
  }
  code = std::move(ordered);
  return renamed[std::size_t(result)];
}

int remake(std::vector<step>& code, int result) {
  std::size_t values = std::size_t(result) + 1;
  for (const step& s : code) values = std::max(values, std::size_t(s.dest) + 1);
  std::vector<int> made_by(values, -1), window(values, 0), renamed(values, -1);
  std::vector<bool> of_x(values, false);  // made from x alone
  of_x[0] = true, renamed[0] = 0;
  for (std::size_t n = 0, w = 0; n < code.size(); ++n) {
    const step& s = code[n];
    bool pure = !s.call;
    for (int r : {s.a, s.b, s.c})
      if (r >= 0) pure = pure && of_x[std::size_t(r)];
    made_by[std::size_t(s.dest)] = int(n), of_x[std::size_t(s.dest)] = pure;
    window[std::size_t(s.dest)] = int(w += s.call ? 1 : 0);  // a call's result: the window after its slot
  }
  std::vector<step> out;
  std::map<std::pair<int, int>, int> again;  // a value made again in a window: its register there
  // v's register for a reader in window w: v's own, or v made again there (what it reads too)
  const auto in = [&](auto& self, int v, int w) -> int {
    if (v <= 0 || !of_x[std::size_t(v)] || window[std::size_t(v)] == w) return renamed[std::size_t(v)];
    if (const auto found = again.find({v, w}); found != again.end()) return found->second;
    step s = code[std::size_t(made_by[std::size_t(v)])];
    for (int* r : {&s.a, &s.b, &s.c})
      if (*r >= 0) *r = self(self, *r, w);
    s.dest = int(out.size()) + 1;
    out.push_back(s);
    return again[{v, w}] = s.dest;
  };
  int w = 0;
  for (const step& original : code) {
    step s = original;
    for (int* r : {&s.a, &s.b, &s.c})
      if (*r >= 0) *r = in(in, *r, w);
    s.dest = renamed[std::size_t(original.dest)] = int(out.size()) + 1;
    out.push_back(s);
    w += s.call ? 1 : 0;
  }
  const int out_result = in(in, result, w);  // the sum reads it after the last slot
  const std::vector<bool> gone = unread(out, out_result);
  code = std::move(out);
  return keep(code, gone, out_result);
}

}  // namespace cdl::copy_and_patch::patch
