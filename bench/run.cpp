// cdl_run: run one registered strategy (or all of them) on one map problem, validate it, time
// it, print a line per strategy and optionally write the result records as JSON. The demo for
// readers of strategies/: pick a file, run its entry, compare with the baseline.
//
//   cdl_run --list
//   cdl_run --strategy 04_function_pointer.symbol/vec --op sine --n 16777216 --k 16 [--json out.json]
//   cdl_run --strategy all --op quadratic --type f64 --n 1e8
//
// With --expr, the op is the user's, compiled at run time and timed beside every built-in strategy
// running --op. A program of strategy 08's expression language (common/expression.hpp) runs first
// through strategy 10's tiers (16's interpreter, then 17's patched kernel, or 08's baseline tier
// where 17 refuses the op, then 08's optimised tier: the launch each tier served first), then
// through 08, through 16 (no compiler: its first launch is the op's first result), through 17 where
// its stencils hold the op (no compiler either: machine code patched; the line says why where it is
// refused), and through 06 and 07 as the C++ it prints, all validated against the language's
// float64 interpreter. The tiers compile 08's vec kernel, so 08's vec row then launches what they
// compiled; with --strategy naming another strategy than 10, the tiers do not run and every route's
// first launch is its own. Any other text is taken as C++ (an expression in x of type T, or a
// function body with `return`) for 06 and 07 alone, validated against the same text compiled for
// the host; the table says why 08 did not run, naming the position.
//
//   cdl_run --expr 's = sin(x); s * s + 2 * x' --n 2^26
//   cdl_run --expr 'T y = sin(x); return y * y;' --type f64 --dump-source
//
// With --plugin FILE, a map plugin built ahead of time (strategy 13) is loaded and its kernels
// timed beside the strategies, validated against --op (the op the plugin was built for):
//
//   cdl_run --plugin plugins/cdl_plugin_sine.fatbin --op sine --strategy 01_template_functor/vec
//   (from build/release, where the plugins are built)
#include "bench/run.hpp"

#include "common/cli.hpp"
#include "common/inputs.hpp"
#include "common/record.hpp"
#include "common/registry.hpp"
#include "common/skeletons/elementwise.cuh"
#include "strategies/suite/copy_and_patch.hpp"
#include "strategies/suite/expression_jit.hpp"
#include "strategies/suite/interpreter.hpp"
#include "strategies/suite/plugin.hpp"
#include "strategies/suite/tiered_dispatch.hpp"
#include "strategies/suite/user_op.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdl::run_tool {

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
      "%-44s %10.4f ms  (p10 %.4f, p90 %.4f)  %7.0f GB/s  %s  max rel err %-8.2g first launch "
      "%.1f ms%s\n",
      w.name.c_str(), r.timing.median_ms, r.timing.p10_ms, r.timing.p90_ms, r.bandwidth_gbs,
      of_copy(r).c_str(), r.validation.max_rel_error, r.first_launch_ms,
      w.first_use ? " (its strategy's first use here)" : "");
  return r;
}

int run(const options& o) {
  if (o.list) {
    for (const map_entry& e : get_registry().map) std::printf("%s\n", e.name().c_str());
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
  // parsed once, above: 08, 16 and 17 (and 10's tiers) take the program from here
  const jit::op_text user_expression{"user", o.expr,
                                     program ? std::make_shared<const expr::program>(*program) : nullptr};
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
  if (o.strategy == "all") {
    for (const map_entry& e : get_registry().map) chosen.push_back(&e);
  } else {
    // A list of names, each checked before anything runs: a run of several strategies shares one
    // process, one problem and one float64 reference.
    for (std::size_t at = 0; at <= o.strategy.size();) {
      const std::size_t comma = std::min(o.strategy.find(',', at), o.strategy.size());
      chosen.push_back(&find_map_entry(std::string_view(o.strategy).substr(at, comma - at)));
      at = comma + 1;
    }
  }

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
    return tiers_stream(o, map_fixture(o.problem, o.seed, language_op(*program, o.expr_ulps)),
                        user_expression);
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
  bool tiered_passed = true, ran_tiers = false;
  if (!o.expr.empty()) {
    custom_map_op reference;
    if (program) {
      reference = language_op(*program, o.expr_ulps);  // its magnitude the scale: x / 4 - x * x cancels
    } else {
      std::printf("08_expression_jit/* [--expr]: not run: the op is not in 08's language: %s\n",
                  not_in_language.c_str());
      host_reference = std::make_unique<host_op>(user);
      reference = {host_reference->function(), o.expr_ulps};
    }
    user_fixture = std::make_unique<map_fixture>(o.problem, o.seed, reference);
    // First, while the text is new to this process: no tier's compile has been made yet.
    // (not with --launches: each route's first launch must then be its own compile, and the
    // tiers' stream is measured in a process of its own)
    if (with_tiers && o.launches == 0) {
      tiered_passed = tiers_until_optimised(*user_fixture, user_expression, map_form::vec);
      ran_tiers = true;
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
    // The vec form first: the one a user runs carries its strategy's first use (08's baseline
    // reuses the libNVVM 08's row loaded; where the tiers ran, they made 08's, 16's and 17's).
    const auto first_use = [&](const std::string& strategy) {
      return strategy != "08_expression_jit.baseline" &&
             (!ran_tiers || strategy == "06_nvrtc_jit" || strategy == "07_jit_lto");
    };
    for (const auto& [strategy, launch] : launchers)
      for (map_form form : {map_form::vec, map_form::scalar})
        rows.push_back({strategy + "/" + std::string(to_string(form)) + " [--expr]", user_fixture.get(),
                        launch, form, strategy, "", o.expr, form == map_form::vec && first_use(strategy)});
    // 17's patched kernel: float, the operations it has stencils for; the vec form where the op
    // fits its image (else the scalar image runs, and the line says why).
    if (program) {
      const auto learning = std::chrono::steady_clock::now();  // 17's stencils, learnt once a process
      const std::string why = copy_and_patch::refusal(o.expr, o.problem.type);
      const double learnt_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - learning).count();
      if (!why.empty()) {
        std::printf("17_copy_and_patch/vec [--expr]: not run: %s\n", why.c_str());
      } else {
        if (const std::string why = copy_and_patch::scalar_only(o.expr); !why.empty())
          std::printf("17_copy_and_patch/vec [--expr]: runs the scalar image, an element a thread: %s\n",
                      why.c_str());
        rows.push_back(
            {"17_copy_and_patch/vec [--expr]", user_fixture.get(),
             [&user_expression](const map_launch& a) { copy_and_patch::launch_map(a, user_expression); },
             map_form::vec, "17_copy_and_patch", "", o.expr, first_use("17"), learnt_ms});
      }
    }
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
  std::vector<run_record> records;
  bool all_passed = tiered_passed;
  bool dagger = false;
  for (const row& w : rows) {
    records.push_back(run_row(w, o, env));
    all_passed = all_passed && records.back().validation.passed;
    dagger = dagger || (records.back().validation.passed && !copy_finding(records.back()));
  }
  if (dagger)
    std::printf(
        "† not a bandwidth finding: the working set is under %.0f× the L2 (%.0f MiB), or the figure is "
        "above the copy's own bandwidth\n",
        past_l2, past_l2 * double(env.device.l2_bytes) / (1 << 20));
  if (o.launches > 0) {
    std::vector<bool> first_use;
    for (const row& w : rows) first_use.push_back(w.first_use);
    // 10's tiers in a process of their own, where no route has compiled the op yet.
    std::optional<tiers_total> tiers;
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

}  // namespace cdl::run_tool

int main(int argc, char** argv) {
  using namespace cdl::run_tool;
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_run: %s\n", cdl::failure_message(e, "ask for a smaller --n").c_str());
    return 2;
  }
}
