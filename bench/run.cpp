// cdl_run: run one registered strategy (or all of them) on one map problem, validate it, time
// it, print a line per strategy and optionally write the result records as JSON. The demo for
// readers of strategies/: pick a file, run its entry, compare with the baseline.
//
//   cdl_run --list
//   cdl_run --strategy 04_function_pointer.symbol/vec --op sine --n 16777216 --k 16 [--json out.json]
//   cdl_run --strategy all --op quadratic --type f64 --n 1e8
//   cdl_run --strategy 11_type_from_address --n 2^24   (a strategy's mechanism alone: quadratic, float)
//
// With --expr, the op is the user's, compiled at run time and timed beside every built-in
// strategy running --op. A program of strategy 08's expression language (common/expression.hpp)
// runs first through strategy 10's three tiers (16's interpreter, then 08's baseline and optimised
// tiers as their compiles finish: the launch each tier served first), then through 08, through 16
// (no compiler: its first launch is the op's first result), and through 06 and 07 as the C++ it
// prints, all validated against the language's float64 interpreter. The tiers compile 08's vec
// kernels, so 08's vec rows then launch what they compiled; with --strategy naming another
// strategy than 10, the tiers do not run and every route's first launch is its own. Any other
// text is taken as C++ (an expression in x of type T, or a function body with `return`) for 06 and 07 alone,
// validated against the same text compiled for the host; the table says why 08 did not run,
// naming the position.
//
//   cdl_run --expr 's = sin(x); s * s + 2 * x' --n 2^26
//   cdl_run --expr 'T y = sin(x); return y * y;' --type f64 --dump-source
//
// With --plugin FILE, a map plugin built ahead of time (strategy 13) is loaded and its kernels
// timed beside the strategies, validated against --op (the op the plugin was built for):
//
//   cdl_run --plugin plugins/cdl_plugin_sine.fatbin --op sine --strategy 01_template_functor/vec
//   (from build/release, where the plugins are built)
#include "common/cli.hpp"
#include "common/inputs.hpp"
#include "common/record.hpp"
#include "common/registry.hpp"
#include "common/skeletons/elementwise.cuh"
#include "strategies/expression_jit.hpp"
#include "strategies/interpreter.hpp"
#include "strategies/tiered_dispatch.hpp"
#include "strategies/plugin.hpp"
#include "strategies/minimal.hpp"
#include "strategies/user_op.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace {

using namespace cdl;

struct options {
  std::string strategy = "all";
  map_problem problem{map_op::quadratic, dtype::f32, std::size_t(1) << 24, 1};
  int repetitions = 30;
  std::uint64_t seed = default_seed;
  std::string json_path;
  bool list = false;
  std::string expr;  // a user's op, for strategies 06 and 07
  int expr_ulps = 16;
  bool dump_source = false;
  std::string ptx_path;        // --ptx: write 08's PTX for --expr and exit
  bool compile_times = false;  // --compile-times: where a new op's compile time goes, then exit
  std::string plugin_path;     // --plugin: a map plugin file (strategy 13) implementing --op
  std::string steps_path;      // --steps: write 16's program for --expr (or --op) and exit
};

void usage(FILE* out) {
  std::fprintf(
      out,
      "usage: cdl_run [--list] [--strategy NAME|all] [--op OP] [--type f32|f64] [--n N] [--k K]\n"
      "               [--reps R] [--seed S] [--json FILE]\n"
      "       cdl_run --expr EXPRESSION [--ulps U] [--dump-source] [--ptx FILE] [--compile-times]\n"
      "       cdl_run --plugin FILE --op OP [--type f32|f64] ...\n"
      "       cdl_run (--expr EXPRESSION | --op OP) --steps FILE\n"
      "  N accepts 1e8 or 2^24 forms. --list prints the registered strategies and ops.\n"
      "  --expr compiles an op of x at run time and times it beside the built-in strategies running\n"
      "  --op. In 08's language (numbers, x, + - * /, comparisons, ?:, name = value; temporaries,\n"
      "  sin cos exp sqrt min max; every number of type T), e.g. 's = sin(x); s * s + 2 * x', it runs\n"
      "  through 06, 07 and 08, checked against the language's float64 interpreter. Other text is C++\n"
      "  (an expression in x of type T, or a body with `return`) for 06 and 07, checked against the\n"
      "  host compiler's build of it. Error allowed: U epsilons per evaluation (default 16).\n"
      "  --dump-source prints 08's NVVM IR and the program 06 compiles, and exits; --ptx FILE\n"
      "  writes 08's PTX, which the driver assembles as it loads it (for the SASS: ptxas\n"
      "  -arch=sm_XY FILE -o k.cubin, then cuobjdump -sass k.cubin), and exits.\n"
      "  --plugin loads FILE, a fatbin or CUBIN built as strategies/plugins/map_plugin.cu builds one\n"
      "  (nvcc -fatbin -DCDL_PLUGIN_OP=OP), and times its kernels beside the strategies, checked\n"
      "  against --op's reference: its op must be --op.\n"
      "  --steps FILE writes 16's program for the op in 08's language (--expr, else --op's text) as\n"
      "  JSON, for a program that loads 16's kernels from plugins/cdl_interpreter.fatbin, and exits.\n");
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw error("option " + arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--list")
        o.list = true;
      else if (arg == "--strategy")
        o.strategy = value();
      else if (arg == "--op")
        o.problem.op = parse_map_op(value());
      else if (arg == "--type")
        o.problem.type = parse_dtype(value());
      else if (arg == "--n")
        o.problem.n = parse_size(value());
      else if (arg == "--k")
        o.problem.k = int(parse_size(value()));
      else if (arg == "--reps")
        o.repetitions = int(parse_size(value()));
      else if (arg == "--seed")
        o.seed = parse_size(value());
      else if (arg == "--json")
        o.json_path = value();
      else if (arg == "--expr") {
        o.expr = value();
        // An empty --expr is a mistake (a shell variable that was not set, say), not "no op".
        if (o.expr.find_first_not_of(" \t\r\n") == std::string::npos)
          throw error("the op is empty: give an expression in x, e.g. --expr 'x * x + 1.0f'");
      } else if (arg == "--ulps")
        o.expr_ulps = int(parse_size(value()));
      else if (arg == "--dump-source")
        o.dump_source = true;
      else if (arg == "--ptx")
        o.ptx_path = value();
      else if (arg == "--compile-times")
        o.compile_times = true;
      else if (arg == "--steps")
        o.steps_path = value();
      else if (arg == "--plugin") {
        o.plugin_path = value();
        plugin::check_loadable(o.plugin_path);  // a file that is not one is refused before any CUDA call
      } else if (arg == "--help" || arg == "-h") {
        usage(stdout);
        std::exit(0);
      } else
        throw error("unknown option '" + arg + "'");
    } catch (const std::logic_error& e) {  // std::stoi/stod and parse_* errors
      throw error(arg + ": " + e.what());
    }
  }
  if (o.problem.k < 1) throw error("--k must be at least 1");
  if (o.repetitions < 1) throw error("--reps must be at least 1");
  if (o.dump_source && o.expr.empty()) throw error("--dump-source needs --expr");
  if (!o.ptx_path.empty() && o.expr.empty()) throw error("--ptx needs --expr");
  if (o.compile_times && o.expr.empty()) throw error("--compile-times needs --expr");
  return o;
}

// One row of the table: a launch on a fixture, validated, then timed.
struct row {
  std::string name;
  const map_fixture* fixture;
  map_launcher launch;
  map_form form;
  std::string strategy, variant, op;
};

run_record run_row(const row& w, const options& o, const environment& env) {
  run_record r;
  r.strategy = w.strategy;
  r.variant = w.variant;
  // The form that runs, which the record names: vec falls back to scalar where n is not a whole
  // number of 16-byte vectors (the fixture's buffers come from cudaMalloc, so they are aligned).
  const map_form ran =
      skeleton::elementwise_launch_geometry(w.form, o.problem.n, size_of(o.problem.type), {}).form;
  if (ran != w.form)
    std::printf("%-44s runs the %s form: n = %zu is not a whole number of 16-byte vectors\n", w.name.c_str(),
                std::string(to_string(ran)).c_str(), o.problem.n);
  r.form = to_string(ran);
  r.workload = "map";
  r.problem = {{"op", w.op},
               {"type", to_string(o.problem.type)},
               {"n", o.problem.n},
               {"k", o.problem.k},
               {"seed", o.seed}};
  r.env = env;
  // The first launch pays whatever a strategy sets up on first use: a JIT compiles and loads.
  const auto start = std::chrono::steady_clock::now();
  w.fixture->launch(w.launch, w.form, nullptr);
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
  r.first_launch_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  r.validation = w.fixture->run_and_validate(w.launch, w.form);
  if (!r.validation.passed) {
    std::printf("%-44s %s (not timed)\n", w.name.c_str(), r.validation.summary().c_str());
    return r;
  }
  r.timing = time_launches([&](cudaStream_t s) { w.fixture->launch(w.launch, w.form, s); },
                           {.warmup = 3, .repetitions = o.repetitions, .flush_l2 = true});
  r.bytes = double(o.problem.min_bytes());
  r.bandwidth_gbs = r.bytes / (r.timing.median_ms * 1e-3) / 1e9;
  r.fraction_of_copy = r.bandwidth_gbs / env.copy_bandwidth_gbs;
  std::printf(
      "%-44s %10.4f ms  (p10 %.4f, p90 %.4f)  %7.0f GB/s  %5.3f of copy  max rel err %-8.2g first launch "
      "%.1f ms\n",
      w.name.c_str(), r.timing.median_ms, r.timing.p10_ms, r.timing.p90_ms, r.bandwidth_gbs,
      r.fraction_of_copy, r.validation.max_rel_error, r.first_launch_ms);
  return r;
}

// NVRTC's time trace (--fdevice-time-trace, a Chrome trace written as FILE.json) of one compile:
// the front end's outermost header files and template instantiations, the two things a program's
// text adds to the front end, each summed and its three largest named. Events nest (a header
// includes headers, an instantiation instantiates), so only those inside no other of their kind count.
std::string front_end_breakdown(const std::filesystem::path& trace) {
  std::ifstream in(trace);
  if (!in) return "no time trace written";
  nlohmann::json doc;
  try {
    in >> doc;  // one compile's trace: the file was removed before it
  } catch (const nlohmann::json::exception& e) {
    return std::string("unreadable time trace: ") + e.what();
  }
  std::string out;
  for (const char* kind : {"Processing Header File", "Instantiating Template Function"}) {
    std::vector<std::tuple<double, double, std::string>> events;  // start, duration, detail
    for (const auto& e : doc.value("traceEvents", nlohmann::json::array()))
      if (e.value("ph", "") == "X" && e.value("name", "") == kind)
        events.emplace_back(e.value("ts", 0.0), e.value("dur", 0.0),
                            e.contains("args") ? e["args"].value("detail", "?") : "?");
    std::sort(events.begin(), events.end());
    std::vector<std::pair<double, std::string>> outermost;
    double open_until = -1;
    for (const auto& [ts, dur, detail] : events)
      if (ts >= open_until) {
        outermost.emplace_back(dur / 1000.0, detail);
        open_until = ts + dur;
      }
    double total = 0;
    for (const auto& [ms, detail] : outermost) total += ms;
    std::sort(outermost.rbegin(), outermost.rend());
    char line[128];
    std::snprintf(line, sizeof line, "%s%s %.0f ms in %zu", out.empty() ? "" : "; ",
                  std::string_view(kind) == "Processing Header File" ? "headers" : "template instantiations",
                  total, outermost.size());
    out += line;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, outermost.size()); ++i) {
      std::string name = outermost[i].second;
      if (name.size() > 48) name = name.substr(0, 45) + "...";
      std::snprintf(line, sizeof line, "%s%s %.0f", i == 0 ? " (" : ", ", name.c_str(), outermost[i].first);
      out += line;
    }
    if (!outermost.empty()) out += ")";
  }
  return out;
}

// Where a new op's compile time goes, route by route, on this machine's CPU (no GPU needed): NVRTC's
// own phases (--time) for 06's vec kernel and for a one-line kernel, and what its front end spent on
// headers and instantiations (its time trace), and 08's stages, with the driver's caches off: a
// new constant in a comment makes each text new, which would not do with them on (NVRTC's cache
// keys on what its front end makes, so a comment alone does not make a new entry).
int compile_times(const options& o, bool in_language, const jit::op_text& user) {
  // The driver's caches (NVRTC's and nvJitLink's) off, before anything starts the driver: the same
  // PTX from another run would otherwise skip ptxas.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::string why;
  const bool gpu = gpu_available(&why);
  const int arch = gpu ? jit::device_arch() : 90;
  using clock = std::chrono::steady_clock;
  const auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / ("cdl_nvrtc_time_" + std::to_string(::getpid()) + ".csv");
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() / ("cdl_nvrtc_trace_" + std::to_string(::getpid()));
  const std::filesystem::path trace_json = trace.string() + ".json";  // NVRTC adds the extension
  // NVRTC's --time table: "file, phase, metric, unit" a line; the phases of one compile.
  auto nvrtc_route = [&](const char* route, const jit::program& p) {
    std::filesystem::remove(csv);
    std::filesystem::remove(trace_json);
    const auto start = clock::now();
    jit::compile(p, arch, jit::code_kind::cubin,
                 {"--time=" + csv.string(), "--fdevice-time-trace=" + trace.string()});
    const double total = ms_since(start);
    std::string phases;
    double in_phases = 0;
    for (const jit::phase& ph : jit::read_nvrtc_time(csv.string())) {
      in_phases += ph.ms;
      char ms[32];
      std::snprintf(ms, sizeof ms, " %.0f", ph.ms);
      phases += (phases.empty() ? "" : ", ") + ph.name + ms;
    }
    std::filesystem::remove(csv);
    std::printf("%-34s %8.1f   %s, outside them %.0f\n", route, total, phases.c_str(), total - in_phases);
    std::printf("%-34s %8s   front end: %s\n", "", "", front_end_breakdown(trace_json).c_str());
    std::filesystem::remove(trace_json);
  };
  std::printf("Where a new op's compile time goes (sm_%d, this machine's CPU; caches off, every text new)\n",
              arch);
  std::printf("%-34s %8s   %s\n", "route", "total ms", "phases, ms");
  // Each compiler is loaded (and its files read) before anything is timed: a process's first
  // compile, loading included, is cdl_bench's jit/first_compile_in_process. So is what a user's
  // first launch finds made already: the GPU's context (the first call that needs one creates it,
  // which would otherwise be counted in the first timed load) and the driver's PTX compiler,
  // loaded with a PTX of its own.
  if (gpu) CDL_CUDA_CHECK(cudaFree(nullptr));
  jit::compile(jit::one_line_program(jit::never_seen_op()), arch, jit::code_kind::cubin);
  if (in_language) {
    const jit::compiled warm = jit::compile_nvvm(
        expression_jit::map_module(expr::parse("sin(x)"), o.problem.type, map_form::scalar, "load"), arch);
    if (gpu) jit::load_now(warm.image, "map_scalar");
  }
  const jit::op_text fresh = jit::never_seen_op();  // its constants make each text below new
  jit::op_text op = user;
  op.source = "/* " + fresh.name + " */ " + op.source;
  const jit::program whole = jit::whole_program(jit::workload::map, o.problem.type, op, int(map_form::vec));
  nvrtc_route("06 NVRTC, vec kernel", whole);
  jit::program fast_compile = whole;
  fast_compile.source = "// " + jit::never_seen_op().name + "\n" + fast_compile.source;  // new text again
  fast_compile.options.push_back(jit::fast_compile_option);
  nvrtc_route("06 NVRTC fast_compile", fast_compile);
  nvrtc_route("NVRTC, a one-line kernel", jit::one_line_program(jit::never_seen_op()));
  {  // 07: the op alone to LTO-IR, then the link (the kernels' LTO-IR, made once, is not counted)
    const jit::compiled kernels =
        jit::compile(jit::lto_skeleton_program(jit::workload::map, o.problem.type, int(map_form::vec)), arch,
                     jit::code_kind::ltoir);
    jit::op_text lto_op = user;
    lto_op.source = "/* " + jit::never_seen_op().name + " */ " + lto_op.source;
    auto t = clock::now();
    const jit::compiled op_ir = jit::compile(jit::lto_op_program(jit::workload::map, o.problem.type, lto_op),
                                             arch, jit::code_kind::ltoir);
    const double op_ms = ms_since(t);
    t = clock::now();
    const jit::compiled* parts[] = {&kernels, &op_ir};
    const jit::linked linked = jit::link(parts, arch, {"-time"});
    const double link_ms = ms_since(t);
    std::string steps;  // nvJitLink's own account: libNVVM to PTX, then ptxas and the link's end
    for (const jit::phase& s : jit::read_nvjitlink_time(linked.info)) {
      char ms[32];
      std::snprintf(ms, sizeof ms, " %.0f", s.ms);
      steps += (steps.empty() ? "" : ", ") + s.name + ms;
    }
    std::printf("%-34s %8.1f   op to LTO-IR (NVRTC) %.0f, link -lto (nvJitLink) %.0f: %s\n",
                "07 LTO, vec kernel", op_ms + link_ms, op_ms, link_ms, steps.c_str());
  }
  if (in_language) {
    for (const expression_jit::tier level :
         {expression_jit::tier::optimised, expression_jit::tier::baseline}) {
      const char* route = level == expression_jit::tier::optimised ? "08 libNVVM, vec kernel"
                                                                   : "08 baseline (-opt=0), vec kernel";
      const auto start = clock::now();  // the IR's first line names the module: new text too
      const jit::nvvm_module m = expression_jit::map_module(expr::parse(o.expr), o.problem.type,
                                                            map_form::vec, jit::never_seen_op().name, level);
      const double lower = ms_since(start);
      auto t = clock::now();
      const jit::module_image ptx = expression_jit::compile_uncached(m, arch);
      const double nvvm = ms_since(t);
      if (gpu) {  // 08 loads its PTX: the driver's ptxas assembles it then
        t = clock::now();
        const float compiler = jit::load_now(ptx, "map_vec");
        const double load = ms_since(t);
        std::printf(
            "%-34s %8.1f   parse and lower %.2f, libNVVM %.0f, load %.0f (the driver's ptxas %.0f, by its "
            "account)\n",
            route, lower + nvvm + load, lower, nvvm, load, compiler);
      } else {
        std::printf(
            "%-34s %8.1f   parse and lower %.2f, libNVVM %.0f; the load (the driver's ptxas) needs a GPU\n",
            route, lower + nvvm, lower, nvvm);
      }
    }
  } else {
    std::printf("08: not in its language\n");
  }
  return 0;
}

// A user's op through strategy 10's three tiers (tiered_expression: 16's interpreter, then 08's
// baseline and optimised tiers as their compiles finish): launches until the optimised tier has run,
// each tier's first launch validated. Prints the launches each tier served and the first result's
// time from the text; returns whether every validation passed.
bool tiered_stream(const map_fixture& f, const jit::op_text& op, map_form form) {
  using tier = tiered_expression::tier;
  std::unique_ptr<tiered_expression> tiers;
  tier ran = tier::interpreter;
  const auto launch = [&](const map_launch& a) {
    if (!tiers) tiers = std::make_unique<tiered_expression>(op);
    ran = tiers->launch(a);
  };
  const auto start = std::chrono::steady_clock::now();
  const auto since = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  };
  f.launch(launch, form, nullptr);
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
  const double first_ms = since().count();
  std::array<int, 3> first{-1, -1, -1};  // the launch each tier first ran
  std::array<double, 3> at_ms{};
  bool passed = true;
  for (int n = 0; first[2] < 0 && since().count() < 60e3; ++n) {
    if (n > 0) f.launch(launch, form, nullptr);
    const tier t = ran;
    if (first[std::size_t(t)] >= 0) continue;
    first[std::size_t(t)] = n;
    at_ms[std::size_t(t)] = since().count();
    // A tier's first launch is followed by one more, validated (on this tier or a later one).
    const validation_result v = f.run_and_validate(launch, form);
    if (!v.passed) std::printf("  after %s: WRONG RESULT: %s\n", to_string(t), v.summary().c_str());
    passed = passed && v.passed;
  }
  std::printf("10_tiered_dispatch/%s [--expr]: first result %.2f ms after the text;",
              std::string(to_string(form)).c_str(), first_ms);
  for (std::size_t t = 0; t < 3; ++t)
    if (first[t] >= 0)
      std::printf(" %s from launch %d (%.1f ms);", to_string(tier(t)), first[t] + 1, at_ms[t]);
  std::printf(" a launch validated as each tier was reached\n");
  if (first[2] < 0) std::printf("  08's optimised tier was not ready within 60 s\n");
  return passed && first[2] >= 0;
}

// 16's program for an op, as a loader of plugins/cdl_interpreter.fatbin needs it: the steps' bytes,
// the numbers, and the slots (which kernel), with the limits that lay out the kernel's argument
// (strategies/interpreter_kernels.cuh's kernel_program: the steps, then the numbers in the element
// type, then the count of steps).
int write_steps(const options& o, const std::optional<expr::program>& program, const std::string& not_in) {
  std::string text = o.expr;
  if (text.empty())
    text = jit::builtin_op(o.problem.op).source;
  else if (!program)
    throw error("--steps: the op is not in 08's language: " + not_in);
  const bytecode::steps s = bytecode::lower(bytecode::encode(expr::parse(text)));
  nlohmann::json steps = nlohmann::json::array();
  for (const bytecode::step& st : s.code) steps.push_back({int(st.f), int(st.code), int(st.b), int(st.c)});
  const nlohmann::json doc{{"schema", "cdl-steps/1"},
                           {"text", text},
                           {"steps", steps},
                           {"constants", s.constants},
                           {"slots", s.slots},
                           {"max_steps", bytecode::max_steps},
                           {"max_constants", bytecode::max_constants},
                           {"max_slots", bytecode::max_slots}};
  write_atomic(o.steps_path, [&](std::ostream& out) { out << doc.dump() << "\n"; });
  std::printf("wrote %s: 16's program for '%s', %zu steps, %d slots\n", o.steps_path.c_str(), text.c_str(),
              s.code.size(), s.slots);
  return 0;
}

int run(const options& o) {
  if (o.list) {
    for (const map_entry& e : get_registry().map) std::printf("%s\n", e.name().c_str());
    std::printf("the mechanism alone, in its smallest form (strategies/minimal.hpp):\n");
    for (const minimal::form* f : minimal::all)
      std::printf("  %-22s strategies/suite/%s:%d\n", f->strategy,
                  std::filesystem::path(f->file).filename().c_str(), f->line);
    std::printf("ops:");
    for (const op_info& op : map_op_catalogue) std::printf(" %s", std::string(op.name).c_str());
    std::printf("\n");
    return 0;
  }
  // A program of the language goes to 06 and 07 as the C++ it prints, so all three compile one op.
  std::optional<expr::program> program;
  std::string not_in_language;
  if (!o.expr.empty()) {
    try {
      program = expr::parse(o.expr);
    } catch (const expr::syntax_error& e) {
      not_in_language = e.what();
    }
  }
  const jit::op_text user{"user", program ? expr::to_cpp(*program) : o.expr};
  const jit::op_text user_expression{"user", o.expr};
  if (!o.expr.empty()) jit::check_op_source(user.source);
  if (!o.ptx_path.empty()) {  // what the driver assembles: `ptxas -arch=sm_XY FILE` makes the same SASS
    if (!program) throw error("--ptx: the op is not in 08's language: " + not_in_language);
    std::string why;
    const int arch = gpu_available(&why) ? jit::device_arch() : 90;
    const jit::module_image image = expression_jit::compile_uncached(
        expression_jit::map_module(*program, o.problem.type, map_form::vec, "user"), arch);
    write_atomic(o.ptx_path, [&](std::ostream& out) {  // the text, without the driver's terminating NUL
      out.write(image.code.data(), std::streamsize(image.code.size() - 1));
    });
    std::printf("wrote %s: 08's vec kernel (map_vec) for sm_%d, as PTX\n", o.ptx_path.c_str(), arch);
    return 0;
  }
  if (o.compile_times) return compile_times(o, program.has_value(), user);
  if (!o.steps_path.empty()) return write_steps(o, program, not_in_language);
  if (o.dump_source) {
    if (program)
      std::printf("%s\n",
                  expression_jit::map_module(*program, o.problem.type, map_form::vec, "user").ir.c_str());
    else
      std::printf("(08_expression_jit: not in its language: %s)\n\n", not_in_language.c_str());
    std::printf("%s", jit::whole_program(jit::workload::map, o.problem.type, user).source.c_str());
    return 0;
  }
  std::vector<const map_entry*> chosen;
  // A strategy's name alone (`11_type_from_address`, not an entry's `.../vec`) runs its mechanism
  // alone (strategies/minimal.hpp): the quadratic op in float, once per element, with whatever it
  // sets up timed too. It is how 11, whose own workload is not the map, is run from here.
  const minimal::form* alone = nullptr;
  for (const minimal::form* f : minimal::all)
    if (f->run && o.strategy == f->strategy) alone = f;
  if (alone) {
    if (o.problem.op != map_op::quadratic || o.problem.type != dtype::f32 || o.problem.k != 1)
      throw error(o.strategy + " runs its mechanism alone: --op quadratic --type f32 --k 1 only");
  } else if (o.strategy == "all") {
    for (const map_entry& e : get_registry().map) chosen.push_back(&e);
  } else {
    chosen.push_back(&find_map_entry(o.strategy));
  }

  std::string why;
  if (!gpu_available(&why)) throw error(why);
  const double copy = measure_copy_bandwidth_gbs(default_copy_bytes());
  const environment env = current_environment(copy);
  std::printf("%s | copy %.0f GB/s | %s%s\n", env.device.name.c_str(), copy, o.problem.describe().c_str(),
              o.expr.empty() ? "" : (" | --expr '" + o.expr + "'").c_str());

  std::vector<row> rows;
  std::unique_ptr<host_op> host_reference;
  std::unique_ptr<map_fixture> user_fixture;
  bool tiered_passed = true;
  if (!o.expr.empty()) {
    std::function<double(double)> reference;
    if (program) {
      reference = [&program](double x) { return expr::evaluate(*program, x); };
    } else {
      std::printf("08_expression_jit/* [--expr]: not run: the op is not in 08's language: %s\n",
                  not_in_language.c_str());
      host_reference = std::make_unique<host_op>(user);
      reference = host_reference->function();
    }
    user_fixture = std::make_unique<map_fixture>(o.problem, o.seed, custom_map_op{reference, o.expr_ulps});
    // First, while the text is new to this process: no tier's compile has been made yet.
    if (program && (o.strategy == "all" || o.strategy.rfind("10_tiered_dispatch", 0) == 0)) {
      tiered_passed = tiered_stream(*user_fixture, user_expression, map_form::vec);
      std::printf(
          "  (08's vec rows below launch the kernels the tiers compiled; --strategy with another\n"
          "   strategy leaves the tiers out, and every route's first launch is its own)\n");
    }
    std::vector<std::pair<std::string, map_launcher>> launchers{
        {"06_nvrtc_jit", [&user](const map_launch& a) { jit::launch_map(nvrtc_jit_build, a, user); }},
        {"07_jit_lto", [&user](const map_launch& a) { jit::launch_map(jit_lto_build, a, user); }}};
    if (program) {
      launchers.push_back({"08_expression_jit", [&user_expression](const map_launch& a) {
                             expression_jit::launch_map(a, user_expression, expression_jit::tier::optimised);
                           }});
      launchers.push_back({"08_expression_jit.baseline", [&user_expression](const map_launch& a) {
                             expression_jit::launch_map(a, user_expression, expression_jit::tier::baseline);
                           }});
      launchers.push_back({"16_interpreter", [&user_expression](const map_launch& a) {
                             interpreter::launch_map(a, user_expression);
                           }});
    }
    for (const auto& [strategy, launch] : launchers)
      for (map_form form : {map_form::scalar, map_form::vec})
        rows.push_back({strategy + "/" + std::string(to_string(form)) + " [--expr]", user_fixture.get(),
                        launch, form, strategy, "", o.expr});
  }
  const map_fixture fixture(o.problem, o.seed);
  for (const map_entry* e : chosen)
    rows.push_back(
        {e->name() + (o.expr.empty() ? "" : " [--op " + std::string(info(o.problem.op).name) + "]"), &fixture,
         e->launch, e->form, e->strategy, e->variant, std::string(info(o.problem.op).name)});

  // The user's plugin: its kernels fetched once, launched as strategy 13 launches its own.
  std::unique_ptr<plugin::library> user_plugin;
  if (!o.plugin_path.empty()) {
    user_plugin = std::make_unique<plugin::library>(o.plugin_path);
    const char* type = o.problem.type == dtype::f32 ? "f32" : "f64";
    const cudaKernel_t scalar = user_plugin->kernel(plugin::kernel_name("cdl_plugin_map_", "scalar", type)),
                       vec = user_plugin->kernel(plugin::kernel_name("cdl_plugin_map_", "vec", type));
    for (map_form form : {map_form::scalar, map_form::vec})
      rows.push_back(
          {"13_precompiled_plugin/" + std::string(to_string(form)) + " [--plugin " + o.plugin_path + "]",
           &fixture, [scalar, vec](const map_launch& a) { plugin::launch_map(scalar, vec, a); }, form,
           "13_precompiled_plugin", "plugin", std::string(info(o.problem.op).name)});
  }
  if (alone)
    rows.push_back({o.strategy + " (the mechanism alone)", &fixture,
                    [alone](const map_launch& a) {
                      alone->run(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.n, a.stream);
                    },
                    map_form::scalar, o.strategy, "", "quadratic"});
  nlohmann::json records = nlohmann::json::array();
  bool all_passed = tiered_passed;
  for (const row& w : rows) {
    const run_record r = run_row(w, o, env);
    all_passed = all_passed && r.validation.passed;
    records.push_back(r);
  }
  if (!o.json_path.empty()) write_json_atomic(o.json_path, records);
  return all_passed ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_run: %s\n", failure_message(e, "ask for a smaller --n").c_str());
    return 2;
  }
}
