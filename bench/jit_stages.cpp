// The costs of the run-time strategies (06, 07) that are not kernel time, each measured on its
// own and each named by the cache state it meets:
//   new_op      a text no cache has seen (jit::never_seen_op: a new constant every iteration), what
//               a user pays for a new --expr. The benchmark fails if two of its iterations
//               compile the same text, so no cache can answer it. The constant must reach the
//               machine code: NVRTC's cache answers texts that differ only in a comment (with the
//               cache on, its --time then gives the optimiser and ptxas no time at all), so it keys
//               on what the front end makes, not on the text.
//   same_text   the same text every iteration: from the second on, NVRTC's and nvJitLink's own
//               cache (kept through the driver, 12.9+) answers, where the process has a driver
//               and CUDA_CACHE_DISABLE is unset.
//   cache_memory_hit, cache_disk_hit, cache_disk_hit_fresh_process: this project's cache
//               (common/jit_cache.hpp).
// Stages: NVRTC's first compile in a process (from before NVRTC is loaded: common/jit.cpp loads
// it at the first compile), later compiles, the LTO link, a module load; and, for scale, a
// one-line kernel through NVRTC, new every iteration (the floor of any NVRTC route). Strategy 08
// (no C++ front end) the same way: its first compile in a process (from before libNVVM is
// loaded), a whole new op (parse, lower, libNVVM, and the load, where the driver's ptxas
// assembles the PTX), and libNVVM and the load apart. Strategies 16 and 17 (no compiler): a new
// op's first result, from its text to a map's output ready. NVRTC's own account of where a compile goes
// (jit/phases/: its --time phases, each a counter) for 06's program and the one-line kernel, and
// what each part of 06's program costs (jit/parts/: the headers, a kernel, an option, each against
// a program without it, compiled beside it); nvJitLink's (its -time) for 07's link.
//
// Strategy 10 (tiered dispatch) on streams of launches of a new op (tiered/): the whole stream
// timed on the host clock, from the first launch to the end of the last, with the switch kernel
// only, the JIT only (its compile, then its kernel) and the two tiered; validated by one more
// launch of the kernel the stream ended on (the GPU tests validate every launch of the move).
//
// "First in a process" and "fresh process" cannot be repeated inside one process, so each of
// their iterations starts this program again (`cdl_bench --cdl_jit_probe ...`), which measures
// the one operation with a steady clock and prints the seconds; the exec itself is not counted.
// Everything else is timed in process, with a steady clock: these are host costs.
#include "bench_common.hpp"

#include "common/check.hpp"
#include "common/inputs.hpp"
#include "common/jit_cache.hpp"
#include "common/registry.hpp"
#include "common/self_process.hpp"
#include "strategies/suite/routes.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace cdl::bench {
namespace {

using clock = std::chrono::steady_clock;
double seconds_since(clock::time_point start) {
  return std::chrono::duration<double>(clock::now() - start).count();
}

// A stage's name and the fields its records carry as their label, as every other record does
// (docs/results_format.md): workload "jit"; the stage; the route it times (a strategy's number and
// variant, a part of 06's program, the one-line kernel), where it has one; the cache state its
// text meets (the names above), where it says one; and the problem its code is for, given as a
// problem's describe(): that problem's workload as "problem", and its fields.
benchmark_id stage_id(const std::string& stage, const std::string& route, const std::string& text,
                      const std::string& problem = "") {
  benchmark_id id{"jit/" + stage, {{"workload", "jit"}, {"stage", stage}}};
  for (const auto& [key, value] : {std::pair{"route", route}, {"text", text}})
    if (!value.empty()) {
      id.name += "/" + value;
      id.fields[key] = value;
    }
  if (!problem.empty()) {
    id.name += "/" + result_name(problem);
    const nlohmann::json fields = problem_fields(problem);  // kept: items() refers to it
    for (const auto& [key, value] : fields.items()) id.fields[key == "workload" ? "problem" : key] = value;
  }
  return id;
}

// The elements of a new process's first result: the Python peers' new-op input's size (newop.py).
constexpr std::size_t first_result_n = std::size_t(1) << 16;

// What a launch compiles: the map's vec kernel (06 and 07 compile each form's kernel at its first
// launch), float. The op every same_text stage is measured with: quadratic.
constexpr int measured_kernel = int(map_form::vec);

const jit::op_text& measured_op() {
  static const jit::op_text op = jit::builtin_op(map_op::quadratic);
  return op;
}
jit::program measured_program() {
  return jit::whole_program(jit::workload::map, dtype::f32, measured_op(), measured_kernel);
}

// op, refused if its text was made before in this process: the guard that makes a cache hit
// impossible, not merely unlikely (`what` names the stage in the error).
jit::op_text never_before(jit::op_text op, const char* what) {
  static std::set<std::string> seen;
  static std::mutex m;
  const std::lock_guard lock(m);
  if (!seen.insert(op.source).second)
    throw error(std::string(what) + ": the op text '" + op.source + "' was made before");
  return op;
}

// A new op for a new_op iteration.
jit::op_text next_new_op() { return never_before(jit::never_seen_op(), "new_op stage"); }

// The measured op in a text no cache has seen.
jit::op_text next_fresh_text() { return never_before(jit::fresh_text(measured_op()), "tiered stream"); }

// A text of the quadratic op in 08's language that no compile cache has seen and that computes what
// quadratic computes: min(op, B), B a float past every value the op reaches here and new in every
// call, so that it reaches 08's PTX as a constant of its own (the driver's cache keys on the PTX).
jit::op_text next_language_text() {
  static std::atomic<std::uint64_t> count{std::uint64_t(clock::now().time_since_epoch().count()) ^
                                          (std::uint64_t(::getpid()) << 20)};
  const std::uint64_t u = count++ & ((1u << 23) - 1);
  const double bound = std::ldexp(1.0 + std::ldexp(double(u), -23), 100);  // exact in float
  char digits[64];
  const auto end = std::to_chars(digits, digits + sizeof digits, bound).ptr;
  return never_before(
      {"language_" + std::to_string(u), "min(x * x + 2 * x + 1, " + std::string(digits, end) + ")"},
      "tiered stream");
}

// Named by the strategy each stream runs. The catalogue's op: 03's switch alone, 06's JIT alone,
// 10's two tiers. A user's op in 08's language: 16's interpreter alone, 08's JIT alone (its
// optimised tier), 10's tiers (16, then 17's patched kernel, then 08's optimised tier), 17 alone.
enum class tier_mode {
  switch_only,
  jit_only,
  tiered,
  interpreter_only,
  expression_only,
  expression_tiers,
  patched_only
};
constexpr const char* tier_mode_names[] = {"03_switch",          "06_nvrtc_jit",
                                           "10_tiered_dispatch", "16_interpreter",
                                           "08_expression_jit",  "10_tiered_dispatch.expression",
                                           "17_copy_and_patch"};

// One stream: `launches` launches of a new text of the quadratic op, each mode as its name says.
void add_tiered_stream(tier_mode mode, std::size_t n, int k, int launches, int repetitions,
                       std::vector<std::string>& names) {
  const benchmark_id id = identify(std::string(tier_mode_names[int(mode)]) + "/vec",
                                   "tiered op=quadratic type=f32 n=" + std::to_string(n) +
                                       " k=" + std::to_string(k) + " launches=" + std::to_string(launches));
  configure_repetitions(
      register_benchmark(
          id, names,
          [mode, n, k, launches](benchmark::State& state) {
            static std::map<std::pair<std::size_t, int>, std::unique_ptr<map_fixture>> fixtures;
            auto& f = fixtures[{n, k}];
            if (!f)
              f = std::make_unique<map_fixture>(map_problem{map_op::quadratic, dtype::f32, n, k},
                                                default_seed);
            const map_launch_fn switch_launch = find_map_entry("03_switch/vec").launch;
            const auto interpreter = find_route("16_interpreter").launch,
                       expression = find_route("08_expression_jit").launch,
                       patched = find_route("17_copy_and_patch").launch;
            for (auto _ : state) {
              const bool language = mode >= tier_mode::interpreter_only;
              const jit::op_text text = language ? next_language_text() : next_fresh_text();
              std::unique_ptr<tiered_map> tier;
              std::unique_ptr<tiered_expression> tiers;
              int count = 0, first_own = -1;  // the first launch on the last tier
              int first_patched = -1;         // a user's op's tiers: the first launch on 17's kernel
              const auto one = [&](const map_launch& a) {
                if (mode == tier_mode::switch_only) {
                  switch_launch(a);
                } else if (mode == tier_mode::jit_only) {
                  jit::launch_map(nvrtc_jit_build, a, text);  // the first launch waits for the compile
                } else if (mode == tier_mode::tiered) {
                  if (!tier) tier = std::make_unique<tiered_map>(text, nvrtc_jit_build);
                  if (tier->launch(a) && first_own < 0) first_own = count;
                } else if (mode == tier_mode::interpreter_only) {
                  interpreter(a, text);
                } else if (mode == tier_mode::expression_only) {
                  expression(a, text);  // the first launch waits for the compile
                } else if (mode == tier_mode::patched_only) {
                  patched(a, text);  // the first launch patches and loads
                } else {
                  if (!tiers) tiers = std::make_unique<tiered_expression>(text);
                  const tiered_expression::tier t = tiers->launch(a);
                  if (t == tiered_expression::tier::optimised && first_own < 0) first_own = count;
                  if (t == tiered_expression::tier::patched && first_patched < 0) first_patched = count;
                }
                ++count;
              };
              const auto start = clock::now();
              for (int i = 0; i < launches; ++i) f->launch(one, map_form::vec, nullptr);
              CDL_CUDA_CHECK(cudaDeviceSynchronize());
              state.SetIterationTime(seconds_since(start));
              const int own = first_own, patched = first_patched;  // in the stream, not the check's launch
              const validation_result v = f->run_and_validate(one, map_form::vec);
              if (!v.passed) return state.SkipWithError(("validation failed: " + v.summary()).c_str());
              state.counters["first_own_kernel_launch"] = own;  // -1: the stream ended before its last tier
              if (tiers) {  // the parts of the tiers' stream, on the host clock from the text
                state.counters["first_patched_launch"] = patched;  // -1: none ran on 17's kernel
                state.counters["tiers_began_ms"] = tiers->began_ms();
                state.counters["patched_ready_ms"] = tiers->ready_ms(tiered_expression::tier::patched);
              }
              tier.reset();  // waits for a compile still running, outside the timing
              tiers.reset();
            }
          }),
      repetitions)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

// 08's whole route for an op from its text: parse, lower to IR (compile_uncached then compiles it).
using expression_jit::tier;
jit::nvvm_module expression_08(const jit::op_text& op, tier level = tier::optimised) {
  return expression_jit::map_module(expr::parse(op.source), dtype::f32, map_form::vec, op.name, level);
}

// 08 for a new op, from its text to a loaded kernel.
void compile_and_load_08(const jit::op_text& op, int arch, tier level = tier::optimised) {
  jit::load_now(expression_jit::compile_uncached(expression_08(op, level), arch), "map_vec");
}

// The run-time routes from a new op's text to its first result, by the name the interleaved benchmark
// and the new-process probes give them: the compilers (06, its fast_compile variant, 07, 08's two
// tiers: compiled and loaded at the first launch) and the routes with no compiler (16's interpreter;
// 17's machine code patched and loaded; 10's tiers, whose first launch runs on the interpreter
// while 08 compiles on a host thread).
// Route 10's dispatchers by op text, kept past their first result (their compiles run on after it);
// the probe empties this before it returns, so that each waits for its compiles while everything a
// compile uses is still there (statics made during a compile are destroyed before this one).
std::map<std::string, std::unique_ptr<tiered_expression>>& tiers() {
  static std::map<std::string, std::unique_ptr<tiered_expression>> kept;
  return kept;
}

struct route {
  std::string name;  // in the benchmarks' names: the strategy's number, then its variant
  void (*launch)(const map_launch& a, const jit::op_text& op);
  bool interleaved = true;  // 10's compiles run on after its first result, on the host's cores
};
// The registry's routes of a user's op (common/registry.hpp), and 10's tiers over them.
const std::vector<route>& routes() {
  static const std::vector<route> all = [] {
    std::vector<route> out;
    for (const op_route& r : get_registry().routes)
      out.push_back({r.strategy.substr(0, 2) + (r.variant.empty() ? "" : "_" + r.variant), r.launch});
    out.push_back({"10",
                   [](const map_launch& a, const jit::op_text& op) {
                     std::unique_ptr<tiered_expression>& t = tiers()[op.source];
                     if (!t) t = std::make_unique<tiered_expression>(op);
                     t->launch(a);
                   },
                   false});
    return out;
  }();
  return all;
}
const route& route_named(const std::string& name) {
  for (const route& r : routes())
    if (name == r.name) return r;
  throw error("no route '" + name + "'");
}

// A new op's first result through route r: from its text to the map's output ready (n elements, the
// map fixture's inputs, its float64 reference made before the clock starts), then validated against
// the language's float64 interpreter after it stops. Returns the seconds.
double first_result(const route& r, const jit::op_text& op, std::size_t n) {
  const expr::program language = expr::parse(op.source);  // the reference's, outside the time
  const map_fixture f({map_op::quadratic, dtype::f32, n, 1}, default_seed, language_op(language));
  const auto launch = [&](const map_launch& a) { r.launch(a, op); };
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
  const auto start = clock::now();
  f.launch(launch, map_form::vec, nullptr);
  CDL_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  const double seconds = seconds_since(start);
  const validation_result v = f.run_and_validate(launch, map_form::vec);
  if (!v.passed) throw error(std::string(r.name) + "'s first result for " + op.source + ": " + v.summary());
  return seconds;
}

// Runs `cdl_bench --cdl_jit_probe args...` and returns the seconds it printed.
double probe(const std::vector<std::string>& args) {
  std::vector<std::string> all{"--cdl_jit_probe"};
  all.insert(all.end(), args.begin(), args.end());
  return std::stod(run_self(all));
}

// What one timed operation reports: its seconds and, for a stage that has them, the parts of them
// a tool reported itself (the driver's compiler in a PTX load, NVRTC's phases), by counter name, ms.
struct measured {
  double seconds;
  std::map<std::string, double> parts_ms = {};
};

// A counter's name for a phase of NVRTC's --time table ("CUDA C++ Frontend" -> front_end_ms) or a
// step of nvJitLink's -time report ("time to create PTX" -> to_ptx_ms).
std::string phase_counter(const std::string& phase) {
  static const std::map<std::string, std::string> known = {
      {"CUDA C++ Frontend", "front_end_ms"}, {"NVVM Optimizer", "optimizer_ms"},
      {"PTX Translation", "ptxas_ms"},       {"time until Complete", "inputs_ms"},
      {"time to create PTX", "to_ptx_ms"},   {"time to finish", "after_ptx_ms"}};
  if (const auto found = known.find(phase); found != known.end()) return found->second;
  std::string name;
  for (char c : phase) name += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '_';
  return name + "_ms";
}

// One compile of p with NVRTC's --time: its seconds, and each phase's milliseconds by NVRTC's
// account (counters named by phase_counter). base: the options in place of jit::compile_options(),
// where a stage changes one of them.
measured compile_phases(const jit::program& p, int arch, const std::vector<std::string>& base) {
  const std::string table =
      (std::filesystem::temp_directory_path() / ("cdl_nvrtc_time_" + std::to_string(::getpid()) + ".csv"))
          .string();
  std::filesystem::remove(table);
  const auto start = clock::now();
  jit::compile_with_base(p, arch, jit::code_kind::cubin, base, {"--time=" + table});
  measured m{seconds_since(start)};
  for (const jit::phase& ph : jit::read_nvrtc_time(table)) m.parts_ms[phase_counter(ph.name)] += ph.ms;
  std::filesystem::remove(table);
  return m;
}

// NVRTC compiling a one-line kernel no cache has seen, to CUBIN: the floor of any NVRTC route.
double one_line_floor(int arch) {
  const jit::program p = jit::one_line_program(next_new_op());
  const auto start = clock::now();
  jit::compile(p, arch, jit::code_kind::cubin);
  return seconds_since(start);
}

// Every route's new op, interleaved: each round runs every route once (and NVRTC's one-line floor), in
// an order that turns by one every round (A B C, B C A, ...), so that the host's drift, which moves a
// compile by tens of per cent within a run, falls on every route alike. A first round is not
// counted: what a route loads once per process (a compiler, a kernel's module) is the new-process
// figure's (jit/first_result_in_process/), not a new op's. Counters per route: the 10th, 50th and
// 90th percentile of its milliseconds (ROUTE_p10_ms ...) and of its ratio to the floor compiled in
// the same round (ROUTE_x_floor_p50 ...), timing_stats's quantiles for both.
void interleaved_rounds(benchmark::State& state, int rounds) {
  const int arch = jit::device_arch();
  constexpr std::size_t n = std::size_t(1) << 20;
  std::vector<const route*> timed;
  for (const route& r : routes())
    if (r.interleaved) timed.push_back(&r);
  const std::size_t count = timed.size() + 1;  // and the floor, last in the list
  for (auto _ : state) {
    std::vector<std::vector<double>> ms(count), x_floor(count);
    double total = 0;
    for (int round = -1; round < rounds; ++round) {  // round -1: loads, not counted
      std::vector<double> took(count);
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t which = (i + std::size_t(round + 1)) % count;
        took[which] =
            which < timed.size() ? first_result(*timed[which], next_new_op(), n) : one_line_floor(arch);
      }
      for (std::size_t w = 0; w < count && round >= 0; ++w) {
        ms[w].push_back(1e3 * took[w]);
        x_floor[w].push_back(took[w] / took.back());
        total += took[w];
      }
    }
    state.SetIterationTime(total);
    for (std::size_t w = 0; w < count; ++w) {
      const std::string name = w < timed.size() ? timed[w]->name : "one_line_kernel";
      const timing_stats t = timing_stats::of(ms[w]), r = timing_stats::of(x_floor[w]);
      for (const auto& [tag, time, ratio] : {std::tuple{"p10", t.p10_ms, r.p10_ms},
                                             {"p50", t.median_ms, r.median_ms},
                                             {"p90", t.p90_ms, r.p90_ms}}) {
        state.counters[name + "_" + tag + "_ms"] = time;
        state.counters[name + "_x_floor_" + tag] = ratio;
      }
    }
    state.counters["rounds"] = rounds;
  }
}
void add_interleaved(int rounds, std::vector<std::string>& names) {
  configure_repetitions(
      register_benchmark(stage_id("interleaved", "", "new_op", "map op=quadratic type=f32 n=1048576"), names,
                         [rounds](benchmark::State& state) { interleaved_rounds(state, rounds); }),
      1)  // one repetition of `rounds` rounds
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

// How often a stage runs: its repetitions, and a fixed number of iterations in each (each is
// milliseconds, some a new process) rather than a time; the quick suite runs about half as many
// (a new process's first result once a repetition).
struct stage_counts {
  int repetitions;
  bool quick;
  int iterations(int full) const { return quick ? (full + 1) / 2 : full; }
};

// Registers a host-timed stage; `once` runs one timed operation and returns its seconds (or a
// `measured`, whose parts become counters: their means over the iterations).
//
// paired: every iteration also compiles the floor (one_line_floor), before the stage's operation
// or after it by turns, and the counters floor_ms and x_floor give the floor and the stage's
// ratio to it, iteration by iteration. This host's speed drifts by tens of per cent between runs
// and within one (the JIT section's min-max columns), so a ratio of two stages' medians, measured
// minutes apart, moves with it; two compiles a few milliseconds apart see the same host.
template <class Once>
void add_stage(const benchmark_id& id, const stage_counts& counts, int iterations,
               std::vector<std::string>& names, Once once, bool paired = false) {
  const int arch = jit::device_arch();
  auto run = [once, paired, arch](benchmark::State& state) {
    std::map<std::string, double> parts_ms;
    double floor_s = 0, ratios = 0;
    int i = 0;
    for (auto _ : state) {
      const bool floor_first = paired && i % 2 == 1;
      const double before = floor_first ? one_line_floor(arch) : 0;
      const measured m{once()};
      const double after = paired && !floor_first ? one_line_floor(arch) : 0;
      state.SetIterationTime(m.seconds);
      for (const auto& [part, ms] : m.parts_ms) parts_ms[part] += ms;
      floor_s += before + after;
      ratios += paired ? m.seconds / (before + after) : 0;
      ++i;
    }
    for (const auto& [part, ms] : parts_ms) state.counters[part] = ms / i;
    if (paired) {
      state.counters["floor_ms"] = 1e3 * floor_s / i;
      state.counters["x_floor"] = ratios / i;
    }
  };
  configure_repetitions(register_benchmark(id, names, run), counts.repetitions)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(counts.iterations(iterations));
}

// A cache directory holding the measured program's entry, for the disk-hit stages; removed at exit.
const std::filesystem::path& primed_cache_dir(int arch) {
  static const struct primed {
    std::filesystem::path dir;
    explicit primed(int arch)
        : dir(std::filesystem::temp_directory_path() / ("cdl-bench-jit-" + std::to_string(::getpid()))) {
      jit::cache c({dir, {}});
      const jit::program p = measured_program();
      c.get(jit::cache_key(p, arch, jit::code_kind::cubin),
            [&] { return jit::compile(p, arch, jit::code_kind::cubin).image; });
    }
    ~primed() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cache_dir(arch);
  return cache_dir.dir;
}

// A disk hit: read, parse and check the entry; a miss is an error, not a compile.
double disk_hit(jit::cache& c, int arch) {
  const std::string key = jit::cache_key(measured_program(), arch, jit::code_kind::cubin);
  const auto start = clock::now();
  c.get(key, []() -> jit::module_image { throw error("expected a disk hit, found no entry"); });
  return seconds_since(start);
}

}  // namespace

bool run_jit_probe(int argc, char** argv, int& status) {
  if (argc < 4 || std::strcmp(argv[1], "--cdl_jit_probe") != 0) return false;
  try {
    const std::string stage = argv[2];
    const int arch = std::stoi(argv[3]);
    double seconds = 0;
    if (stage == "first_compile" && argc == 6) {  // op name and source: a new op, from the parent
      const jit::program p =
          jit::whole_program(jit::workload::map, dtype::f32, jit::op_text{argv[4], argv[5]}, measured_kernel);
      const auto start = clock::now();  // NVRTC is not loaded yet: the first compile loads it
      jit::compile(p, arch, jit::code_kind::cubin);
      seconds = seconds_since(start);
    } else if (stage == "first_compile_08" && argc == 6) {
      const auto start = clock::now();  // libNVVM is not loaded yet, nor libdevice read
      compile_and_load_08(jit::op_text{argv[4], argv[5]}, arch);
      seconds = seconds_since(start);
    } else if ((stage == "first_result" || stage == "first_result_eager") && argc == 7) {
      // What a user's first op (route, op name, source) costs in a new process: the context made
      // first, as the Python peers' fresh-process figure has it made by their import, then the
      // first result. Eager: the runtime loads every kernel of the program with the context, before
      // the clock, where by default it loads a kernel at its first launch, inside it.
      if (stage == "first_result_eager") ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
      CDL_CUDA_CHECK(cudaFree(nullptr));
      seconds = first_result(route_named(argv[4]), jit::op_text{argv[5], argv[6]}, first_result_n);
      tiers().clear();
    } else if (stage == "disk_hit" && argc == 5) {
      jit::cache c({std::filesystem::path(argv[4]), {}});
      seconds = disk_hit(c, arch);
    } else {
      throw error("unknown probe '" + stage + "'");
    }
    std::printf("%.9f\n", seconds);
    status = 0;
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    status = 1;
  }
  return true;
}

void register_jit_stages(int repetitions, bool quick, std::vector<std::string>& names) {
  const stage_counts counts{repetitions, quick};
  const int arch = jit::device_arch();
  const std::string a = std::to_string(arch);
  const auto& op = measured_op();
  const jit::program whole = measured_program();
  benchmark::AddCustomContext("cuda_cache_disable",
                              std::getenv("CUDA_CACHE_DISABLE") ? std::getenv("CUDA_CACHE_DISABLE") : "");
  const jit::program kernels = jit::lto_skeleton_program(jit::workload::map, dtype::f32, measured_kernel);
  const jit::program op_only = jit::lto_op_program(jit::workload::map, dtype::f32, op);
  const std::string map_f32_op = "map op=" + op.name + " type=f32";  // the problem every stage compiles for

  add_stage(stage_id("first_compile_in_process", "06", "new_op", map_f32_op), counts, 3, names, [a] {
    const jit::op_text op = next_new_op();
    return probe({"first_compile", a, op.name, op.source});
  });
  add_interleaved(quick ? 6 : 15, names);
  // A new process's first op through a route, as the Python peers' fresh-process figure; eager:
  // with every kernel loaded with the context.
  const auto first_result_stage = [&](const std::string& route, bool eager) {
    add_stage(stage_id(eager ? "first_result_in_process_eager" : "first_result_in_process", route, "new_op",
                       map_f32_op + " n=" + std::to_string(first_result_n)),
              counts, 2, names, [a, route, eager] {
                const jit::op_text op = next_new_op();
                return probe({eager ? "first_result_eager" : "first_result", a, route, op.name, op.source});
              });
  };
  for (const route& r : routes()) first_result_stage(r.name, false);
  // The interpreter's with its kernels loaded with the context: what its first launch's loading of
  // them costs, by the difference.
  first_result_stage("16", true);
  // Compiles `make()`'s program each iteration; the new_op stages make a new one every time.
  auto compile_stage = [&](const benchmark_id& id, int iterations, auto make, jit::code_kind kind,
                           bool paired = false) {
    add_stage(
        id, counts, iterations, names,
        [make, arch, kind] {
          const jit::program p = make();
          const auto start = clock::now();
          jit::compile(p, arch, kind);
          return seconds_since(start);
        },
        paired);
  };
  const auto map_f32 = [](const jit::op_text& o) {
    return jit::whole_program(jit::workload::map, dtype::f32, o, measured_kernel);
  };
  const auto op_f32 = [](const jit::op_text& o) {
    return jit::lto_op_program(jit::workload::map, dtype::f32, o);
  };
  compile_stage(
      stage_id("compile", "06", "new_op", map_f32_op), 3, [map_f32] { return map_f32(next_new_op()); },
      jit::code_kind::cubin, true);
  compile_stage(
      stage_id("compile", "06_fast_compile", "new_op", map_f32_op), 3,
      [map_f32] {
        jit::program p = map_f32(next_new_op());
        p.options.push_back(jit::fast_compile_option);  // 06's variant `fast_compile`
        return p;
      },
      jit::code_kind::cubin);
  compile_stage(
      stage_id("compile", "06", "same_text", map_f32_op), 5, [whole] { return whole; },
      jit::code_kind::cubin);
  add_stage(stage_id("compile", "one_line_kernel", "new_op"), counts, 5, names,
            [arch] { return one_line_floor(arch); });
  // The floor with the options 06 and 07 compile with.
  compile_stage(
      stage_id("compile", "one_line_kernel_minimal", "new_op"), 5,
      [] {
        jit::program p = jit::one_line_program(next_new_op());
        p.options.insert(p.options.end(), jit::generated_program_options.begin(),
                         jit::generated_program_options.end());
        return p;
      },
      jit::code_kind::cubin);
  // Where a new op's compile goes, by NVRTC's own account (--time): 06's program and the one-line
  // kernel, each phase a counter. Stages of their own, so that writing the table is in no figure
  // above.
  const std::vector<std::string> default_base = jit::compile_options(arch, jit::code_kind::cubin);
  auto phases_stage = [&](const benchmark_id& id, auto make) {
    add_stage(id, counts, 3, names,
              [make, arch, default_base] { return compile_phases(make(), arch, default_base); });
  };
  phases_stage(stage_id("phases", "06", "new_op", map_f32_op), [map_f32] { return map_f32(next_new_op()); });
  phases_stage(stage_id("phases", "one_line_kernel", "new_op"),
               [] { return jit::one_line_program(next_new_op()); });

  // What each part of 06's program costs: two programs that differ by that part alone, both compiled
  // in every iteration, in turns (with the part first, then without it first), each by the same
  // account. Counters: the two compiles' means (with_ms, without_ms) and the mean difference of the
  // whole compile (delta_ms) and of each phase (delta_optimizer_ms, ...). Two compiles a few
  // milliseconds apart see the same host, whose speed drifts by tens of per cent within a run, so
  // stages of their own, minutes apart, would charge a part with the drift between them.
  // The parts: the skeleton's headers (the one-line kernel with them included, both with 06's
  // -minimal), each kernel the program can instantiate with the op (one form's, or every form's at
  // once, against the one-line kernel with the headers), each option 06 compiles with, left out or
  // changed, and -lineinfo, which it leaves out as the suite's build does, added.
  const auto one_line_minimal = [] {
    jit::program p = jit::one_line_program(next_new_op());
    p.options = jit::generated_program_options;
    return p;
  };
  const auto one_line_headers = [one_line_minimal] {
    jit::program p = one_line_minimal();
    p.source = "#include \"common/skeletons/map.cuh\"\n" + p.source;
    return p;
  };
  const auto map_kernel = [](int kernel) {
    return [kernel] { return jit::whole_program(jit::workload::map, dtype::f32, next_new_op(), kernel); };
  };
  const auto options_with = [&default_base](const std::string& option, const std::string& instead) {
    std::vector<std::string> o = default_base;
    const auto found = std::find(o.begin(), o.end(), option);
    if (found == o.end()) throw error("jit/parts: 06 does not compile with " + option);
    *found = instead;
    return o;
  };
  auto part_stage = [&](const std::string& part, auto with, auto without,
                        const std::vector<std::string>& with_base,
                        const std::vector<std::string>& without_base) {
    add_stage(stage_id("parts", part, "new_op", map_f32_op), counts, 4, names,
              [with, without, arch, with_base, without_base, turn = std::make_shared<int>(0)] {
                measured a{0}, b{0};  // with the part, without it
                if ((*turn)++ % 2 == 0) {
                  a = compile_phases(with(), arch, with_base);
                  b = compile_phases(without(), arch, without_base);
                } else {
                  b = compile_phases(without(), arch, without_base);
                  a = compile_phases(with(), arch, with_base);
                }
                measured m{a.seconds,
                           {{"with_ms", 1e3 * a.seconds},
                            {"without_ms", 1e3 * b.seconds},
                            {"delta_ms", 1e3 * (a.seconds - b.seconds)}}};
                for (const auto& [phase, ms] : a.parts_ms)
                  m.parts_ms["delta_" + phase] = ms - b.parts_ms[phase];
                return m;
              });
  };
  part_stage("headers", one_line_headers, one_line_minimal, default_base, default_base);
  for (const map_form form : {map_form::scalar, map_form::vec, map_form::staged})
    part_stage(std::string(to_string(form)) + "_kernel", map_kernel(int(form)), one_line_headers,
               default_base, default_base);
  part_stage("all_kernels", map_kernel(jit::all_kernels), one_line_headers, default_base, default_base);
  const auto vec = map_kernel(measured_kernel);
  std::vector<std::string> with_lineinfo = default_base;  // as the suite's CDL_LINEINFO build
  with_lineinfo.push_back("-lineinfo");
  part_stage("lineinfo", vec, vec, with_lineinfo, default_base);
  part_stage("std_cxx20", vec, vec, default_base, options_with("-std=c++20", "-std=c++17"));
  part_stage(
      "minimal", vec,
      [vec] {
        jit::program p = vec();
        p.options.clear();  // jit::generated_program_options: -minimal
        return p;
      },
      default_base, default_base);
  compile_stage(
      stage_id("compile", "07_kernels_ltoir", "same_text", "map type=f32"), 5, [kernels] { return kernels; },
      jit::code_kind::ltoir);
  compile_stage(
      stage_id("compile", "07_op_ltoir", "new_op", map_f32_op), 3, [op_f32] { return op_f32(next_new_op()); },
      jit::code_kind::ltoir);
  compile_stage(
      stage_id("compile", "07_op_ltoir", "same_text", map_f32_op), 5, [op_only] { return op_only; },
      jit::code_kind::ltoir);
  // A link of kernels' LTO-IR with an op's, the op compiled (not timed) before each link: a new
  // op's text every iteration (paired with the floor), or the same text, which nvJitLink's cache
  // answers where there is one. The kernels' LTO-IR is the stage's own, compiled at its first
  // iteration.
  auto link_stage = [&](const benchmark_id& id, const jit::program& kernels, auto op, bool new_op) {
    auto k = std::make_shared<std::optional<jit::compiled>>();
    add_stage(
        id, counts, 5, names,
        [k, kernels, op, arch] {
          if (!*k) k->emplace(jit::compile(kernels, arch, jit::code_kind::ltoir));
          const jit::compiled o = jit::compile(op(), arch, jit::code_kind::ltoir);
          const jit::compiled* parts[] = {&**k, &o};
          const auto start = clock::now();
          jit::link(parts, arch);
          return seconds_since(start);
        },
        new_op);
  };
  const auto new_map_op = [op_f32] { return op_f32(next_new_op()); };
  // 08: parse and lower are inside the timed region (they are part of what a new op costs).
  add_stage(stage_id("first_compile_in_process", "08", "new_op", map_f32_op), counts, 3, names, [a] {
    const jit::op_text op = next_new_op();
    return probe({"first_compile_08", a, op.name, op.source});
  });
  // 08's compile stages include the load: the driver assembles its PTX there. Each tier
  // (expression_jit::tier) is timed: `08` with libNVVM's optimiser, `08_baseline` without.
  for (const tier level : {tier::optimised, tier::baseline}) {
    const std::string t = level == tier::optimised ? "08" : "08_baseline";
    add_stage(
        stage_id("compile", t, "new_op", map_f32_op), counts, 5, names,
        [arch, level] {
          const jit::op_text op = next_new_op();
          const auto start = clock::now();
          compile_and_load_08(op, arch, level);
          return seconds_since(start);
        },
        true);
    add_stage(stage_id("compile", t + "_nvvm_to_ptx", "new_op", map_f32_op), counts, 5, names, [arch, level] {
      const jit::nvvm_module m = expression_08(next_new_op(), level);
      const auto start = clock::now();
      jit::compile_nvvm(m, arch);
      return seconds_since(start);
    });
    // The load's time, and within it the driver's compiler (ptxas) by its own account.
    add_stage(stage_id("load", t + "_ptx", "new_op", map_f32_op), counts, 5, names, [arch, level] {
      const jit::module_image ptx =
          expression_jit::compile_uncached(expression_08(next_new_op(), level), arch);
      const auto start = clock::now();
      const float compiler_ms = jit::load_now(ptx, "map_vec");
      return measured{seconds_since(start), {{"driver_compiler_ms", compiler_ms}}};
    });
  }
  // 16: a new op's first result with no compiler: its text parsed and encoded, the interpreter
  // launched on 2^20 elements (the encoded program goes with the launch), the result ready. The
  // output is validated after the clock stops, against the language's float64 interpreter.
  add_stage(stage_id("first_result", "16", "new_op", "map n=1048576 type=f32"), counts, 10, names,
            [] { return first_result(route_named("16"), next_new_op(), std::size_t(1) << 20); });
  // 17: the same with no compiler either: the op's machine code patched into the stencils' image and
  // loaded (the stencils learnt before the first iteration: once a process).
  add_stage(stage_id("first_result", "17", "new_op", "map n=1048576 type=f32"), counts, 10, names, [] {
    static const std::string learnt =  // the stencils learnt, untimed
        find_route("17_copy_and_patch").refusal({"learn", "x"}, dtype::f32, map_form::vec);
    if (!learnt.empty()) throw error(learnt);
    return first_result(route_named("17"), next_new_op(), std::size_t(1) << 20);
  });
  add_stage(stage_id("compile", "08", "same_text", map_f32_op), counts, 5, names, [arch] {
    const auto start = clock::now();
    compile_and_load_08(measured_op(), arch);
    return seconds_since(start);
  });
  link_stage(stage_id("link", "07", "new_op", map_f32_op), kernels, new_map_op, true);
  link_stage(
      stage_id("link", "07", "same_inputs", map_f32_op), kernels, [op_only] { return op_only; }, false);
  jit::program preoptimised = kernels;  // 07's variant `preoptimised`
  preoptimised.options.push_back(jit::preoptimise_option);
  link_stage(stage_id("link", "07_preoptimised", "new_op", map_f32_op), preoptimised, new_map_op, true);
  // The smallest LTO link, a one-line kernel with a new one-line op: what any link costs (setting
  // up libNVVM and ptxas, a kernel of one line), of which 07's link is that plus its kernel's share.
  link_stage(
      stage_id("link", "one_line_kernel", "new_op"), jit::one_line_lto_kernel(),
      [] { return jit::one_line_lto_op(next_new_op()); }, true);
  // Where a new op's link goes, by nvJitLink's own account (-time): libNVVM on the whole program
  // (to PTX), then ptxas and the link's end.
  add_stage(stage_id("phases", "07_link", "new_op", map_f32_op), counts, 3, names, [kernels, arch, op_f32] {
    static const jit::compiled k = jit::compile(kernels, arch, jit::code_kind::ltoir);
    const jit::compiled o = jit::compile(op_f32(next_new_op()), arch, jit::code_kind::ltoir);
    const jit::compiled* parts[] = {&k, &o};
    const auto start = clock::now();
    const jit::linked l = jit::link(parts, arch, {"-time"});
    measured m{seconds_since(start)};
    for (const jit::phase& ph : jit::read_nvjitlink_time(l.info)) m.parts_ms[phase_counter(ph.name)] += ph.ms;
    return m;
  });
  add_stage(stage_id("cache_memory_hit", "", "", map_f32_op), counts, 100, names, [whole, arch] {
    static jit::cache c({std::nullopt, {}});
    const std::string key = jit::cache_key(whole, arch, jit::code_kind::cubin);
    c.get(key, [&] { return jit::compile(whole, arch, jit::code_kind::cubin).image; });
    const auto start = clock::now();
    c.get(key, []() -> jit::module_image { throw error("expected a memory hit"); });
    return seconds_since(start);
  });
  add_stage(stage_id("cache_disk_hit", "", "", map_f32_op), counts, 20, names, [arch] {
    jit::cache c({primed_cache_dir(arch), {}});  // new cache object: nothing in memory
    return disk_hit(c, arch);
  });
  add_stage(stage_id("cache_disk_hit_fresh_process", "", "", map_f32_op), counts, 3, names, [a, arch] {
    return probe({"disk_hit", a, primed_cache_dir(arch).string()});
  });
  // Loading a CUBIN: cudaLibraryLoadData, the kernel handle, and the load onto the device.
  add_stage(stage_id("load", "06", "", map_f32_op), counts, 20, names, [whole, arch] {
    static const jit::module_image image = jit::compile(whole, arch, jit::code_kind::cubin).image;
    const auto start = clock::now();
    jit::load_now(image, whole.name_expressions.back());
    return seconds_since(start);
  });
  // Streams of launches of a new op: memory-bound (k = 1, 2^24 elements, past the L2) and at
  // k = 256 (2^22 elements: arithmetic sets the time there, and the longest stream stays short). As
  // many repetitions as the kernels have: the report tells two streams apart by the same U test, which
  // three against three cannot pass.
  for (const auto& [n, k] :
       {std::pair<std::size_t, int>{std::size_t(1) << 24, 1}, {std::size_t(1) << 22, 256}})
    for (int launches : {1, 10, 100, 1000, 10000})
      for (tier_mode mode :
           {tier_mode::switch_only, tier_mode::jit_only, tier_mode::tiered, tier_mode::interpreter_only,
            tier_mode::expression_only, tier_mode::expression_tiers, tier_mode::patched_only})
        if (!quick || launches <= 100) add_tiered_stream(mode, n, k, launches, repetitions, names);
}

}  // namespace cdl::bench
