// The expression language of strategy 08 (common/expression.hpp) and its lowering to NVVM IR,
// compiled by libNVVM and nvJitLink: neither needs a GPU, so all of it runs here.
#include "common/expression.hpp"
#include "common/ops.cuh"
#include "common/validation.hpp"
#include "expression_oracle.hpp"
#include "random_programs.hpp"
#include "strategies/suite/expression_jit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

// The leak check off (tests/CMakeLists.txt says why: libNVVM keeps its allocations), set in the
// program itself: an ASAN_OPTIONS in the tests' environment did not reach them.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

namespace cdl {
namespace {

double eval(const std::string& text, double x) { return expr::evaluate(expr::parse(text), x); }

TEST(ExpressionLanguage, EveryConstructEvaluates) {
  EXPECT_DOUBLE_EQ(eval("x", 3), 3);
  EXPECT_DOUBLE_EQ(eval("2.5", 3), 2.5);
  EXPECT_DOUBLE_EQ(eval(".5e1", 0), 5);
  EXPECT_DOUBLE_EQ(eval("1e-2", 0), 0.01);
  EXPECT_DOUBLE_EQ(eval("x + 1", 3), 4);
  EXPECT_DOUBLE_EQ(eval("x - 1", 3), 2);
  EXPECT_DOUBLE_EQ(eval("x * 2", 3), 6);
  EXPECT_DOUBLE_EQ(eval("x / 2", 3), 1.5);
  EXPECT_DOUBLE_EQ(eval("-x", 3), -3);
  EXPECT_DOUBLE_EQ(eval("+x", 3), 3);
  EXPECT_DOUBLE_EQ(eval("T(2) * x", 3), 6);
  EXPECT_DOUBLE_EQ(eval("sin(x)", 0.5), std::sin(0.5));
  EXPECT_DOUBLE_EQ(eval("cos(x)", 0.5), std::cos(0.5));
  EXPECT_DOUBLE_EQ(eval("exp(x)", 0.5), std::exp(0.5));
  EXPECT_DOUBLE_EQ(eval("sqrt(x)", 2), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(eval("min(x, 1)", 3), 1);
  EXPECT_DOUBLE_EQ(eval("max(x, 1)", 3), 3);
  EXPECT_DOUBLE_EQ(eval("s = sin(x); c = cos(x); s * s + c * c", 0.7),
                   std::sin(0.7) * std::sin(0.7) + std::cos(0.7) * std::cos(0.7));
  EXPECT_DOUBLE_EQ(eval("a = x + 1; b = a * a; b - a;", 2), 6);
  for (const auto& [op, yes] : {std::pair{"<", 1}, {"<=", 1}, {">", 0}, {">=", 0}, {"==", 0}, {"!=", 1}})
    EXPECT_DOUBLE_EQ(eval(std::string("x ") + op + " 2 ? 10 : 20", 1), yes ? 10 : 20) << op;
  EXPECT_DOUBLE_EQ(eval("x == 1 ? 10 : 20", 1), 10);
  EXPECT_DOUBLE_EQ(eval("(x < 2) ? 1 : 0", 1), 1);
}

// A difference of two near values: its float error is relative to what it is made of, not to itself.
TEST(ExpressionLanguage, AMagnitudeBoundsTheFloatErrorWhereTermsCancel) {
  const expr::program p = expr::parse("min(max(x, -1), 1) / 4 - x * x");
  EXPECT_DOUBLE_EQ(expr::evaluate_bounded(p, 0.25).value, 0.0);
  EXPECT_DOUBLE_EQ(expr::evaluate_bounded(p, 0.25).magnitude, 0.1875);  // (1/4 + 1/16 * 4) / 4 + 1/16
  EXPECT_DOUBLE_EQ(expr::evaluate_bounded(expr::parse("-x * 3 + sin(x)"), -2).magnitude,
                   6 + std::sin(2.0) + 2);
  int cancelled = 0;
  for (int i = 0; i < 4096; ++i) {  // float inputs near 1/4, the op in float as a GPU computes it
    const float x = 0.25f + float(i - 2048) * 1e-7f;
    const float got = std::fmin(std::fmax(x, -1.0f), 1.0f) / 4.0f - x * x;
    const expr::bounded want = expr::evaluate_bounded(p, double(x));
    const double error = std::fabs(double(got) - want.value),
                 tolerance = tolerance_for(epsilon_of<float>(), 16, 1);
    EXPECT_LE(error, tolerance * want.magnitude) << x;
    cancelled += error > tolerance * std::fabs(want.value);  // the value alone as the scale fails these
  }
  EXPECT_GT(cancelled, 0);
}

TEST(ExpressionLanguage, PrecedenceAndAssociativity) {
  EXPECT_DOUBLE_EQ(eval("1 + 2 * 3", 0), 7);
  EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3", 0), 9);
  EXPECT_DOUBLE_EQ(eval("2 - 3 - 4", 0), -5);
  EXPECT_DOUBLE_EQ(eval("8 / 4 / 2", 0), 1);
  EXPECT_DOUBLE_EQ(eval("-2 * 3", 0), -6);
  EXPECT_DOUBLE_EQ(eval("--x", 4), 4);
  EXPECT_DOUBLE_EQ(eval("x + 1 < 3 ? 1 : 2", 2.5), 2);          // arithmetic binds tighter than a comparison
  EXPECT_DOUBLE_EQ(eval("x < 1 ? 1 : x < 2 ? 2 : 3", 1.5), 2);  // ?: is right-associative
  EXPECT_DOUBLE_EQ(eval("x < 1 ? 1 : x < 2 ? 2 : 3", 2.5), 3);
  EXPECT_DOUBLE_EQ(eval("1 + x < 3 ? 10 : 20 * 2", 5), 40);
}

TEST(ExpressionLanguage, TheCataloguesOpsAreProgramsOfTheLanguage) {
  // ops.cuh's text, evaluated by the interpreter, equals the functor in double.
  for (const double x : {0.1, 0.5, 0.75, 1.0, 3.0}) {
    for (std::size_t i = 0; i < map_op_catalogue.size(); ++i) {
      const op_info& o = map_op_catalogue[i];
      EXPECT_DOUBLE_EQ(eval(std::string(o.source), x), visit_op(map_op(i), [x](auto f) { return f(x); }))
          << o.name << " at " << x;
    }
  }
}

void expect_error(const std::string& text, std::size_t offset, const std::string& words) {
  try {
    expr::parse(text);
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const expr::syntax_error& e) {
    EXPECT_EQ(e.offset(), offset) << text << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << text << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("column " + std::to_string(offset + 1)), std::string::npos)
        << e.what();
  }
}

TEST(ExpressionLanguage, BadInputNamesItsPosition) {
  expect_error("", 0, "empty");
  expect_error("   ", 0, "empty");
  expect_error("x +", 3, "ends where");
  expect_error("x * * 2", 4, "found '*'");
  expect_error("foo + 1", 0, "unknown name 'foo'");
  expect_error("sin x", 4, "is a function");
  expect_error("min(x)", 5, "expected ','");
  expect_error("max(x, 1, 2)", 8, "takes 2 arguments");
  expect_error("sqrt(x, 2)", 6, "takes 1 argument");
  expect_error("x < 1", 0, "a comparison is a condition");
  expect_error("(x < 1) + 1", 0, "a comparison is a condition");
  expect_error("x < 1 < 2", 6, "do not chain");
  expect_error("x ? 1 : 2", 0, "must be a comparison");
  expect_error("x < 1 ? 2", 9, "':' was expected");
  expect_error("2f * x", 1, "no suffix");
  expect_error("a = 1; a = 2; a", 7, "already defined");
  expect_error("x = 1; x", 0, "reserved");
  expect_error("sin = 1; sin", 0, "reserved");
  expect_error("a = 1;", 6, "the last part must be the result");
  expect_error("b + 1; ", 0, "unknown name 'b'");
  expect_error("x)", 1, "after the result");
  expect_error("x # 1", 2, "after the result");
  expect_error("(x", 2, "')' was expected");
  expect_error(".", 0, "no digits");
  expect_error("1e999", 0, "too large");
  expect_error("x\x01", 1, "after the result");
  expect_error(std::string(expr::max_source_bytes + 1, ' '), expr::max_source_bytes, "the limit");
  // Each '(' opens two levels (a value, and the unary inside it): the 257th level is at the 128th '('.
  expect_error(std::string(1000, '(') + "x" + std::string(1000, ')'), std::size_t(expr::max_depth) / 2,
               "nests deeper");
}

TEST(ExpressionLanguage, TheCppFormComputesTheSameProgram) {
  const std::string cpp = expr::to_cpp(expr::parse("s = sin(x); x > 1 ? s : -s"));
  EXPECT_EQ(cpp,
            "const T v0 = x;\nconst T v1 = sin(v0);\nconst T v2 = x;\nconst T v3 = T(1.0);\nconst bool v4 = "
            "v2 > v3;\n"
            "const T v7 = -v1;\nconst T v8 = v4 ? v1 : v7;\nreturn v8;");
}

// A fuzz run: random and mutated programs never crash the parser (the test binary
// cdl_expression_fuzz runs this under AddressSanitizer and UBSan), and every program the parser
// accepts lowers to IR that libNVVM accepts: the compiler never sees text the parser did not make.
TEST(ExpressionLanguage, FuzzedInputNeverCrashesAndWhatParsesCompiles) {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  const std::string alphabet =
      "x T sin cos exp sqrt min max ( ) , ; = + - * / < > ! ? : . 0 1 2 5 e a b _ \t\n#@\"";
  std::vector<std::string> seeds;
  for (const op_info& o : map_op_catalogue) seeds.emplace_back(o.source);
  seeds.push_back("s = sin(x); c = cos(x); x < 1 ? min(s, c) : max(s * c, 2.5e-1)");
  int parsed = 0, compiled = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    if (round % 2) {  // a seed, mutated: bytes replaced, inserted, deleted
      text = seeds[next() % seeds.size()];
      for (int m = int(next() % 4); m >= 0; --m) {
        const std::size_t at = text.empty() ? 0 : next() % text.size();
        const char c = char(next() % 4 == 0 ? next() % 256 : alphabet[next() % alphabet.size()]);
        switch (next() % 3) {
          case 0:
            if (!text.empty()) text[at] = c;
            break;
          case 1: text.insert(text.begin() + std::ptrdiff_t(at), c); break;
          default:
            if (!text.empty()) text.erase(at, 1);
        }
      }
    } else {  // random tokens
      for (int t = int(next() % 24); t >= 0; --t) text += alphabet[next() % alphabet.size()];
    }
    try {
      const expr::program p = expr::parse(text);
      ++parsed;
      (void)expr::evaluate(p, 0.5);
      (void)expr::to_cpp(p);
      const jit::nvvm_module m = expression_jit::map_module(
          p, round % 4 == 1 ? dtype::f64 : dtype::f32, round % 3 ? map_form::vec : map_form::scalar, "fuzz");
      if (compiled < 25 && parsed % 7 == 0) {  // libNVVM takes milliseconds: a sample
        const jit::compiled ptx = jit::compile_nvvm(m, 90);
        const std::string code(ptx.image.code.begin(), ptx.image.code.end());
        EXPECT_NE(code.find(".entry"), std::string::npos) << text << ": no kernel in the PTX";
        for (const auto& [expression, mangled] : ptx.image.kernel_names)
          EXPECT_NE(code.find(mangled), std::string::npos) << text << ": no " << expression << " in the PTX";
        ++compiled;
      }
    } catch (const expr::syntax_error&) {
    }
  }
  EXPECT_GT(parsed, 500);  // the mutations keep many programs valid, so the lowering is exercised
  EXPECT_EQ(compiled, 25);
}

TEST(ExpressionJit, EveryCatalogueOpCompilesToTheSkeletonsLoadsInEachForm) {
  for (const expression_jit::tier level : {expression_jit::tier::optimised, expression_jit::tier::baseline})
    for (const dtype t : {dtype::f32, dtype::f64})
      for (const map_form form : {map_form::scalar, map_form::vec})
        for (const op_info& o : map_op_catalogue) {
          const jit::nvvm_module m =
              expression_jit::map_module(expr::parse(o.source), t, form, std::string(o.name), level);
          const jit::compiled ptx = jit::compile_nvvm(m, 90);
          const std::string text(ptx.image.code.begin(), ptx.image.code.end());
          // Loads through the non-coherent cache, as strategy 01's kernels make of const __restrict__:
          // 16 bytes at a time in the vec form.
          const std::string load = form == map_form::scalar
                                       ? (t == dtype::f32 ? "ld.global.nc.f32" : "ld.global.nc.f64")
                                       : (t == dtype::f32 ? "ld.global.nc.v4.f32" : "ld.global.nc.v2.f64");
          EXPECT_NE(text.find(load), std::string::npos) << o.name;
          EXPECT_NE(text.find(".maxntid 256, 1, 1"), std::string::npos) << o.name;
          const jit::compiled* parts[] = {&ptx};
          const jit::linked cubin = jit::link(parts, 90);
          EXPECT_GT(cubin.image.code.size(), 0u);
          EXPECT_EQ(cubin.image.kernel_names.count(form == map_form::vec ? "map_vec" : "map_scalar"), 1u);
        }
}

// What the op libNVVM compiles computes: `@op` of 08's module, the straight-line IR the lowering
// writes (fadd fsub fmul fdiv, fcmp with C's predicates, select, the libdevice calls), run here
// instruction by instruction in float64 on the host.
double run_op_ir(const std::string& module, double x) {
  const std::size_t from = module.find("@op("), to = module.find("\n}", from);
  std::istringstream body(module.substr(from, to - from));
  std::map<std::string, double> v{{"%x", x}};
  std::map<std::string, bool> truth;
  auto value = [&](std::string operand) {
    if (!operand.empty() && operand.back() == ',') operand.pop_back();
    if (operand.rfind("0x", 0) == 0) {  // a double's bits, as LLVM writes a constant
      const std::uint64_t bits = std::stoull(operand.substr(2), nullptr, 16);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    if (operand == "-0.0") return -0.0;
    if (!v.count(operand)) throw std::runtime_error("IR: no value " + operand);
    return v.at(operand);
  };
  std::string line;
  std::getline(body, line);  // the definition
  while (std::getline(body, line)) {
    std::istringstream in(line);
    std::string name, eq, op, type, a, b, c, d;
    in >> name;
    if (name == "ret") {
      in >> type >> a;
      return value(a);
    }
    in >> eq >> op;
    if (op == "fadd" || op == "fsub" || op == "fmul" || op == "fdiv") {
      in >> type >> a >> b;
      const double l = value(a), r = value(b);
      v[name] = op == "fadd" ? l + r : op == "fsub" ? l - r : op == "fmul" ? l * r : l / r;
    } else if (op == "fcmp") {
      std::string pred;
      in >> pred >> type >> a >> b;
      const double l = value(a), r = value(b);
      truth[name] = pred == "olt"   ? l < r
                    : pred == "ole" ? l <= r
                    : pred == "ogt" ? l > r
                    : pred == "oge" ? l >= r
                    : pred == "oeq" ? l == r
                    : pred == "une" ? !(l == r)
                                    : throw std::runtime_error("IR: predicate " + pred);
    } else if (op == "select") {
      in >> type >> a >> b >> c >> d >> eq;  // i1 %c, T %a, T %b
      if (a.back() == ',') a.pop_back();
      v[name] = truth.at(a) ? value(c) : value(eq);
    } else if (op == "call") {
      in >> type >> a;  // @__nv_sinf(float %n3)
      const std::string fn = a.substr(0, a.find('(')), arg = line.substr(line.rfind(' ') + 1);
      const double u = value(arg.substr(0, arg.find(')')));
      v[name] = fn.find("sin") != std::string::npos    ? std::sin(u)
                : fn.find("cos") != std::string::npos  ? std::cos(u)
                : fn.find("exp") != std::string::npos  ? std::exp(u)
                : fn.find("sqrt") != std::string::npos ? std::sqrt(u)
                                                       : throw std::runtime_error("IR: call " + fn);
    } else {
      throw std::runtime_error("IR: instruction " + op + " in `" + line + "`");
    }
  }
  throw std::runtime_error("IR: @op has no ret");
}

// 08's IR, read back, against the tests' evaluator of the language (expression_oracle.hpp), for the
// language's constructs, the catalogue and random programs, in both types.
TEST(ExpressionJit, TheIrLibNvvmCompilesComputesTheOp) {
  std::vector<std::string> texts(std::begin(test::language_constructs), std::end(test::language_constructs));
  for (const op_info& o : map_op_catalogue) texts.emplace_back(o.source);
  for (const char* text : {"-x + 1", "2 - x - 4", "8 / x * 2", "2 <= x ? 1 : 0", "3 != x ? -x : x"})
    texts.emplace_back(text);
  std::uint64_t state = 0x243f6a8885a308d3ull;
  for (int i = 0; i < 300; ++i)
    texts.push_back("t = " + test::random_value(state, 2, false) + "; " +
                    test::random_value(state, 1 + i % 5));
  int compared = 0;
  for (const std::string& text : texts)
    for (const dtype t : {dtype::f64, dtype::f32}) {
      const std::string ir = expression_jit::map_module(expr::parse(text), t, map_form::scalar, "op").ir;
      for (const double x : {-2.5, -0.75, 0.3, 1.0, 2.25}) {
        const oracle::value want = oracle::at(text, x, oracle::double_edge);
        if (want.fragile) continue;
        const double got = run_op_ir(ir, x);
        ++compared;
        // the f32 module's constants are the floats nearest the text's: a float's rounding apart
        EXPECT_TRUE(oracle::agrees(got, want, t == dtype::f64 ? 0x1p-52 : 0x1p-23, 16))
            << text << " (" << to_string(t) << ") at x = " << x << ": " << got << ", the oracle " << want.v;
      }
    }
  EXPECT_GT(compared, 2500);
}

// Each comparison at the point where its two sides are equal, worked by hand: the one place where
// < and <=, > and >= part (the oracle calls it too near to tell, so only a hand-worked value sees it).
TEST(ExpressionJit, EachComparisonAtEqualityIsWhatItSays) {
  for (const auto& [text, want] : std::vector<std::pair<const char*, double>>{{"x < 1 ? 2 : 3", 3},
                                                                              {"x <= 1 ? 2 : 3", 2},
                                                                              {"x > 1 ? 2 : 3", 3},
                                                                              {"x >= 1 ? 2 : 3", 2},
                                                                              {"x == 1 ? 2 : 3", 2},
                                                                              {"x != 1 ? 2 : 3", 3},
                                                                              {"1 < x ? 2 : 3", 3},
                                                                              {"1 >= x ? 2 : 3", 2}})
    for (const dtype t : {dtype::f64, dtype::f32})
      EXPECT_EQ(run_op_ir(expression_jit::map_module(expr::parse(text), t, map_form::scalar, "op").ir, 1.0),
                want)
          << text << " (" << to_string(t) << ") at x = 1";
}

TEST(ExpressionJit, StagedFormIsRefused) {
  EXPECT_THROW(expression_jit::map_module(expr::parse("x"), dtype::f32, map_form::staged, "x"), error);
}

// The baseline tier compiles at -opt=0 (jit.cpp: nvvm_options), so the lowering itself makes the
// optimiser's two rewrites that change the machine code.
std::string op_ir(const std::string& text, dtype t = dtype::f32) {
  const std::string ir = expression_jit::map_module(expr::parse(text), t, map_form::vec, "op").ir;
  const std::size_t begin = ir.find("@op("), end = ir.find("\n}\n", begin);
  return ir.substr(begin, end - begin);
}
std::string ptx_of(const std::string& text, dtype t, map_form form) {  // the baseline tier's: -opt=0
  const jit::compiled c = jit::compile_nvvm(
      expression_jit::map_module(expr::parse(text), t, form, "op", expression_jit::tier::baseline), 90);
  return {c.image.code.begin(), c.image.code.end()};
}
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ExpressionJit, ADivisionByAPowerOfTwoIsAMultiplication) {
  for (const dtype t : {dtype::f32, dtype::f64}) {
    EXPECT_EQ(count(op_ir("x / 2", t), "fdiv"), 0u);
    EXPECT_EQ(count(op_ir("x / 2", t), "fmul"), 1u);
    EXPECT_EQ(count(op_ir("h = 0.25; x / h", t), "fdiv"), 0u);  // through a temporary
    EXPECT_EQ(count(op_ir("x / -8", t), "fdiv"), 0u);
    for (const char* inexact : {"x / 3", "x / 0", "x / x", "x / 1e300"})  // 1e300: no float power of two
      EXPECT_EQ(count(op_ir(inexact, t), "fdiv"), 1u) << inexact;
    for (const map_form form : {map_form::scalar, map_form::vec})
      EXPECT_EQ(count(ptx_of("x > 0.5 ? 2 * x : x / 2", t, form), "div."), 0u);  // the threshold op
  }
  const char* two_to_127 = "x / 1.7014118346046923e38";  // its reciprocal is a float only if denormal
  EXPECT_EQ(count(op_ir(two_to_127), "fdiv"), 1u);
  EXPECT_EQ(count(op_ir(two_to_127, dtype::f64), "fdiv"), 0u);
}

TEST(ExpressionJit, ARepeatedExpressionIsComputedOnce) {
  EXPECT_EQ(count(op_ir("sin(x) * sin(x)"), "call"), 1u);
  EXPECT_EQ(count(op_ir("s = sin(x); s * s"), "call"), 1u);
  EXPECT_EQ(count(op_ir("(x + 1) * (x + 1) - (1 + x)"), "fadd"), 2u);  // x + 1 and 1 + x are two texts
  EXPECT_EQ(count(op_ir("min(x, 1) + min(x, 1)"), "fcmp"), 1u);
  EXPECT_EQ(count(op_ir("sin(x) + cos(x)"), "call"), 2u);
}

TEST(ExpressionJit, TheOpIsInlinedAtOptZero) {  // alwaysinline is honoured without the optimiser
  for (const op_info& o : map_op_catalogue)
    for (const map_form form : {map_form::scalar, map_form::vec}) {
      const std::string ptx = ptx_of(std::string(o.source), dtype::f32, form);
      EXPECT_EQ(count(ptx, "call"), 0u) << o.name;
      EXPECT_EQ(count(ptx, ".func"), 0u) << o.name;
    }
}

TEST(ExpressionJit, LibdeviceIsLinkedOnlyWhenCalled) {
  EXPECT_FALSE(
      expression_jit::map_module(expr::parse("x * x"), dtype::f32, map_form::vec, "square").needs_libdevice);
  EXPECT_TRUE(
      expression_jit::map_module(expr::parse("sqrt(x)"), dtype::f32, map_form::vec, "root").needs_libdevice);
}

}  // namespace
}  // namespace cdl
