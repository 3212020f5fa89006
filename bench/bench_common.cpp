// How bench_common.hpp's pieces work: the GPU check, the copy bandwidth and environment in the
// benchmark context, the interrupt handling that still writes a whole results file, and the
// progress lines on stderr. Read the header first; suite.cpp and jit_stages.cpp use these.
#include "bench_common.hpp"

#include "common/device_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <regex>
#include <set>

namespace cdl::bench {

void require_gpu(const char* program) {
  std::string why;
  if (!gpu_available(&why)) {
    std::fprintf(stderr, "%s: cannot benchmark: %s\n", program, why.c_str());
    std::exit(1);
  }
}

double publish_environment() {
  const double copy = measure_copy_bandwidth_gbs(default_copy_bytes());
  const environment env = current_environment(copy);
  benchmark::AddCustomContext("cdl_environment", nlohmann::json(env).dump());
  benchmark::AddCustomContext("device", env.device.name);
  benchmark::AddCustomContext("copy_bandwidth_gbs", std::to_string(copy));
  benchmark::AddCustomContext("git_revision", env.git_revision);
  // The map skeleton's vec form runs one k loop for all of a thread's values (map_apply_fused, as
  // 08's IR always did); runs from before it ran one loop per value, and the report sets 08 apart.
  benchmark::AddCustomContext("cdl_map_vec_loop", "fused");
  // After the copy measurement, so that the clocks are those of a busy GPU, not an idle one.
  benchmark::AddCustomContext("cdl_clocks_start", nlohmann::json(read_clocks()).dump());
  std::fprintf(stderr, "device: %s, %d SMs, L2 %.0f MiB; device-to-device copy: %.0f GB/s (peak %.0f GB/s)\n",
               env.device.name.c_str(), env.device.sm_count, double(env.device.l2_bytes) / (1 << 20), copy,
               env.device.peak_bandwidth_gbs);
  return copy;
}

namespace {
volatile std::sig_atomic_t signal_seen = 0;
std::set<std::string> failed;  // benchmarks run one at a time, on the main thread
constexpr const char* interrupted_message = "interrupted";
}  // namespace

void stop_on_signals() {
  struct sigaction action {};
  action.sa_handler = [](int signal) { signal_seen = signal; };
  action.sa_flags = SA_RESETHAND;  // the second signal takes the default action: the process ends
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM}) sigaction(signal, &action, nullptr);
}

int interrupted() { return signal_seen; }

int failures() { return int(failed.size()); }

namespace {
benchmark::internal::Benchmark* register_labelled(const std::string& name, const std::string& label,
                                                  std::vector<std::string>& names,
                                                  std::function<void(benchmark::State&)> body) {
  names.push_back(name);
  return benchmark::RegisterBenchmark(
      name.c_str(), [name, label, body = std::move(body)](benchmark::State& state) {
        if (!label.empty()) state.SetLabel(label);
        if (interrupted()) {
          state.SkipWithError(interrupted_message);
        } else {
          try {
            body(state);
          } catch (const std::exception& e) {
            state.SkipWithError(e.what());
          }
          if (state.error_occurred() && !interrupted()) failed.insert(name);
        }
        // A repetition that failed before its loop began reports 0 iterations, and Google Benchmark
        // 1.7 asserts that every repetition of a benchmark reports the same count (a run interrupted
        // between repetitions ended in that assertion). Entering the loop after the error starts and
        // ends it at once, and the repetition then reports its full count, as the others do.
        if (state.error_occurred() && state.iterations() == 0)
          for ([[maybe_unused]] auto _ : state) {
          }
      });
}
}  // namespace

benchmark::internal::Benchmark* register_benchmark(const std::string& name, std::vector<std::string>& names,
                                                   std::function<void(benchmark::State&)> body) {
  return register_labelled(name, "", names, std::move(body));
}

benchmark::internal::Benchmark* register_benchmark(const benchmark_id& id, std::vector<std::string>& names,
                                                   std::function<void(benchmark::State&)> body) {
  return register_labelled(id.name, id.fields.dump(), names, std::move(body));
}

results_file::results_file(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = "--benchmark_out=";
    if (std::strncmp(argv[i], flag.data(), flag.size()) != 0) continue;
    final_ = argv[i] + flag.size();
    if (final_.empty()) continue;
    temporary_ = final_ + ".tmp." + std::to_string(::getpid());
    argument_ = std::string(flag) + temporary_;
    argv[i] = argument_.data();  // Google Benchmark copies the value; argument_ lives on regardless
  }
}

results_file::~results_file() {
  std::error_code ignored;                                                // a destructor must not throw
  if (!temporary_.empty()) std::filesystem::remove(temporary_, ignored);  // a run that threw
}

std::string results_file::settle(bool was_interrupted, const clock_reading& clocks_at_end) {
  if (temporary_.empty()) return "";
  std::filesystem::path target = final_;
  if (was_interrupted) {
    target.replace_extension(".interrupted" + target.extension().string());
  } else {
    // Google Benchmark wrote the context before the run; the clocks at its end join it here, as
    // text: the file need not be JSON a strict parser takes (Google Benchmark writes NaN, e.g.
    // for the spread of a counter whose mean is 0).
    std::string text;
    {
      std::ifstream in(temporary_, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::string context = "\"context\": {";
    const std::size_t at = text.find(context);
    if (at == std::string::npos) throw error("results file " + temporary_ + " has no context object");
    const std::string field =
        "\n    \"cdl_clocks_end\": " + nlohmann::json(nlohmann::json(clocks_at_end).dump()).dump() + ",";
    text.insert(at + context.size(), field);
    write_atomic(temporary_, [&](std::ostream& out) { out << text; });
  }
  std::filesystem::rename(std::exchange(temporary_, ""), target);
  return target;
}

double timed_loop(benchmark::State& state, const std::function<void(cudaStream_t)>& launch, double bytes,
                  double copy_gbs, std::optional<flush_kind> flush) {
  const cudaStream_t stream = nullptr;
  // One flusher of each kind the process uses, made at its first use: the other kinds serve only
  // the benchmarks that show what each leaves behind.
  static std::map<flush_kind, std::unique_ptr<l2_flusher>> flushers;
  l2_flusher* flusher = nullptr;
  if (flush) {
    std::unique_ptr<l2_flusher>& made = flushers[*flush];
    if (!made) made = std::make_unique<l2_flusher>(query_device().l2_bytes, *flush);
    flusher = made.get();
  }
  event_pair events;
  double total_s = 0;
  for (auto _ : state) {
    if (interrupted()) {  // stop now: the benchmark's repetitions would take their whole time
      state.SkipWithError(interrupted_message);
      return 0;
    }
    if (flusher) flusher->flush(stream);
    events.start(stream);
    launch(stream);
    events.stop(stream);
    const double s = events.elapsed_ms() * 1e-3;
    state.SetIterationTime(s);
    total_s += s;
  }
  if (bytes > 0) {  // none for a launch that moves nothing (an empty kernel): no 0/0 spreads
    const double iterations = double(state.iterations());
    const double gbs = bytes * iterations / total_s / 1e9;
    state.SetBytesProcessed(int64_t(bytes * iterations));
    state.counters["GB/s"] = gbs;
    state.counters["frac_copy"] = gbs / copy_gbs;
  }
  return total_s;
}

benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b, int repetitions,
                                          int iterations) {
  return configure_repetitions(b, repetitions)->Unit(benchmark::kMicrosecond)->Iterations(iterations);
}

benchmark::internal::Benchmark* configure_repetitions(benchmark::internal::Benchmark* b, int repetitions) {
  return b->UseManualTime()
      ->Repetitions(repetitions)
      ->DisplayAggregatesOnly(true)
      ->ComputeStatistics("min",
                          [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
      ->ComputeStatistics("max",
                          [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
}

namespace {
// Google Benchmark 1.8 replaced Run::error_occurred with Run::skipped.
template <class Run>
bool skipped(const Run& r) {
  if constexpr (requires { r.skipped; })
    return bool(r.skipped);
  else
    return r.error_occurred;
}
}  // namespace

void progress_reporter::ReportRuns(const std::vector<Run>& runs) {
  std::vector<Run> shown = runs;  // the label (the fields, for the results file) is not for the console
  for (Run& r : shown) r.report_label.clear();
  ConsoleReporter::ReportRuns(shown);
  if (runs.empty()) return;
  if (!skipped(runs.front())) ++finished_;
  const auto now = std::chrono::steady_clock::now();
  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  if (done_ + 1 == total_) clocks_at_end_ = read_clocks();
  std::fprintf(stderr, "[%d/%d, %.1f s, %.0f s in] %s\n", ++done_, total_, seconds(now - last_),
               seconds(now - start_), runs.front().run_name.function_name.c_str());
  last_ = now;
}

int count_selected(const std::vector<std::string>& names) {
  const std::string flag = benchmark::GetBenchmarkFilter();
  const std::string filter = flag.empty() || flag == "all" ? std::string(".") : flag;
  const bool negate = filter.front() == '-';
  const std::regex re(negate ? filter.substr(1) : filter);
  return int(std::count_if(names.begin(), names.end(),
                           [&](const std::string& n) { return std::regex_search(n + "/", re) != negate; }));
}

}  // namespace cdl::bench
