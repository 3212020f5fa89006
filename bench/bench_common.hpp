// Pieces every benchmark program shares: the GPU check at start, the copy-bandwidth floor and
// environment in Google Benchmark's context, event-timed iterations, and progress lines.
#pragma once

#include "common/clocks.hpp"
#include "common/record.hpp"
#include "common/timing.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cdl::bench {

// Exits with a clear message and status 1 when no GPU can be used.
void require_gpu(const char* program);

// Measures the device-to-device copy bandwidth and records it, with the device, build and
// revision, and the GPU's clocks now (cdl_clocks_start), in the benchmark context (the JSON
// output's "context" object). Returns GB/s.
double publish_environment();

// Runs the benchmark loop: each iteration flushes L2 (untimed; `flush` picks how, or none), then
// times `launch` with events and reports that as the iteration's manual time. Sets GB/s and
// fraction-of-copy counters for `bytes` moved per launch. Returns the total timed seconds.
double timed_loop(benchmark::State& state, const std::function<void(cudaStream_t)>& launch, double bytes,
                  double copy_gbs, std::optional<flush_kind> flush = flush_kind::read);

// Registers `body` as the benchmark `name` (and adds the name to `names`): the one way cdl_bench
// registers a benchmark. A body fails a benchmark with SkipWithError (never timed, the message
// in the results) or by throwing (the exception's message); the run goes on to the next one, and
// failures() counts the benchmarks that failed. After an interrupt (see interrupted()) the
// benchmarks not yet run are skipped, each marked "interrupted", so that the run ends at once
// with a whole results file. A benchmark of a workload is registered by its identity
// (record.hpp's identify): every record of it then carries the fields as its label, a JSON
// object (docs/results_format.md); the console leaves the label out.
benchmark::internal::Benchmark* register_benchmark(const std::string& name, std::vector<std::string>& names,
                                                   std::function<void(benchmark::State&)> body);
benchmark::internal::Benchmark* register_benchmark(const benchmark_id& id, std::vector<std::string>& names,
                                                   std::function<void(benchmark::State&)> body);
int failures();

// SIGINT and SIGTERM no longer kill the run: the first one sets interrupted(), the benchmark in
// flight stops at its next iteration and the rest are skipped. A second one kills as usual.
void stop_on_signals();
int interrupted();  // the signal's number, 0 when none came

// Google Benchmark writes --benchmark_out as the run goes and closes the JSON document at its end,
// so a run that stops early would leave half a document under the final name, in place of the last
// whole one. results_file gives Google Benchmark a temporary name in the same directory instead
// (by rewriting the argument) and settles it when the run ends:
//   a whole run       the GPU's clocks at the end (cdl_clocks_end) are added to the file's
//                     context, and it is renamed to FILE (a reader sees the old file or the new)
//   an interrupted one FILE stays as it was; the benchmarks that finished are kept, as a whole
//                     JSON document, in FILE with ".interrupted" before its extension
//   a run that threw  the temporary file is removed
class results_file {
 public:
  results_file(int argc, char** argv);  // before benchmark::Initialize
  ~results_file();
  results_file(const results_file&) = delete;
  results_file& operator=(const results_file&) = delete;
  // Moves the finished run's file into place and returns where it went ("" without --benchmark_out);
  // a whole run's file gets `clocks_at_end` in its context first.
  std::string settle(bool was_interrupted, const clock_reading& clocks_at_end);

 private:
  std::string final_, temporary_, argument_;
};

// Standard settings for a GPU benchmark: manual (event) time, microseconds, a fixed number of
// iterations per repetition, repetitions with median and spread reported, and the min/max
// across repetitions. The console shows the aggregates; the results file keeps every repetition
// too, for the report's significance tests.
benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b, int repetitions, int iterations);
// The same without the unit and the iteration count.
benchmark::internal::Benchmark* configure_repetitions(benchmark::internal::Benchmark* b, int repetitions);

// The console reporter, plus a "[done/total, seconds it took, seconds so far] name" line on
// stderr per finished benchmark (validation and fixture set-up included). It reads the GPU's
// clocks as the last benchmark ends, while the GPU is still warm from it.
class progress_reporter : public benchmark::ConsoleReporter {
 public:
  explicit progress_reporter(int total) : total_(total) {}
  void ReportRuns(const std::vector<Run>& runs) override;
  int finished() const { return finished_; }  // reported without an error or a skip
  const clock_reading& clocks_at_end() const { return clocks_at_end_; }

 private:
  int total_, done_ = 0, finished_ = 0;
  clock_reading clocks_at_end_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// The run-time strategies' compile, link, load and cache costs (jit_stages.cpp). Some stages run
// in a fresh process: this program started again with --cdl_jit_probe, which run_jit_probe
// recognises (returning true and the exit status) before anything else happens. `quick` keeps
// strategy 10's streams of launches to 1,000 launches at most.
void register_jit_stages(int repetitions, bool quick, std::vector<std::string>& names);
bool run_jit_probe(int argc, char** argv, int& status);

// Counts the registered names that the --benchmark_filter regex selects (Google Benchmark matches
// it against the name followed by "/iterations:..."; a trailing "/" stands in for that).
int count_selected(const std::vector<std::string>& names);

}  // namespace cdl::bench
