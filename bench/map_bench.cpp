// cdl_bench_map: every registered map implementation, over a sweep of n and of k, beside the
// device-to-device copy of the same bytes (the floor), in one Google Benchmark run.
//
//   cdl_bench_map [--cdl_quick] [Google Benchmark flags, e.g. --benchmark_filter=04_ --benchmark_out=r.json]
//
// Each benchmark first validates its configuration against the float64 CPU reference; a wrong
// result is reported with SkipWithError and never timed. Time is GPU time from CUDA events,
// with L2 flushed before every iteration.
#include "bench_common.hpp"

#include "common/device_info.hpp"
#include "common/inputs.hpp"
#include "common/registry.hpp"

#include <cstring>
#include <map>
#include <memory>

namespace cdl::bench {
namespace {

struct sweep {
  std::vector<std::size_t> n_values;  // at k = 1, quadratic, f32
  std::vector<int> k_values;          // at n = k_sweep_n, every op in k_ops, f32
  std::vector<map_op> k_ops;
  std::size_t k_sweep_n;
  int repetitions;
  double min_time;
};

sweep make_sweep(bool quick) {
  sweep s;
  for (int e = quick ? 16 : 10; e <= 28; e += quick ? 4 : 2) s.n_values.push_back(std::size_t(1) << e);
  s.k_values = quick ? std::vector<int>{1, 16, 256} : std::vector<int>{1, 4, 16, 64, 256};
  if (quick) s.k_ops = {map_op::quadratic, map_op::exp_sin_cos};
  else
    for (std::size_t i = 0; i < map_op_catalogue.size(); ++i) s.k_ops.push_back(static_cast<map_op>(i));
  // 2^22 elements = 32 MiB in and out: past L2 once flushed, and small enough that the float64
  // reference of k = 256 takes seconds, not minutes.
  s.k_sweep_n = std::size_t(1) << 22;
  s.repetitions = quick ? 3 : 5;
  s.min_time = quick ? 0.02 : 0.05;
  return s;
}

// One fixture at a time: benchmarks are registered problem-major, so every strategy of a
// problem reuses its inputs and reference, and the previous problem's memory is freed first.
const map_fixture& fixture_for(const map_problem& p) {
  static std::unique_ptr<map_fixture> current;
  static map_problem current_problem{};
  const bool same = current && current_problem.op == p.op && current_problem.type == p.type &&
                    current_problem.n == p.n && current_problem.k == p.k;
  if (!same) {
    current.reset();
    current = std::make_unique<map_fixture>(p, default_seed);
    current_problem = p;
  }
  return *current;
}

std::string problem_name(const map_problem& p) {
  return std::string(info(p.op).name) + "/" + std::string(to_string(p.type)) + "/n:" + std::to_string(p.n) +
         "/k:" + std::to_string(p.k);
}

void register_map(const map_entry& entry, const map_problem& p, const sweep& s, double copy_gbs,
                  std::vector<std::string>& names) {
  const std::string name = "map/" + entry.name() + "/" + problem_name(p);
  names.push_back(name);
  configure(benchmark::RegisterBenchmark(name.c_str(),
                                         [&entry, p, copy_gbs](benchmark::State& state) {
                                           // Validated once per process (Google Benchmark calls this function
                                           // once per repetition); the result is kept for the counters.
                                           static std::map<std::string, validation_result> checked;
                                           const std::string key = entry.name() + problem_name(p);
                                           const map_fixture& f = fixture_for(p);
                                           if (!checked.count(key)) checked[key] = f.run_and_validate(entry.launch, entry.form);
                                           const validation_result& v = checked[key];
                                           if (!v.passed) {
                                             state.SkipWithError(("validation failed: " + v.summary()).c_str());
                                             return;
                                           }
                                           timed_loop(
                                               state, [&](cudaStream_t st) { f.launch(entry.launch, entry.form, st); },
                                               double(p.min_bytes()), copy_gbs);
                                           state.counters["n"] = double(p.n);
                                           state.counters["k"] = p.k;
                                           state.counters["max_rel_err"] = v.max_rel_error;
                                         }),
            s.repetitions, s.min_time);
}

// The floor at each size: cudaMemcpy of the bytes a map of that size reads (it then writes as many).
void register_copy(std::size_t n, std::size_t elem_bytes, const sweep& s, double copy_gbs,
                   std::vector<std::string>& names) {
  const std::string name = "copy/cudaMemcpy/n:" + std::to_string(n) + "/bytes:" + std::to_string(elem_bytes);
  names.push_back(name);
  configure(benchmark::RegisterBenchmark(name.c_str(),
                                         [n, elem_bytes, copy_gbs](benchmark::State& state) {
                                           const copy_fixture copy(n * elem_bytes);
                                           copy.launch(nullptr);
                                           if (!copy.verify()) {
                                             state.SkipWithError("validation failed: cudaMemcpy wrote wrong data");
                                             return;
                                           }
                                           timed_loop(
                                               state, [&](cudaStream_t st) { copy.launch(st); },
                                               2.0 * double(copy.bytes()), copy_gbs);
                                           state.counters["n"] = double(n);
                                         }),
            s.repetitions, s.min_time);
}

}  // namespace
}  // namespace cdl::bench

int main(int argc, char** argv) {
  using namespace cdl;
  using namespace cdl::bench;
  bool quick = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--cdl_quick") == 0) {
      quick = true;
      std::memmove(argv + i, argv + i + 1, sizeof(char*) * std::size_t(argc - i));
      --argc;
      break;
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  try {
    require_gpu("cdl_bench_map");
    const double copy_gbs = publish_environment();
    const sweep s = make_sweep(quick);
    const auto& entries = get_registry().map;
    std::vector<std::string> names;

    for (std::size_t n : s.n_values) {
      register_copy(n, sizeof(float), s, copy_gbs, names);
      for (const map_entry& e : entries) register_map(e, {map_op::quadratic, dtype::f32, n, 1}, s, copy_gbs, names);
    }
    // float64 at the same bytes as the largest float32 size.
    const std::size_t n64 = s.n_values.back() / 2;
    for (const map_entry& e : entries) register_map(e, {map_op::quadratic, dtype::f64, n64, 1}, s, copy_gbs, names);
    for (map_op op : s.k_ops)
      for (int k : s.k_values)
        for (const map_entry& e : entries) register_map(e, {op, dtype::f32, s.k_sweep_n, k}, s, copy_gbs, names);

    progress_reporter reporter(count_selected(names));
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_bench_map: %s\n", e.what());
    return 1;
  }
  return 0;
}
