// cdl_run with a user's op: the op through strategy 10's tiers, each route's total for a number of
// launches (--launches; the tiers' stream measured whole in a new process), and 16's program
// written out for a loader of plugins/cdl_interpreter.fatbin (--steps).
#include "bench/run.hpp"

#include "common/bytecode.hpp"
#include "common/cli.hpp"
#include "common/record.hpp"
#include "common/self_process.hpp"
#include "common/timing.hpp"
#include "strategies/suite/routes.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <string>

namespace cdl::run_tool {

// When the tiers' compile thread began and each later tier was ready, from the text.
void print_parts(double began_ms, const std::array<double, 3>& ready_ms) {
  std::printf("  its parts, on the host clock from the text: the compile thread began at %.2f ms", began_ms);
  for (std::size_t t = 0; t < ready_ms.size(); ++t)
    if (ready_ms[t] >= 0)
      std::printf("; %s ready at %.2f ms", to_string(tiered_expression::tier(t + 1)), ready_ms[t]);
  std::printf("\n");
}

// A user's op through strategy 10's tiers (tiered_expression: 16's interpreter, then 17's patched
// kernel or, where 17 refuses the op, 08's baseline tier, then 08's optimised tier, as each is
// ready): launches until the optimised tier has run, each tier's first launch validated. Prints the
// launches each tier served and the first result's time from the text; returns whether every
// validation passed.
bool tiers_until_optimised(const map_fixture& f, const jit::op_text& op, map_form form) {
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
  print_parts(tiers->began_ms(), {tiers->ready_ms(tier::patched), tiers->ready_ms(tier::baseline),
                                  tiers->ready_ms(tier::optimised)});
  if (first[last] < 0) std::printf("  08's optimised tier was not ready within 60 s\n");
  return passed && first[last] >= 0;
}

// --launches' measure of 10's tiers (--tiers-stream, in a process cdl_run starts: in its own process
// the other routes have compiled the op by then, and the tiers would find 08's kernel made, 16's and
// 17's loaded). The op's launches through the tiers timed whole on the host clock, from the text to
// the last one's result, up to the first launch on 08's optimised tier (all N where it comes later):
// the host picks a tier as it queues a launch, up to `ahead` in front of the GPU, so no sum of
// the tiers' own rows gives this. Then the result validated, and that tier's launches timed one by
// one as every row's are, for the rest. Prints one JSON object.
int tiers_stream(const options& o, const map_fixture& f, const jit::op_text& op) {
  using tier = tiered_expression::tier;
  std::unique_ptr<tiered_expression> tiers;
  std::array<long long, 4> first{-1, -1, -1, -1};  // the launch each tier first ran
  long long count = 0;
  const auto launch = [&](const map_launch& a) {
    if (!tiers) tiers = std::make_unique<tiered_expression>(op);
    const tier t = tiers->launch(a);
    if (first[std::size_t(t)] < 0) first[std::size_t(t)] = count;
    ++count;
  };
  constexpr std::size_t last = std::size_t(tier::optimised);
  const auto start = std::chrono::steady_clock::now();
  while (count < o.launches && first[last] < 0) f.launch(launch, map_form::vec, nullptr);
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
  const double stream_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const long long measured = count;
  const validation_result v = f.run_and_validate(launch, map_form::vec);
  nlohmann::json out{{"measured", measured}, {"stream_ms", stream_ms}, {"first", first},
                     {"passed", v.passed},   {"summary", v.summary()}, {"rest", nullptr}};
  if (v.passed && measured < o.launches) {
    const timing_stats t = time_launches([&](cudaStream_t s) { f.launch(launch, map_form::vec, s); },
                                         {.warmup = 3, .repetitions = o.repetitions, .flush_l2 = true});
    out["rest"] = {{"p10", t.p10_ms}, {"median", t.median_ms}, {"p90", t.p90_ms}};
  }
  out["began_ms"] = tiers->began_ms();
  for (tier t : {tier::patched, tier::baseline, tier::optimised})
    out["ready_ms"].push_back(tiers->ready_ms(t));
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

tiers_total measure_tiers(const options& o) {
  const nlohmann::json r = nlohmann::json::parse(
      run_self({"--tiers-stream", "--expr", o.expr, "--type", std::string(to_string(o.problem.type)), "--n",
                std::to_string(o.problem.n), "--k", std::to_string(o.problem.k), "--seed",
                std::to_string(o.seed), "--ulps", std::to_string(o.expr_ulps), "--reps",
                std::to_string(o.repetitions), "--launches", std::to_string(o.launches)}));
  tiers_total t;
  t.measured = r.at("measured").get<long long>();
  t.stream_ms = r.at("stream_ms").get<double>();
  t.first = r.at("first").get<std::array<long long, 4>>();
  t.passed = r.at("passed").get<bool>();
  t.summary = r.at("summary").get<std::string>();
  t.began_ms = r.at("began_ms").get<double>();
  t.ready_ms = r.at("ready_ms").get<std::array<double, 3>>();
  const double rest = double(o.launches - t.measured);
  t.low = t.median = t.high = t.stream_ms;
  if (!r.at("rest").is_null()) {
    t.low += rest * r["rest"].at("p10").get<double>();
    t.median += rest * r["rest"].at("median").get<double>();
    t.high += rest * r["rest"].at("p90").get<double>();
  }
  return t;
}

void print_launches(const options& o, const std::vector<run_record>& records,
                    const std::vector<bool>& first_use, const std::optional<tiers_total>& tiers) {
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
  if (tiers && tiers->passed)
    totals.push_back({"10_tiered_dispatch.expression/vec * †", tiers->low, tiers->median, tiers->high});
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
  if (tiers && tiers->passed) {
    std::printf("† 10's tiers, in a new process: launches 1-%lld measured whole, back to back, %.3f ms (",
                tiers->measured, tiers->stream_ms);
    const char* sep = "";
    for (std::size_t t = 0; t < tiers->first.size(); ++t)
      if (tiers->first[t] >= 0) {
        std::printf("%s%s from launch %lld", sep, to_string(tiered_expression::tier(t)), tiers->first[t] + 1);
        sep = ", ";
      }
    std::printf(")%s\n", tiers->measured < o.launches ? ", the rest at the optimised tier's median" : "");
    print_parts(tiers->began_ms, tiers->ready_ms);
    if (!records.empty() && double(o.problem.min_bytes()) < past_l2 * double(records[0].env.device.l2_bytes))
      std::printf(
          "  (the working set is under %.0f L2s: the rows' launches are timed with the L2 flushed before\n"
          "   each, the stream's run back to back, which can find their inputs in the L2)\n",
          past_l2);
  }
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
  const bytecode::steps s = bytecode::lower(bytecode::encode(program ? *program : expr::parse(text)));
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
