// Pieces every benchmark program shares: the GPU check at start, the copy-bandwidth floor and
// environment in Google Benchmark's context, event-timed iterations, and progress lines.
#pragma once

#include "common/record.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <vector>
#include <string>

namespace cdl::bench {

// Exits with a clear message and status 1 when no GPU can be used.
void require_gpu(const char* program);

// Measures the device-to-device copy bandwidth and records it, with the device, build and
// revision, in the benchmark context (the JSON output's "context" object). Returns GB/s.
double publish_environment();

// Runs the benchmark loop: each iteration flushes L2 (untimed), then times `launch` with events
// and reports that as the iteration's manual time. Sets GB/s and fraction-of-copy counters
// for `bytes` moved per launch. Returns the total timed seconds.
double timed_loop(benchmark::State& state, const std::function<void(cudaStream_t)>& launch, double bytes,
                double copy_gbs);

// Standard settings for a GPU benchmark: manual (event) time, microseconds, a fixed number of
// iterations per repetition, repetitions with median and spread reported, and the min/max
// across repetitions.
benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b, int repetitions, int iterations);
// The same without the unit and the iteration count.
benchmark::internal::Benchmark* configure_repetitions(benchmark::internal::Benchmark* b, int repetitions);

// The console reporter, plus a "[done/total, seconds it took, seconds so far] name" line on
// stderr per finished benchmark (validation and fixture set-up included).
class progress_reporter : public benchmark::ConsoleReporter {
 public:
  explicit progress_reporter(int total) : total_(total) {}
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  int total_, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// The run-time strategies' compile, link, load and cache costs (jit_stages.cpp). Some stages run
// in a fresh process: this program started again with --cdl_jit_probe, which run_jit_probe
// recognises (returning true and the exit status) before anything else happens.
void register_jit_stages(int repetitions, std::vector<std::string>& names);
bool run_jit_probe(int argc, char** argv, int& status);

// Counts the registered names that the --benchmark_filter regex selects (Google Benchmark matches
// it against the name followed by "/iterations:..."; a trailing "/" stands in for that).
int count_selected(const std::vector<std::string>& names);

}  // namespace cdl::bench
