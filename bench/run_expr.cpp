// cdl_run with a user's op: the op through strategy 10's tiers, each route's total for a
// number of launches (--launches), and 16's program written out for a loader of
// plugins/cdl_interpreter.fatbin (--steps).
#include "bench/run.hpp"

#include "common/bytecode.hpp"
#include "common/cli.hpp"
#include "common/record.hpp"
#include "strategies/suite/tiered_dispatch.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <string>

namespace cdl::run_tool {

// A user's op through strategy 10's tiers (tiered_expression: 16's interpreter, then 17's patched
// kernel or, where 17 refuses the op, 08's baseline tier, then 08's optimised tier, as each is
// ready): launches until the optimised tier has run, each tier's first launch validated. Prints the
// launches each tier served and the first result's time from the text; returns whether every
// validation passed.
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
  std::array<int, 4> first{-1, -1, -1, -1};  // the launch each tier first ran
  std::array<double, 4> at_ms{};
  bool passed = true;
  constexpr std::size_t last = std::size_t(tier::optimised);
  for (int n = 0; first[last] < 0 && since().count() < 60e3; ++n) {
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
  for (std::size_t t = 0; t <= last; ++t)
    if (first[t] >= 0)
      std::printf(" %s from launch %d (%.1f ms);", to_string(tier(t)), first[t] + 1, at_ms[t]);
  std::printf(" a launch validated as each tier was reached\n");
  if (first[last] < 0) std::printf("  08's optimised tier was not ready within 60 s\n");
  return passed && first[last] >= 0;
}

void print_launches(const options& o, const std::vector<run_record>& records,
                    const std::vector<bool>& first_use) {
  struct total {
    std::string route;
    double low, median, high;  // ms: the first launch, then the rest at p10, median and p90
  };
  std::vector<total> totals;
  const double rest = double(o.launches - 1);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const run_record& r = records[i];
    if (r.problem.value("expression", "") == o.expr && r.validation.passed)
      totals.push_back({r.strategy + (r.variant.empty() ? "" : "." + r.variant) + "/" + r.form +
                            (first_use[i] ? " *" : ""),
                        r.first_launch_ms + rest * r.timing.p10_ms,
                        r.first_launch_ms + rest * r.timing.median_ms,
                        r.first_launch_ms + rest * r.timing.p90_ms});
  }
  if (totals.empty()) return;
  std::sort(totals.begin(), totals.end(), [](const total& a, const total& b) { return a.median < b.median; });
  std::printf(
      "\n%lld launches of '%s' (map, type=%s n=%zu k=%d): each route's first launch (its compile in it),\n"
      "then the rest at its median (p10-p90); one measurement of each first launch, so its spread is not\n"
      "in the range. * the first launch of its strategy in this process, as in a new process (what the\n"
      "strategy loads on first use, 17's stencils learnt; 07 reuses the NVRTC that 06 loaded); a row\n"
      "without * reuses what its strategy's * row loaded\n",
      o.launches, o.expr.c_str(), std::string(to_string(o.problem.type)).c_str(), o.problem.n, o.problem.k);
  for (const total& t : totals)
    std::printf("  %-40s %12.3f ms  (%.3f-%.3f)\n", t.route.c_str(), t.median, t.low, t.high);
  // The cheapest, and beside it every route whose range overlaps its own: no cheaper or dearer.
  std::printf("cheapest: %s", totals[0].route.c_str());
  for (std::size_t i = 1; i < totals.size(); ++i)
    if (totals[i].low <= totals[0].high) std::printf(" or %s (the ranges overlap)", totals[i].route.c_str());
  std::printf("\n");
}

// 16's program for an op, as a loader of plugins/cdl_interpreter.fatbin needs it: the steps' bytes,
// the numbers, and the slots (which kernel), with the limits that lay out the kernel's argument
// (strategies/suite/interpreter_kernels.cuh's kernel_program: the steps, then the numbers in the element
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

}  // namespace cdl::run_tool
