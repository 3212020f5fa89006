// 08 - Expression JIT: the op is parsed and lowered to NVVM IR by this program, with no C++
//      compiler at run time.
//
// Idea.    06 and 07 hand C++ to NVRTC: a front end parses headers and templates, then an
//          optimiser and code generator (libNVVM) emit PTX, and ptxas machine code. Numba,
//          CUDA.jl and query engines skip the C++: they own a small language, lower it to NVVM
//          IR (LLVM IR as NVIDIA's compiler takes it) and hand that to libNVVM, and the driver
//          assembles the PTX (ptxas) as the runtime loads it. The language here is
//          common/expression.hpp's (numbers, x, arithmetic, comparisons, ?:, temporaries, sin cos
//          exp sqrt min max, from libdevice, linked lazily); the catalogue's ops are written in it
//          and a user's --expr in it compiles this way. The kernels around the op are the map
//          skeleton's (scalar, and vec: 16-byte loads, one k loop for a thread's values), in IR.
// Cost.    Per new op: parsing (microseconds), libNVVM, the driver's ptxas at the load (a
//          process's first also loads the driver's PTX compiler). Owning its language, the
//          lowering writes the IR the optimiser would leave, so the variant `baseline` skips the
//          optimiser (-opt=0): libNVVM only selects instructions and ptxas (which contracts,
//          folds and schedules) makes nearly -O3's code, a language runtime's first tier (the
//          JIT section and the map benchmarks give what it saves and costs). The PTX is cached
//          like 06's CUBIN; the JIT section times each stage, `cdl_run --expr '...'
//          --compile-times` on your machine. At run time: nothing. The price: the skeleton again,
//          in IR, kept equal to the C++ one by the tests and benchmarks, and a small language.
// Use it   when ops come at run time (users, generated code: a new op per request), compile
//          latency matters and they fit a language you can lower yourself; else 06 or 07.
// See it.  `cdl_run --expr 's = sin(x); s * s' --dump-source` prints the IR, `--ptx k.ptx` the PTX
//          (ld.global.nc.v4.f32, as 01's); `ptxas -arch=sm_90 k.ptx` its SASS (LDG.E.128). The
//          driver assembles it whole-program, as nvcc the others; nvJitLink's ptxas assembles
//          relocatable code (as -rdc), which gave the vec kernel other registers and speeds.
// Run it.  `cdl_run --strategy 08_expression_jit/vec --expr 's = sin(x); s * s + 2 * x' --n 2^24`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/08_expression_jit.cu. This is the general form: the
//          map skeleton's kernels lowered to NVVM IR around a parsed expression, so that 08 runs the loop the
//          other strategies run and a difference in time is the call.
#include "strategies/suite/expression_jit.hpp"

#include "common/jit_cache.hpp"
#include "common/skeletons/map.cuh"

#include <nvvm.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace cdl::expression_jit {
namespace {

// The IR's element type, its 16-byte vector, and the libdevice function for each math call.
struct ir_type {
  const char* t;  // "float"
  const char* v;  // "<4 x float>"
  int lanes;
  const char* suffix;  // libdevice's float functions end in f: __nv_sinf
};
ir_type type_of(dtype t) {
  return t == dtype::f32 ? ir_type{"float", "<4 x float>", 4, "f"} : ir_type{"double", "<2 x double>", 2, ""};
}

// A number as LLVM writes a floating constant: the bits of the double holding the value, which
// for float must be the value rounded to float (as T(2) rounds in C++).
std::string constant(double v, dtype t) {
  if (t == dtype::f32) v = double(float(v));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIX64, bits);
  return buf;
}

// The value of a node that is a number, seen through temporaries and signs (`-8` is negate(8)).
std::optional<double> number(const expr::program& p, int i) {
  const expr::node& n = p.nodes[std::size_t(i)];
  if (n.op == expr::kind::number) return n.value;
  if (n.op == expr::kind::temporary) return number(p, p.bindings[std::size_t(n.value)].value);
  if (n.op == expr::kind::negate)
    if (const std::optional<double> v = number(p, n.a)) return -*v;
  return std::nullopt;
}

// 1 / v when v is a power of two whose reciprocal is a normal number of type t: dividing by v and
// multiplying by it then give the same result, bit for bit.
std::optional<double> exact_reciprocal(double v, dtype t) {
  if (t == dtype::f32) v = double(float(v));
  int e = 0;
  if (v == 0 || !std::isfinite(v) || std::fabs(std::frexp(v, &e)) != 0.5) return std::nullopt;
  const double r = 1 / v;
  if (t == dtype::f32 ? !std::isnormal(float(r)) : !std::isnormal(r)) return std::nullopt;
  return r;
}

// The op: one SSA value per distinct node of the program, in the order the parser made them
// (operands first), as `define internal T @op(T %x)`. The baseline tier compiles it at -opt=0
// (jit.cpp's nvvm_options), so the two rewrites of the optimiser that change the machine code are
// made here: a repeated expression is computed once (`sin(x) * sin(x)`, as a temporary would), and
// a division by a power of two is a multiplication (`x / 2`: an IEEE division is a subroutine in
// machine code). The rest (contracting a multiply and an add into an FMA, folding constants,
// scheduling) ptxas does to the PTX, as it does to nvcc's.
std::string lower_op(const expr::program& p, dtype t) {
  const ir_type ty = type_of(t);
  const std::string T = ty.t;
  std::vector<std::string> value(p.nodes.size());  // how each node is named in the IR
  std::map<std::string, std::string> named;        // instruction -> the value that holds it
  std::string body;
  auto emit = [&](const std::string& instruction, const std::string& name) {
    const auto [it, added] = named.emplace(instruction, name);
    if (added) body += "  " + name + " = " + instruction + "\n";
    return it->second;
  };
  static constexpr const char* arithmetic[] = {"fadd", "fsub", "fmul", "fdiv"};
  // C++'s comparisons: ordered (false if either is NaN), but != is true if either is NaN.
  static constexpr const char* predicate[] = {"olt", "ole", "ogt", "oge", "oeq", "une"};
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const expr::node& n = p.nodes[i];
    const std::string a = n.a >= 0 ? value[std::size_t(n.a)] : "",
                      b = n.b >= 0 ? value[std::size_t(n.b)] : "", name = "%n" + std::to_string(i);
    switch (n.op) {
      case expr::kind::number: value[i] = constant(n.value, t); break;
      case expr::kind::x: value[i] = "%x"; break;
      case expr::kind::temporary:
        value[i] = value[std::size_t(p.bindings[std::size_t(n.value)].value)];
        break;
      case expr::kind::negate:
        value[i] = emit("fsub " + T + " -0.0, " + a, name);
        break;  // LLVM 7 has no fneg; -0 - a is exact
      case expr::kind::divide:
        if (const std::optional<double> d = number(p, n.b))
          if (const std::optional<double> r = exact_reciprocal(*d, t)) {
            value[i] = emit("fmul " + T + " " + a + ", " + constant(*r, t), name);
            break;
          }
        [[fallthrough]];
      case expr::kind::add:
      case expr::kind::subtract:
      case expr::kind::multiply:
        value[i] = emit(
            std::string(arithmetic[int(n.op) - int(expr::kind::add)]) + " " + T + " " + a + ", " + b, name);
        break;
      case expr::kind::less:
      case expr::kind::less_equal:
      case expr::kind::greater:
      case expr::kind::greater_equal:
      case expr::kind::equal:
      case expr::kind::not_equal:
        value[i] = emit(std::string("fcmp ") + predicate[int(n.op) - int(expr::kind::less)] + " " + T + " " +
                            a + ", " + b,
                        name);
        break;
      case expr::kind::select:
        value[i] =
            emit("select i1 " + a + ", " + T + " " + b + ", " + T + " " + value[std::size_t(n.c)], name);
        break;
      case expr::kind::min:  // ops.cuh: min(a, b) = b < a ? b : a; max(a, b) = a < b ? b : a
      case expr::kind::max: {
        const bool is_min = n.op == expr::kind::min;
        const std::string c =
            emit("fcmp olt " + T + " " + (is_min ? b + ", " + a : a + ", " + b), "%c" + std::to_string(i));
        value[i] = emit("select i1 " + c + ", " + T + " " + b + ", " + T + " " + a, name);
        break;
      }
      default:  // sin, cos, exp, sqrt
        value[i] = emit("call " + T + " @__nv_" + std::string(expr::function_name(n.op)) + ty.suffix + "(" +
                            T + " " + a + ")",
                        name);
    }
  }
  std::string out = "define internal " + T + " @op(" + T + " %x) alwaysinline {\n" + body + "  ret " + T +
                    " " + value[std::size_t(p.result)] + "\n}\n";
  for (expr::kind f : {expr::kind::sin, expr::kind::cos, expr::kind::exp, expr::kind::sqrt})
    if (p.uses(f))
      out += "declare " + T + " @__nv_" + std::string(expr::function_name(f)) + ty.suffix + "(" + T + ")\n";
  return out;
}

// The IR below is written a line of IR to a line of source: the formatter leaves it alone.
// clang-format off
// map_apply (skeletons/map.cuh): the sum of op(e + T(j) * T(map_delta)) over j < k.
std::string lower_apply(dtype t) {
  const std::string T = type_of(t).t, delta = constant(map_delta, t);
  return "define internal " + T + " @apply(" + T + " %e, i32 %k) alwaysinline {\n"
         "entry:\n"
         "  %any = icmp sgt i32 %k, 0\n"
         "  br i1 %any, label %loop, label %done\n"
         "loop:\n"
         "  %j = phi i32 [0, %entry], [%j.next, %loop]\n"
         "  %acc = phi " + T + " [0.0, %entry], [%acc.next, %loop]\n"
         "  %jt = sitofp i32 %j to " + T + "\n"
         "  %step = fmul " + T + " %jt, " + delta + "\n"
         "  %arg = fadd " + T + " %e, %step\n"
         "  %f = call " + T + " @op(" + T + " %arg)\n"
         "  %acc.next = fadd " + T + " %acc, %f\n"
         "  %j.next = add i32 %j, 1\n"
         "  %more = icmp slt i32 %j.next, %k\n"
         "  br i1 %more, label %loop, label %done, !llvm.loop !6\n"
         "done:\n"
         "  %sum = phi " + T + " [0.0, %entry], [%acc.next, %loop]\n"
         "  ret " + T + " %sum\n"
         "}\n";
}

// The kernels' parameters, as the skeleton's: (const T* __restrict__ x, T* __restrict__ y,
// size_t n, int k), the pointers in the global address space.
std::string params(dtype t) {
  const std::string P = std::string(type_of(t).t) + " addrspace(1)*";
  return "(" + P + " noalias readonly %x, " + P + " noalias %y, i64 %n, i32 %k)";
}
std::string signature(dtype t) {
  const std::string P = std::string(type_of(t).t) + " addrspace(1)*";
  return "void (" + P + ", " + P + ", i64, i32)*";
}

// Thread and block indexes as 64-bit values, at the top of a kernel.
const char* indexes =
    "  %tid.32 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
    "  %bid.32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
    "  %bdim.32 = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n"
    "  %tid = zext i32 %tid.32 to i64\n"
    "  %bid = zext i32 %bid.32 to i64\n"
    "  %bdim = zext i32 %bdim.32 to i64\n";

// elementwise_scalar: i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = apply(x[i]).
std::string lower_scalar_kernel(dtype t) {
  const std::string T = type_of(t).t, P = T + " addrspace(1)*";
  return "define void @map_scalar" + params(t) + " {\n"
         "entry:\n" + std::string(indexes) +
         "  %base = mul i64 %bid, %bdim\n"
         "  %i = add i64 %base, %tid\n"
         "  %in = icmp ult i64 %i, %n\n"
         "  br i1 %in, label %body, label %exit\n"
         "body:\n"
         "  %px = getelementptr " + T + ", " + P + " %x, i64 %i\n"
         "  %v = load " + T + ", " + P + " %px, align " + std::to_string(size_of(t)) +
             ", !invariant.load !0\n"
         "  %r = call " + T + " @apply(" + T + " %v, i32 %k)\n"
         "  %py = getelementptr " + T + ", " + P + " %y, i64 %i\n"
         "  store " + T + " %r, " + P + " %py, align " + std::to_string(size_of(t)) + "\n"
         "  br label %exit\n"
         "exit:\n"
         "  ret void\n"
         "}\n";
}

// The skeleton's map_vec_body: each thread loads vecs_per_thread 16-byte vectors, block-strided,
// before it uses any, runs one k loop for all of its values (map_apply_fused), and stores them;
// whole vectors only, as the geometry launches it: the same loop as the C++ skeleton's, so that
// 08 and the template differ in how the op is compiled, not in the loop around it.
std::string lower_vec_kernel(dtype t) {
  const ir_type ty = type_of(t);
  const std::string T = ty.t, V = ty.v, PV = V + " addrspace(1)*", P = T + " addrspace(1)*";
  const int vecs = skeleton::vecs_per_thread;
  // Written as the optimiser would leave it (the baseline tier skips it): a shift for the division
  // by the lanes, no multiplication by one or addition of zero for the first vector.
  int shift = 0;
  while ((1 << shift) < ty.lanes) ++shift;
  std::string k = "define void @map_vec" + params(t) + " {\n" + "entry:\n" + indexes +
                  "  %nvec = lshr i64 %n, " + std::to_string(shift) + "\n" +
                  (vecs == 1 ? "  %base = mul i64 %bid, %bdim\n"
                             : "  %stride = mul i64 %bdim, " + std::to_string(vecs) + "\n" +
                                   "  %base = mul i64 %bid, %stride\n") +
                  "  %i0 = add i64 %base, %tid\n"
                  "  %xv = bitcast " + P + " %x to " + PV + "\n" +
                  "  %yv = bitcast " + P + " %y to " + PV + "\n";
  std::string previous = "entry";
  for (int u = 0; u < vecs; ++u) {  // every load issued before any use: vecs loads in flight
    const std::string s = std::to_string(u);
    if (u > 0)
      k += "  %off" + s + " = mul i64 %bdim, " + s + "\n" +
           "  %i" + s + " = add i64 %i0, %off" + s + "\n";
    k += "  %c" + s + " = icmp ult i64 %i" + s + ", %nvec\n" +
         "  br i1 %c" + s + ", label %load" + s + ", label %loaded" + s + "\n" +
         "load" + s + ":\n" +
         "  %p" + s + " = getelementptr " + V + ", " + PV + " %xv, i64 %i" + s + "\n" +
         "  %l" + s + " = load " + V + ", " + PV + " %p" + s + ", align 16, !invariant.load !0\n" +
         "  br label %loaded" + s + "\n" +
         "loaded" + s + ":\n" +
         "  %v" + s + " = phi " + V + " [undef, %" + previous + "], [%l" + s + ", %load" + s + "]\n";
    previous = "loaded" + s;
  }
  // One k loop for all the thread's values (map_apply's loop, fused across them): each value keeps
  // its own sum, added in the same order, so the results are map_apply's; the loop body is the
  // op once per value, which is all libNVVM and ptxas have to optimise.
  std::vector<std::string> lanes;
  for (int u = 0; u < vecs; ++u)
    for (int lane = 0; lane < ty.lanes; ++lane) {
      const std::string l = std::to_string(u) + "." + std::to_string(lane);
      k += "  %e" + l + " = extractelement " + V + " %v" + std::to_string(u) + ", i32 " +
           std::to_string(lane) + "\n";
      lanes.push_back(l);
    }
  k += "  %any = icmp sgt i32 %k, 0\n"
       "  br i1 %any, label %loop, label %sums\n"
       "loop:\n"
       "  %j = phi i32 [0, %loaded" + std::to_string(vecs - 1) + "], [%j.next, %loop]\n";
  const std::string before_loop = "%loaded" + std::to_string(vecs - 1);
  for (const std::string& l : lanes)
    k += "  %acc" + l + " = phi " + T + " [0.0, " + before_loop + "], [%next" + l + ", %loop]\n";
  k += "  %jt = sitofp i32 %j to " + T + "\n" +
       "  %step = fmul " + T + " %jt, " + constant(map_delta, t) + "\n";
  for (const std::string& l : lanes)
    k += "  %arg" + l + " = fadd " + T + " %e" + l + ", %step\n" +
         "  %f" + l + " = call " + T + " @op(" + T + " %arg" + l + ")\n" +
         "  %next" + l + " = fadd " + T + " %acc" + l + ", %f" + l + "\n";
  k += "  %j.next = add i32 %j, 1\n"
       "  %more = icmp slt i32 %j.next, %k\n"
       "  br i1 %more, label %loop, label %sums, !llvm.loop !8\n"
       "sums:\n";
  for (const std::string& l : lanes)
    k += "  %r" + l + " = phi " + T + " [0.0, " + before_loop + "], [%next" + l + ", %loop]\n";
  for (int u = 0; u < vecs; ++u) {
    const std::string s = std::to_string(u);
    k += "  br i1 %c" + s + ", label %store" + s + ", label %stored" + s + "\n" + "store" + s + ":\n";
    std::string w = "undef";
    for (int lane = 0; lane < ty.lanes; ++lane) {
      const std::string l = s + "." + std::to_string(lane);
      k += "  %w" + l + " = insertelement " + V + " " + w + ", " + T + " %r" + l + ", i32 " +
           std::to_string(lane) + "\n";
      w = "%w" + l;
    }
    k += "  %q" + s + " = getelementptr " + V + ", " + PV + " %yv, i64 %i" + s + "\n" +
         "  store " + V + " " + w + ", " + PV + " %q" + s + ", align 16\n" +
         "  br label %stored" + s + "\n" + "stored" + s + ":\n";
  }
  return k + "  ret void\n}\n";
}

}  // namespace

jit::nvvm_module map_module(const expr::program& p, dtype t, map_form form, const std::string& name,
                            tier level) {
  if (form != map_form::scalar && form != map_form::vec)
    throw error("08_expression_jit has no " + std::string(to_string(form)) + " form");
  // One kernel per module: the form the launch needs, so a new op compiles one kernel, not two.
  const std::string kernel = form == map_form::vec ? "map_vec" : "map_scalar";
  const std::string sig = signature(t), block = std::to_string(skeleton::elementwise_block);
  std::string ir =
      "; " + name + ": strategy 08, generated at run time\n"
      "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-"
      "f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n"
      "target triple = \"nvptx64-nvidia-cuda\"\n\n"
      "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
      "declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
      "declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n\n" +
      lower_op(p, t) + "\n" +
      (form == map_form::vec ? lower_vec_kernel(t) : lower_apply(t) + "\n" + lower_scalar_kernel(t)) +
      // A kernel, and __launch_bounds__(elementwise_block) as the skeleton's kernels declare it.
      "\n!nvvm.annotations = !{!1, !2}\n"
      "!0 = !{}\n"
      "!1 = !{" + sig + " @" + kernel + ", !\"kernel\", i32 1}\n" +
      "!2 = !{" + sig + " @" + kernel + ", !\"maxntidx\", i32 " + block + "}\n" +
      "!nvvmir.version = !{!5}\n"
      "!5 = !{i32 2, i32 0}\n"
      // The k loops are not unrolled: a runtime trip count unrolled is a copy of the op per step
      // and a remainder loop, which doubles the compile for a kernel that is no faster (the
      // benchmarks set its time beside the template's, unrolled by nvcc).
      "!6 = distinct !{!6, !7}\n"
      "!7 = !{!\"llvm.loop.unroll.disable\"}\n"
      "!8 = distinct !{!8, !7}\n";
  const bool libdevice = p.uses(expr::kind::sin) || p.uses(expr::kind::cos) || p.uses(expr::kind::exp) ||
                         p.uses(expr::kind::sqrt);
  return {name + "_" + std::string(to_string(form)) + ".ll", std::move(ir), {kernel}, libdevice,
          level == tier::optimised};
}

// clang-format on

std::string cache_key(const jit::nvvm_module& m, int arch) {
  std::string key = "cuda-dispatch-lab expression 2 ptx\n" + jit::nvvm_version() + "\nsm_" +
                    std::to_string(arch) + "\noptions";
  for (const std::string& o : jit::nvvm_options(arch, m.optimise)) key += " " + o;
  return key + "\n" + m.ir;
}

jit::module_image compile_uncached(const jit::nvvm_module& m, int arch) {
  jit::module_image ptx = jit::compile_nvvm(m, arch).image;  // the driver assembles it at the load,
  ptx.code.push_back('\0');                                  // and reads PTX as a C string
  return ptx;
}

cudaKernel_t map_kernel(dtype t, map_form form, const jit::op_text& op, tier level) {
  // Found on every launch: a map lookup, as 06's; parsed, compiled and loaded on the first.
  static std::map<std::tuple<tier, dtype, map_form, std::string, std::string>,
                  std::shared_ptr<const jit::loaded>>
      loaded;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  const std::tuple key{level, t, form, op.name, op.source};
  auto found = loaded.find(key);
  if (found == loaded.end()) {
    const jit::nvvm_module m = map_module(jit::program_of(op), t, form, op.name, level);
    const int arch = jit::device_arch();
    found = loaded
                .emplace(key, std::make_shared<const jit::loaded>(jit::process_cache().get(
                                  cache_key(m, arch), [&] { return compile_uncached(m, arch); })))
                .first;
  }
  return found->second->kernel(form == map_form::vec ? "map_vec" : "map_scalar");
}

void launch_map(const map_launch& a, const jit::op_text& op, tier level) {
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  jit::launch_map_kernel(map_kernel(a.type, g.form, op, level), g.grid, a, false);
}

}  // namespace cdl::expression_jit

namespace cdl {

void register_08_expression_jit(registry& r) {
  using expression_jit::tier;
  r.add_map("08_expression_jit", "", [](const map_launch& a) {
    expression_jit::launch_map(a, jit::builtin_op(a.op),
                               tier::optimised);  // ops.cuh's text is in the language
  });
  r.add_map("08_expression_jit", "baseline", [](const map_launch& a) {
    expression_jit::launch_map(a, jit::builtin_op(a.op), tier::baseline);
  });
  r.op_length.push_back({"08_expression_jit", [](const map_launch& a, int steps) {
                           expression_jit::launch_map(a, jit::polynomial_op(steps), tier::optimised);
                         }});
  // A user's op in the language, by each tier.
  r.routes.push_back({"08_expression_jit", "", true,
                      [](const map_launch& a, const jit::op_text& op) {
                        expression_jit::launch_map(a, op, tier::optimised);
                      },
                      nullptr,
                      [](const jit::op_text& op, dtype t, map_form f) {
                        return expression_jit::map_kernel(t, f, op, tier::optimised) != nullptr;
                      }});
  r.routes.push_back(
      {"08_expression_jit", "baseline", true,
       [](const map_launch& a, const jit::op_text& op) { expression_jit::launch_map(a, op, tier::baseline); },
       nullptr,
       [](const jit::op_text& op, dtype t, map_form f) {
         return expression_jit::map_kernel(t, f, op, tier::baseline) != nullptr;
       }});
}

}  // namespace cdl
