// cdl_run: run one registered strategy (or all of them) on one map problem, validate it, time
// it, print a line per strategy and optionally write the result records as JSON. The demo for
// readers of strategies/: pick a file, run its entry, compare with the baseline.
//
//   cdl_run --list
//   cdl_run --strategy 04_function_pointer.symbol/vec --op sine --n 16777216 --k 16 [--json out.json]
//   cdl_run --strategy all --op quadratic --type f64 --n 1e8
//
// With --expr, the op is the user's, run at run time by every route of the registry that takes it
// (common/registry.hpp's op_route: 06, 07 and 08 compile it, 16 interprets it, 17 patches it; a
// route that refuses it says why), first through strategy 10's tiers where it is in 08's language
// (the launch each tier served first), all validated against the language's float64 interpreter (C++
// text: the same text compiled for the host). The tiers make 08's, 16's and 17's kernels, so their
// vec rows then launch those; --strategy naming another strategy than 10 leaves the tiers out.
//
//   cdl_run --expr 's = sin(x); s * s + 2 * x' --n 2^26
//   cdl_run --expr 'T y = sin(x); return y * y;' --type f64 --dump-source
//   cdl_run --expr 'x * x / 3 + sin(x)' --explain      (no GPU needed: will 17 take it, and how)
//
// With --plugin FILE, a map plugin built ahead of time (strategy 13, e.g. from build/release:
// plugins/cdl_plugin_sine.fatbin --op sine) is loaded and timed, validated against --op.
#include "bench/run.hpp"

#include "common/cli.hpp"
#include "common/inputs.hpp"
#include "common/record.hpp"
#include "common/registry.hpp"
#include "common/skeletons/elementwise.cuh"
#include "strategies/suite/routes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdl::run_tool {

// A run longer than this says so before it goes on, and its progress (on stderr).
constexpr double long_run_s = 60;

// One row of the table: a launch on a fixture, validated, then timed.
struct row {
  std::string name;
  const map_fixture* fixture;
  map_launcher launch;
  map_form form;
  std::string strategy, variant, op;
  // The first launch of its strategy in this process: what the strategy loads on first use (a
  // library, a module, 17's stencils) is in it, as in a new process, unless an earlier strategy
  // loaded it (07 shares NVRTC with 06); the strategy's other rows reuse it.
  bool first_use = false;
  double setup_ms = 0;  // what the first use did before the row ran (17's learning), added to it
};

// A fraction of copy as the report prints it (reports/cdl_report/document.py, of_copy): plain where
// it is a bandwidth finding; in parentheses with a dagger where the working set is under past_l2
// L2s, whose reads and write-backs can then fall outside the timed kernel, or where it passes the
// copy (past_l2, run.hpp).
bool copy_finding(const run_record& r) {
  return r.bytes >= past_l2 * double(r.env.device.l2_bytes) && r.fraction_of_copy <= 1;
}
std::string of_copy(const run_record& r) {
  char text[48];
  std::snprintf(text, sizeof text, copy_finding(r) ? "%5.3f of copy" : "(%.3f†) of copy", r.fraction_of_copy);
  return text;
}

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
  const bool user_op = !o.expr.empty() && w.op == o.expr;
  r.problem = {{"op", user_op ? "expression" : w.op},
               {"type", to_string(o.problem.type)},
               {"n", o.problem.n},
               {"k", o.problem.k},
               {"seed", o.seed}};
  if (user_op) r.problem["expression"] = o.expr;
  r.env = env;
  // The first launch pays whatever a strategy sets up on first use: a JIT compiles and loads.
  const auto start = std::chrono::steady_clock::now();
  w.fixture->launch(w.launch, w.form, nullptr);
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
  r.first_launch_ms =
      w.setup_ms +
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const auto validated = std::chrono::steady_clock::now();
  r.validation = w.fixture->run_and_validate(w.launch, w.form);
  if (!r.validation.passed) {
    std::printf("%-44s %s (not timed)\n", w.name.c_str(), r.validation.summary().c_str());
    return r;
  }
  // A launch and its check took this long; the timing launches it 3 + reps times more.
  const double one_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - validated).count(),
               timing_s = one_s * (3 + o.repetitions);
  if (timing_s > long_run_s)
    std::fprintf(stderr, "cdl_run: %s: its timing takes about %.0f s (%d launches of up to %.1f s)\n",
                 w.name.c_str(), timing_s, 3 + o.repetitions, one_s);
  r.timing = time_launches([&](cudaStream_t s) { w.fixture->launch(w.launch, w.form, s); },
                           {.warmup = 3, .repetitions = o.repetitions, .flush_l2 = true});
  r.bytes = double(o.problem.min_bytes());
  r.bandwidth_gbs = r.bytes / (r.timing.median_ms * 1e-3) / 1e9;
  r.fraction_of_copy = r.bandwidth_gbs / env.copy_bandwidth_gbs;
  std::printf(
      "%-44s %10.4f ms  (p10 %.4f, p90 %.4f)  %7.0f GB/s  %s  max rel err %-8.2g first launch "
      "%.1f ms%s\n",
      w.name.c_str(), r.timing.median_ms, r.timing.p10_ms, r.timing.p90_ms, r.bandwidth_gbs,
      of_copy(r).c_str(), r.validation.max_rel_error, r.first_launch_ms,
      w.first_use ? " (its strategy's first use here)" : "");
  return r;
}

// The entries --strategy names (a comma-separated list, each checked before anything runs: one
// process, one problem and one float64 reference), or every one.
std::vector<const map_entry*> chosen_entries(const options& o) {
  std::vector<const map_entry*> chosen;
  if (o.strategy == "all") {
    for (const map_entry& e : get_registry().map) chosen.push_back(&e);
    return chosen;
  }
  for (std::size_t at = 0; at <= o.strategy.size();) {
    const std::size_t comma = std::min(o.strategy.find(',', at), o.strategy.size());
    chosen.push_back(&find_map_entry(std::string_view(o.strategy).substr(at, comma - at)));
    at = comma + 1;
  }
  return chosen;
}

// The rows of a user's op: every route of the registry that takes it (those that read 08's language
// only where it is in it; the others its C++), vec form first, each route's first use on its vec row
// (where the tiers ran, they made 08's, 16's and 17's kernels); a route that refuses it says why.
void user_rows(const options& o, const map_fixture& fixture, const jit::op_text& language,
               const jit::op_text& cpp, bool ran_tiers, std::vector<row>& rows) {
  for (const op_route& r : get_registry().routes) {
    if (r.language && !language.program) continue;  // cdl_run said so, for 08, before the table
    const jit::op_text& op = r.language ? language : cpp;
    const bool made_by_tiers = ran_tiers && r.language && r.variant.empty();
    bool first = !made_by_tiers && r.name() != "08_expression_jit.baseline";  // 08's libNVVM already loaded
    for (map_form form : {map_form::vec, map_form::scalar}) {
      const std::string name = r.name() + "/" + std::string(to_string(form)) + " [--expr]";
      const auto learning = std::chrono::steady_clock::now();  // what deciding takes: 17's learning
      const std::string why = r.refusal(op, o.problem.type, form);
      const double decided_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - learning).count();
      if (!why.empty()) {
        std::printf("%s: not run: %s\n", name.c_str(), why.c_str());
        continue;
      }
      if (r.note)
        if (const std::string said = r.note(op, o.problem.type, form); !said.empty())
          std::printf("%s: %s\n", name.c_str(), said.c_str());
      const auto launch = r.launch;
      rows.push_back({name, &fixture, [launch, &op](const map_launch& a) { launch(a, op); }, form, r.strategy,
                      r.variant, o.expr, first, first ? decided_ms : 0});
      first = false;
    }
  }
}

// The rows of --plugin: its kernels fetched once, launched as strategy 13 launches its own.
void plugin_rows(const options& o, const map_fixture& fixture, std::unique_ptr<plugin::library>& user_plugin,
                 std::vector<row>& rows) {
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

// Each row run, validated and timed (run_row); then --launches' totals and --json's records. Returns
// the exit status: 3 where any result was wrong.
int table(const options& o, const environment& env, const std::vector<row>& rows, bool with_tiers,
          bool tiered_passed) {
  std::vector<run_record> records;
  bool all_passed = tiered_passed, dagger = false, long_run = false;
  const auto begun = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (long_run)  // where the run is long, its progress: stdout keeps the table alone
      std::fprintf(stderr, "cdl_run: row %zu of %zu, %s (%.0f s so far)\n", i + 1, rows.size(),
                   rows[i].name.c_str(), seconds());
    records.push_back(run_row(rows[i], o, env));
    all_passed = all_passed && records.back().validation.passed;
    dagger = dagger || (records.back().validation.passed && !copy_finding(records.back()));
    if (i == 0 && rows.size() > 1 && seconds() * double(rows.size()) > long_run_s) {
      long_run = true;
      std::fprintf(stderr, "cdl_run: about %.0f s for the %zu rows (the first took %.1f s)\n",
                   seconds() * double(rows.size()), rows.size(), seconds());
    }
  }
  if (dagger)
    std::printf(
        "† not a bandwidth finding: the working set is under %.0f× the L2 (%.0f MiB), or the figure is "
        "above the copy's own bandwidth\n",
        past_l2, past_l2 * double(env.device.l2_bytes) / (1 << 20));
  if (o.launches > 0) {
    std::vector<bool> first_use;
    for (const row& w : rows) first_use.push_back(w.first_use);
    std::optional<tiers_total> tiers;  // 10's tiers in a process of their own, where no route compiled the op
    if (with_tiers) {
      tiers = measure_tiers(o);
      if (!tiers->passed)
        std::printf("10_tiered_dispatch.expression/vec [--expr] --launches: %s\n", tiers->summary.c_str());
      all_passed = all_passed && tiers->passed;
    }
    print_launches(o, records, first_use, tiers);
  }
  if (!o.json_path.empty()) write_json_atomic(o.json_path, results_document(records, env));
  return all_passed ? 0 : 3;
}

int run(const options& o) {
  if (o.list) return list();
  // A program of the language goes to 06 and 07 as the C++ it prints, so all three compile one op.
  std::optional<expr::program> program;
  std::string not_in_language;
  if (!o.expr.empty()) {
    try {
      program = expr::parse(o.expr);
    } catch (const expr::syntax_error& e) {
      not_in_language = e.what();
    }
    if (const std::string number =
            program && o.problem.type == dtype::f32 ? expr::number_float_cannot_hold(*program) : "";
        !number.empty())
      throw error("the op's number " + number +
                  ", is no float32 constant: use --type f64, or a number float "
                  "holds");
  }
  // parsed once, here: the routes that read the language (and 10's tiers) take the program
  const jit::op_text language{"user", o.expr,
                              program ? std::make_shared<const expr::program>(*program) : nullptr};
  const jit::op_text cpp = jit::as_cpp(language);
  if (!o.expr.empty()) jit::check_op_source(cpp.source);
  if (!o.ptx_path.empty()) {
    if (!program) throw error("--ptx: the op is not in 08's language: " + not_in_language);
    return write_ptx(o, *program);
  }
  if (o.compile_times) return compile_times(o, program.has_value(), cpp);
  if (!o.steps_path.empty()) return write_steps(o, program, not_in_language);
  if (o.dump_source) return dump_source(o, program, not_in_language, cpp);
  if (o.explain) return explain(o, language, not_in_language);
  const std::vector<const map_entry*> chosen = chosen_entries(o);

  // A user's op is timed as an op new to this machine: with the driver's cache or the suite's disk
  // cache on, a text run before is read back, and its first launch is then no compile. Before
  // anything starts the driver.
  if (!o.expr.empty()) {
    ::setenv("CUDA_CACHE_DISABLE", "1", 1);
    ::setenv("CDL_JIT_DISK_CACHE", "0", 1);
  }
  std::string why;
  if (!gpu_available(&why)) throw error(why);
  if (o.tiers_stream) {
    if (!program) throw error("--tiers-stream: the op is not in 08's language: " + not_in_language);
    return tiers_stream(o, map_fixture(o.problem, o.seed, language_op(*program, o.expr_ulps)), language);
  }
  const double copy = measure_copy_bandwidth_gbs(default_copy_bytes());
  const environment env = current_environment(copy);
  std::printf("%s | copy %.0f GB/s | %s%s\n", env.device.name.c_str(), copy, o.problem.describe().c_str(),
              o.expr.empty()
                  ? ""
                  : (" | --expr '" + o.expr +
                     "' | compile caches off (the driver's, the suite's on disk): each first launch "
                     "compiles")
                        .c_str());

  // A program of the language runs through 10's tiers unless --strategy names another strategy.
  const bool with_tiers =
      program && (o.strategy == "all" || std::any_of(chosen.begin(), chosen.end(), [](const map_entry* e) {
                    return e->name().rfind("10_tiered_dispatch", 0) == 0;
                  }));
  std::vector<row> rows;
  std::unique_ptr<host_op> host_reference;
  std::unique_ptr<map_fixture> user_fixture;
  bool tiered_passed = true;
  if (!o.expr.empty()) {
    custom_map_op reference;
    if (program) {
      reference = language_op(*program, o.expr_ulps);  // its magnitude the scale: x / 4 - x * x cancels
    } else {
      std::printf("08_expression_jit/* [--expr]: not run: the op is not in 08's language: %s\n",
                  not_in_language.c_str());
      host_reference = std::make_unique<host_op>(cpp);
      reference = {host_reference->function(), o.expr_ulps};
    }
    user_fixture = std::make_unique<map_fixture>(o.problem, o.seed, reference);
    // First, while the text is new to this process: no tier's compile has been made yet (not with
    // --launches: each route's first launch must then be its own compile, and the tiers' stream is
    // measured in a process of its own).
    const bool ran_tiers = with_tiers && o.launches == 0;
    if (ran_tiers) {
      tiered_passed = tiers_until_optimised(*user_fixture, language, map_form::vec);
      std::printf(
          "  (08's vec rows below launch the kernels the tiers compiled; --strategy with another\n"
          "   strategy leaves the tiers out, and every route's first launch is its own)\n");
    }
    user_rows(o, *user_fixture, language, cpp, ran_tiers, rows);
  }
  const map_fixture fixture(o.problem, o.seed);
  for (const map_entry* e : chosen) {
    if (const std::string why = e->refusal(unlaunched(o.problem.op, o.problem.type, e->form)); !why.empty()) {
      std::printf("%s [--op %s]: not run: %s\n", e->name().c_str(),
                  std::string(info(o.problem.op).name).c_str(), why.c_str());
      continue;
    }
    rows.push_back(
        {e->name() + (o.expr.empty() ? "" : " [--op " + std::string(info(o.problem.op).name) + "]"), &fixture,
         e->launch, e->form, e->strategy, e->variant, std::string(info(o.problem.op).name)});
  }
  std::unique_ptr<plugin::library> user_plugin;
  if (!o.plugin_path.empty()) plugin_rows(o, fixture, user_plugin, rows);
  return table(o, env, rows, with_tiers, tiered_passed);
}

}  // namespace cdl::run_tool

int main(int argc, char** argv) {
  using namespace cdl::run_tool;
  try {
    return cdl::finish_output("cdl_run", run(parse(argc, argv)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_run: %s\n", cdl::failure_message(e, "ask for a smaller --n").c_str());
    return 2;
  }
}
