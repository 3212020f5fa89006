// tests/ptx_machine.hpp's machine: the PTX read into statements, and run one at a time.
#include "tests/ptx_machine.hpp"

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cdl::test {
namespace ptx_detail {

// 128-bit integers (a GNU extension) for 64-bit products and carries.
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 s128;

class machine {
 public:
  explicit machine(const std::string& ptx) : text_(without_comments(ptx)) {
    for (const char* axis : {"x", "y", "z"}) {
      const std::string a = axis;
      registers_["%tid." + a] = registers_["%ctaid." + a] = 0;
      registers_["%ntid." + a] = a == "x" ? block : 1;
      registers_["%nctaid." + a] = 1;
    }
    // The module's initialised arrays, each at an address of its own.
    const std::regex array(
        R"(\.(?:global|const)\s+\.align\s+(\d+)\s+\.b8\s+(\w+)\[(\d+)\]\s*=\s*\{([^}]*)\})");
    std::uint64_t next = global_base;
    for (std::sregex_iterator m(text_.begin(), text_.end(), array), end; m != end; ++m) {
      symbols_[(*m)[2]] = next;
      std::istringstream bytes((*m)[4].str());
      std::string byte;
      std::uint64_t at = next;
      while (std::getline(bytes, byte, ',')) memory_[at++] = std::uint8_t(std::stoul(byte));
      next += (std::stoull((*m)[3]) + 255) / 256 * 256;
    }
  }

  // Runs `entry` with its parameters in order (each a value's bits: a float's, a double's or an
  // address), and returns the machine for reading what it stored.
  machine& run(const std::string& entry, const std::vector<std::uint64_t>& params) {
    const std::size_t at = text_.find(".entry " + entry + "(");
    if (at == std::string::npos) throw std::runtime_error("ptx: no entry " + entry);
    const std::size_t open = text_.find(')', at), body = text_.find('{', open);
    std::size_t depth = 0, end = body;
    for (; end < text_.size(); ++end)
      if (text_[end] == '{')
        ++depth;
      else if (text_[end] == '}' && --depth == 0)
        break;
    const std::regex param(R"((\w+_param_\d+))");  // nvcc's names: <entry>_param_<i>
    const std::string list = text_.substr(at, open - at);
    std::size_t i = 0;
    for (std::sregex_iterator m(list.begin(), list.end(), param), e; m != e; ++m, ++i) {
      if (i >= params.size()) throw std::runtime_error("ptx: " + entry + " takes more parameters");
      params_[(*m)[1]] = params[i];
    }
    read_statements(text_.substr(body + 1, end - body - 1));
    execute();
    return *this;
  }

  // Memory, a byte at a time: the wrapper's put and load (an unwritten byte throws).
  void store(std::uint64_t at, std::uint64_t bits, int bytes) {
    for (int b = 0; b < bytes; ++b) memory_[at + b] = std::uint8_t(bits >> (8 * b));
  }
  std::uint64_t load_bits(std::uint64_t at, int bytes) const {
    std::uint64_t bits = 0;
    for (int b = 0; b < bytes; ++b) bits |= std::uint64_t(byte(at + b)) << (8 * b);
    return bits;
  }

  static constexpr unsigned block = ptx_machine::block;

 private:
  static constexpr std::uint64_t global_base = 0x10000000, local_base = 0x20000000;

  struct statement {
    std::string guard;  // "%p1" or "!%p1", or empty
    std::string op;
    std::vector<std::string> operands;
  };

  static std::string without_comments(const std::string& ptx) {
    std::string out;
    std::istringstream in(ptx);
    for (std::string line; std::getline(in, line);) out += line.substr(0, line.find("//")) + "\n";
    return out;
  }

  static std::string trim(const std::string& s) {
    const std::size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
  }

  // Splits at top-level commas (not inside {} or []).
  static std::vector<std::string> operands_of(const std::string& s) {
    std::vector<std::string> out;
    int depth = 0;
    std::string current;
    for (char c : s) {
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      if (c == ',' && depth == 0) {
        out.push_back(trim(current));
        current.clear();
      } else {
        current += c;
      }
    }
    if (!trim(current).empty()) out.push_back(trim(current));
    return out;
  }

  void read_statements(const std::string& body) {
    statements_.clear();
    labels_.clear();
    std::string text = body;
    for (char& c : text)
      if (c == '\n' || c == '\t') c = ' ';
    std::size_t from = 0;
    while (from < text.size()) {
      std::size_t semi = text.find(';', from);
      if (semi == std::string::npos) semi = text.size();
      std::string s = trim(text.substr(from, semi - from));
      from = semi + 1;
      // Labels, and the braces of a scoped block, stand before a statement.
      for (;;) {
        if (!s.empty() && (s[0] == '{' || s[0] == '}')) {
          s = trim(s.substr(1));
          continue;
        }
        const std::size_t colon = s.find(':');
        if (colon != std::string::npos && s[0] == '$' && s.find(' ') > colon) {
          labels_[s.substr(0, colon)] = statements_.size();
          s = trim(s.substr(colon + 1));
          continue;
        }
        break;
      }
      if (s.empty()) continue;
      if (s[0] == '.') {  // a declaration: the local depot is the one that holds memory
        const std::smatch m = match(s, R"(\.local\s+\.align\s+\d+\s+\.b8\s+(\w+)\[(\d+)\])");
        if (!m.empty()) symbols_[m[1]] = local_base + 0x1000 * locals_++;
        continue;
      }
      statement st;
      if (s[0] == '@') {
        const std::size_t space = s.find(' ');
        st.guard = s.substr(1, space - 1);
        s = trim(s.substr(space));
      }
      const std::size_t space = s.find(' ');
      st.op = s.substr(0, space);
      if (space != std::string::npos) st.operands = operands_of(s.substr(space + 1));
      statements_.push_back(st);
    }
  }

  static std::smatch match(const std::string& s, const char* pattern) {
    std::smatch m;
    std::regex_search(s, m, std::regex(pattern));
    return m;
  }

  std::uint8_t byte(std::uint64_t address) const {
    const auto found = memory_.find(address);
    if (found == memory_.end())
      throw std::runtime_error("ptx: a load from an address nothing wrote: " + std::to_string(address));
    return found->second;
  }

  std::uint64_t reg(const std::string& name) const {
    const auto found = registers_.find(name);
    if (found == registers_.end()) throw std::runtime_error("ptx: " + name + " read before it was written");
    return found->second;
  }

  // An operand's bits: a register, a number (0f/0d: a float's or double's bits), or a symbol's address.
  std::uint64_t value(const std::string& operand) const {
    if (operand.empty()) throw std::runtime_error("ptx: an empty operand");
    if (operand[0] == '%') return reg(operand);
    if (operand.size() > 2 && operand[0] == '0' && (operand[1] == 'f' || operand[1] == 'd'))
      return std::stoull(operand.substr(2), nullptr, 16);
    if (operand[0] == '-' || std::isdigit(static_cast<unsigned char>(operand[0])))
      return std::uint64_t(std::stoll(operand, nullptr, 0));
    const auto symbol = symbols_.find(operand);
    if (symbol != symbols_.end()) return symbol->second;
    throw std::runtime_error("ptx: an operand it does not know: " + operand);
  }

  // [base+offset]: an address, or a parameter's name.
  std::uint64_t address(const std::string& operand, bool* parameter = nullptr) const {
    std::string inside = operand.substr(1, operand.size() - 2);
    std::int64_t offset = 0;
    const std::size_t plus = inside.find('+');
    if (plus != std::string::npos) {
      offset = std::stoll(inside.substr(plus + 1), nullptr, 0);
      inside = inside.substr(0, plus);
    }
    if (params_.count(inside)) {
      if (parameter) *parameter = true;
      return params_.at(inside);
    }
    return value(inside) + std::uint64_t(offset);
  }

  void set(const std::string& name, std::uint64_t bits) { registers_[name] = bits; }

  static bool is_type(const std::string& t) {
    static const std::set<std::string> types{"f32", "f64", "s8", "s16", "s32", "s64", "u8",  "u16",
                                             "u32", "u64", "b8", "b16", "b32", "b64", "pred"};
    return types.count(t) > 0;
  }
  static int width(const std::string& t) { return std::stoi(t.substr(1)); }
  static std::uint64_t mask(int bits) { return bits == 64 ? ~0ull : (1ull << bits) - 1; }
  static std::int64_t signed_of(std::uint64_t v, int bits) {
    return bits == 64 ? std::int64_t(v) : std::int64_t(v << (64 - bits)) >> (64 - bits);
  }
  static float f32(std::uint64_t bits) { return std::bit_cast<float>(std::uint32_t(bits)); }
  static double f64(std::uint64_t bits) { return std::bit_cast<double>(bits); }
  static std::uint64_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
  static std::uint64_t bits_of(double d) { return std::bit_cast<std::uint64_t>(d); }

  // A float operand as a double (exact for f32), and a result back in the type, with .ftz and .sat.
  double real(const std::string& operand, const std::string& type, bool ftz) const {
    const std::uint64_t b = value(operand);
    double v = type == "f32" ? double(f32(b)) : f64(b);
    if (ftz && type == "f32" && std::fpclassify(float(v)) == FP_SUBNORMAL) v = std::copysign(0.0, v);
    return v;
  }
  static std::uint64_t real_bits(double v, const std::string& type, bool ftz, bool sat) {
    if (sat) v = std::isnan(v) ? 0.0 : std::fmin(std::fmax(v, 0.0), 1.0);
    if (type == "f64") return bits_of(v);
    float f = float(v);
    if (ftz && std::fpclassify(f) == FP_SUBNORMAL) f = std::copysign(0.0f, f);
    return bits_of(f);
  }

  // A float operation in the instruction's rounding (rn, unless rm, rp or rz is named), in its type.
  template <class F>
  static double rounded(const std::set<std::string>& mods, const std::string& type, F f) {
    const int mode = mods.count("rm")   ? FE_DOWNWARD
                     : mods.count("rp") ? FE_UPWARD
                     : mods.count("rz") ? FE_TOWARDZERO
                                        : FE_TONEAREST;
    const int before = std::fegetround();
    std::fesetround(mode);
    volatile double out = type == "f32" ? double(f(float{})) : f(double{});
    std::fesetround(before);
    return out;
  }

  void execute() {
    std::size_t pc = 0;
    try {
      step_all(pc);
    } catch (const std::exception& e) {  // which instruction, for the test's message
      std::string text = pc > 0 ? statements_[pc - 1].op : "the start";
      if (pc > 0)
        for (const std::string& o : statements_[pc - 1].operands) text += " " + o;
      throw std::runtime_error(std::string(e.what()) + " (at: " + text + ")");
    }
  }

  void step_all(std::size_t& pc) {
    bool carry = false;
    for (std::size_t steps = 0; pc < statements_.size(); ++steps) {
      if (steps > 1000000)
        throw std::runtime_error("ptx: more than a million steps: a loop that does not end");
      const statement& s = statements_[pc++];
      if (!s.guard.empty()) {
        const bool negated = s.guard[0] == '!';
        if ((reg(s.guard.substr(negated)) != 0) == negated) continue;
      }
      std::vector<std::string> parts;
      std::istringstream dotted(s.op);
      for (std::string p; std::getline(dotted, p, '.');) parts.push_back(p);
      const std::string& base = parts[0];
      std::vector<std::string> types;
      std::set<std::string> mods;
      for (std::size_t i = 1; i < parts.size(); ++i)
        (is_type(parts[i]) ? types.push_back(parts[i]) : void(mods.insert(parts[i])));
      const std::string type = types.empty() ? "" : types.back();
      const bool ftz = mods.count("ftz") > 0, sat = mods.count("sat") > 0;
      const auto& o = s.operands;
      const auto unknown = [&] { return std::runtime_error("ptx: an instruction it does not run: " + s.op); };

      if (base == "ret" || base == "exit") return;
      if (base == "bra") {
        const auto target = labels_.find(o.at(0));
        if (target == labels_.end()) throw std::runtime_error("ptx: no label " + o.at(0));
        pc = target->second;
        continue;
      }
      if (base == "mov") {
        if (o[1][0] == '{') {  // pack: {lo, hi}
          const std::vector<std::string> halves = operands_of(o[1].substr(1, o[1].size() - 2));
          const int w = width(type) / int(halves.size());
          std::uint64_t bits = 0;
          for (std::size_t i = 0; i < halves.size(); ++i) bits |= (value(halves[i]) & mask(w)) << (w * i);
          set(o[0], bits);
        } else if (o[0][0] == '{') {  // unpack
          const std::vector<std::string> halves = operands_of(o[0].substr(1, o[0].size() - 2));
          const int w = width(type) / int(halves.size());
          const std::uint64_t bits = value(o[1]);
          for (std::size_t i = 0; i < halves.size(); ++i)
            if (halves[i] != "_") set(halves[i], (bits >> (w * i)) & mask(w));
        } else {
          set(o[0], value(o[1]) & mask(type == "pred" ? 64 : width(type)));
        }
        continue;
      }
      if (base == "cvta") {
        set(o[0], value(o[1]));
        continue;
      }
      if (base == "ld" || base == "st") {
        const std::string vec = mods.count("v4") ? "v4" : mods.count("v2") ? "v2" : "";
        const int bytes = width(type) / 8, lanes = vec == "v4" ? 4 : vec == "v2" ? 2 : 1;
        const std::string& where = base == "ld" ? o[1] : o[0];
        const std::string& what = base == "ld" ? o[0] : o[1];
        std::vector<std::string> regs =
            lanes > 1 ? operands_of(what.substr(1, what.size() - 2)) : std::vector<std::string>{what};
        bool parameter = false;
        const std::uint64_t at = address(where, &parameter);
        if (base == "ld" && parameter) {
          set(regs[0], at & mask(width(type)));  // a parameter's value
        } else if (base == "ld") {
          for (int l = 0; l < lanes; ++l) set(regs[l], load_bits(at + l * bytes, bytes));
        } else {
          for (int l = 0; l < lanes; ++l) store(at + l * bytes, value(regs[l]), bytes);
        }
        continue;
      }
      if (base == "setp") {
        static const std::set<std::string> cmps{"eq",  "ne",  "lt",  "le",  "gt",  "ge", "equ", "neu", "ltu",
                                                "leu", "gtu", "geu", "num", "nan", "lo", "ls",  "hi",  "hs"};
        std::string cmp;
        for (const std::string& m : mods)
          if (cmps.count(m)) cmp = m;
        bool r;
        if (type[0] == 'f') {
          const double a = real(o[1], type, ftz), b = real(o[2], type, ftz);
          const bool unordered = std::isnan(a) || std::isnan(b);
          const std::string c = cmp.size() == 3 && cmp.back() == 'u' ? cmp.substr(0, 2) : cmp;
          const bool ordered_result = c == "eq"    ? a == b
                                      : c == "ne"  ? a != b && !unordered
                                      : c == "lt"  ? a < b
                                      : c == "le"  ? a <= b
                                      : c == "gt"  ? a > b
                                      : c == "ge"  ? a >= b
                                      : c == "num" ? !unordered
                                      : c == "nan" ? unordered
                                                   : throw unknown();
          r = c == cmp || c == "num" || c == "nan" ? ordered_result : ordered_result || unordered;
        } else {
          const int w = width(type);
          const bool is_signed = type[0] == 's';
          const std::uint64_t ua = value(o[1]) & mask(w), ub = value(o[2]) & mask(w);
          const std::int64_t sa = signed_of(ua, w), sb = signed_of(ub, w);
          const auto less = [&] { return is_signed ? sa < sb : ua < ub; };
          r = cmp == "eq"                  ? ua == ub
              : cmp == "ne"                ? ua != ub
              : cmp == "lt" || cmp == "lo" ? less()
              : cmp == "le" || cmp == "ls" ? less() || ua == ub
              : cmp == "gt" || cmp == "hi" ? !less() && ua != ub
              : cmp == "ge" || cmp == "hs" ? !less()
                                           : throw unknown();
        }
        const std::vector<std::string> dst = operands_of(std::regex_replace(o[0], std::regex(R"(\|)"), ","));
        set(dst[0], r);
        if (dst.size() > 1) set(dst[1], !r);
        continue;
      }
      if (base == "selp") {
        set(o[0], reg(o[3]) ? value(o[1]) : value(o[2]));
        continue;
      }
      if (base == "cvt") {
        const std::string to = types.at(0), from = types.at(1);
        const std::uint64_t src = value(o[1]);
        if (to[0] == 'f' && from[0] == 'f') {
          const double v = from == "f32" ? double(f32(src)) : f64(src);
          const double r = to == "f32" && from == "f64" ? rounded(mods, "f32", [&](auto) { return float(v); })
                           : mods.count("rni")          ? std::nearbyint(v)
                           : mods.count("rzi")          ? std::trunc(v)
                           : mods.count("rmi")          ? std::floor(v)
                           : mods.count("rpi")          ? std::ceil(v)
                                                        : v;
          set(o[0], real_bits(r, to, ftz, sat));
        } else if (to[0] == 'f') {
          const int w = width(from);
          const double v = from[0] == 's' ? double(signed_of(src & mask(w), w)) : double(src & mask(w));
          set(o[0], real_bits(v, to, ftz, sat));  // within 2^53: exact before the rounding to float
        } else if (from[0] == 'f') {
          double v = from == "f32" ? double(f32(src)) : f64(src);
          v = mods.count("rzi")   ? std::trunc(v)
              : mods.count("rmi") ? std::floor(v)
              : mods.count("rpi") ? std::ceil(v)
                                  : std::nearbyint(v);
          const int w = width(to);
          const double lo = to[0] == 's' ? -std::ldexp(1.0, w - 1) : 0.0,
                       hi = to[0] == 's' ? std::ldexp(1.0, w - 1) - 1 : std::ldexp(1.0, w) - 1;
          v = std::isnan(v) ? 0 : std::fmin(std::fmax(v, lo), hi);
          set(o[0], std::uint64_t(to[0] == 's' ? std::int64_t(v) : std::int64_t(std::uint64_t(v))) & mask(w));
        } else {
          const int wt = width(to), wf = width(from);
          const std::uint64_t v =
              from[0] == 's' ? std::uint64_t(signed_of(src & mask(wf), wf)) : src & mask(wf);
          set(o[0], v & mask(wt));
        }
        continue;
      }
      if (type == "f32" || type == "f64") {
        const auto arg = [&](int i) { return real(o.at(i), type, ftz); };
        double r;
        if (base == "add")
          r = rounded(mods, type, [&](auto t) { return decltype(t)(arg(1)) + decltype(t)(arg(2)); });
        else if (base == "sub")
          r = rounded(mods, type, [&](auto t) { return decltype(t)(arg(1)) - decltype(t)(arg(2)); });
        else if (base == "mul")
          r = rounded(mods, type, [&](auto t) { return decltype(t)(arg(1)) * decltype(t)(arg(2)); });
        else if (base == "fma" || base == "mad")
          r = rounded(mods, type, [&](auto t) {
            return std::fma(decltype(t)(arg(1)), decltype(t)(arg(2)), decltype(t)(arg(3)));
          });
        else if (base == "div")
          r = rounded(mods, type, [&](auto t) { return decltype(t)(arg(1)) / decltype(t)(arg(2)); });
        else if (base == "neg")
          r = -arg(1);
        else if (base == "abs")
          r = std::fabs(arg(1));
        else if (base == "min")
          r = std::fmin(arg(1), arg(2));
        else if (base == "max")
          r = std::fmax(arg(1), arg(2));
        else if (base == "sqrt")
          r = rounded(mods, type, [&](auto t) { return std::sqrt(decltype(t)(arg(1))); });
        else if (base == "rcp")
          r = rounded(mods, type, [&](auto t) { return decltype(t)(1) / decltype(t)(arg(1)); });
        else if (base == "rsqrt")
          r = 1 / std::sqrt(arg(1));
        else if (base == "ex2")
          r = std::exp2(arg(1));
        else if (base == "lg2")
          r = std::log2(arg(1));
        else if (base == "sin")
          r = std::sin(arg(1));
        else if (base == "cos")
          r = std::cos(arg(1));
        else if (base == "copysign")
          r = std::copysign(arg(2), arg(1));
        else
          throw unknown();
        set(o[0], real_bits(r, type, ftz, sat));
        continue;
      }
      if (type.empty()) throw unknown();
      if (type == "pred") {  // predicates: truth values
        const auto p = [&](int i) { return value(o.at(i)) != 0; };
        if (base == "and")
          set(o[0], p(1) && p(2));
        else if (base == "or")
          set(o[0], p(1) || p(2));
        else if (base == "xor")
          set(o[0], p(1) != p(2));
        else if (base == "not")
          set(o[0], !p(1));
        else
          throw unknown();
        continue;
      }
      // Integers and bits: at the type's width, signed where it says s.
      const int w = width(type);
      const bool is_signed = type[0] == 's';
      const auto u = [&](int i) { return value(o.at(i)) & mask(w); };
      const auto si = [&](int i) { return signed_of(u(i), w); };
      const auto product = [&](std::uint64_t a, std::uint64_t b, int bits, bool hi) {  // of two w-bit values
        if (bits == 32) {
          const std::uint64_t p = is_signed ? std::uint64_t(signed_of(a, 32) * signed_of(b, 32)) : a * b;
          return hi ? (p >> 32) & mask(32) : p & mask(32);
        }
        const u128 p = is_signed ? (u128)((s128)std::int64_t(a) * std::int64_t(b)) : (u128)a * b;
        return hi ? std::uint64_t(p >> 64) : std::uint64_t(p);
      };
      std::uint64_t r;
      const bool with_carry = base == "addc" || base == "subc" || base == "madc";
      const bool sets_carry = mods.count("cc") > 0;
      bool carry_out = false;
      if (base == "add" || base == "addc") {
        const u128 sum = (u128)u(1) + u(2) + (with_carry && carry);
        r = std::uint64_t(sum) & mask(w);
        carry_out = (sum >> w) != 0;
      } else if (base == "sub" || base == "subc") {
        const u128 a = u(1), b = (u128)u(2) + (with_carry && carry);
        r = std::uint64_t(a - b) & mask(w);
        carry_out = a < b;  // the borrow
      } else if (base == "mul") {
        if (mods.count("wide")) {
          const std::uint64_t a = u(1), b = u(2);
          r = is_signed ? std::uint64_t(signed_of(a, w) * signed_of(b, w)) : a * b;
        } else {
          r = product(u(1), u(2), w, mods.count("hi") > 0);
        }
      } else if (base == "mad" || base == "madc") {
        u128 p;
        int pw = w;
        if (mods.count("wide")) {
          p = is_signed ? (u128)(s128)(signed_of(u(1), w) * signed_of(u(2), w)) : (u128)(u(1) * u(2));
          pw = 2 * w;
          p &= mask(pw);
          const u128 sum = p + (value(o.at(3)) & mask(pw)) + (with_carry && carry);
          r = std::uint64_t(sum) & mask(pw);
          carry_out = (sum >> pw) != 0;
        } else {
          p = product(u(1), u(2), w, mods.count("hi") > 0);
          const u128 sum = p + u(3) + (with_carry && carry);
          r = std::uint64_t(sum) & mask(w);
          carry_out = (sum >> w) != 0;
        }
      } else if (base == "and")
        r = u(1) & u(2);
      else if (base == "or")
        r = u(1) | u(2);
      else if (base == "xor")
        r = u(1) ^ u(2);
      else if (base == "not")
        r = ~u(1) & mask(w);
      else if (base == "neg")
        r = (0 - u(1)) & mask(w);
      else if (base == "abs")
        r = std::uint64_t(std::llabs(si(1))) & mask(w);
      else if (base == "min")
        r = is_signed ? std::uint64_t(std::min(si(1), si(2))) & mask(w) : std::min(u(1), u(2));
      else if (base == "max")
        r = is_signed ? std::uint64_t(std::max(si(1), si(2))) & mask(w) : std::max(u(1), u(2));
      else if (base == "shl") {
        const std::uint64_t n = value(o.at(2)) & 0xffffffff;
        r = n >= std::uint64_t(w) ? 0 : (u(1) << n) & mask(w);
      } else if (base == "shr") {
        const std::uint64_t n = value(o.at(2)) & 0xffffffff;
        r = is_signed               ? std::uint64_t(si(1) >> std::min<std::uint64_t>(n, w - 1)) & mask(w)
            : n >= std::uint64_t(w) ? 0
                                    : u(1) >> n;
      } else if (base == "clz") {
        r = u(1) == 0 ? w : std::countl_zero(u(1)) - (64 - w);
      } else if (base == "popc") {
        r = std::popcount(u(1));
      } else if (base == "bfi") {  // bfi d, a, b, pos, len: a's low len bits into b at pos
        const std::uint64_t pos = value(o.at(3)) & 0xff, len = value(o.at(4)) & 0xff;
        const std::uint64_t field = len >= 64 ? ~0ull : (1ull << len) - 1;
        r = pos >= std::uint64_t(w) ? u(2) : ((u(2) & ~(field << pos)) | ((u(1) & field) << pos)) & mask(w);
      } else {
        throw unknown();
      }
      if (sets_carry) carry = carry_out;
      set(o[0], r);
    }
  }

  std::string text_;
  std::map<std::string, std::uint64_t> symbols_, params_, registers_;
  std::map<std::uint64_t, std::uint8_t> memory_;
  std::vector<statement> statements_;
  std::map<std::string, std::size_t> labels_;
  int locals_ = 0;
};

}  // namespace ptx_detail

struct ptx_machine::state : ptx_detail::machine {
  using ptx_detail::machine::machine;
};

ptx_machine::ptx_machine(const std::string& ptx) : state_(std::make_unique<state>(ptx)) {}
ptx_machine::~ptx_machine() = default;

ptx_machine& ptx_machine::run(const std::string& entry, const std::vector<std::uint64_t>& params) {
  state_->run(entry, params);
  return *this;
}

void ptx_machine::poke(std::uint64_t address, std::uint64_t bits, int bytes) {
  state_->store(address, bits, bytes);
}

std::uint64_t ptx_machine::peek(std::uint64_t address, int bytes) const {
  return state_->load_bits(address, bytes);
}

std::vector<double> map_outputs(const std::string& ptx, const std::string& entry, bool f64, bool vec,
                                const std::vector<double>& xs, int k) {
  constexpr auto in = ptx_machine::input, out = ptx_machine::output;
  const int size = f64 ? 8 : 4, computed = vec ? 16 / size : 1;
  ptx_machine m(ptx);
  for (std::size_t i = 0; i < xs.size(); ++i)
    f64 ? void(m.put(in + size * i, xs[i])) : void(m.put(in + size * i, float(xs[i])));
  m.run(entry, {in, out, xs.size(), std::uint64_t(k), 0});  // the last: an op's object has no state
  std::vector<double> got;
  for (int i = 0; i < computed; ++i)
    got.push_back(f64 ? m.load<double>(out + size * i) : double(m.load<float>(out + size * i)));
  return got;
}

}  // namespace cdl::test
