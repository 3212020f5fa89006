// GPU timing with CUDA events. Host clocks would time the launch, not the kernel; events are
// recorded in the stream and read after it drains, so they bracket exactly the GPU work.
//
// Before each timed repetition the L2 is flushed, outside the timed region, so a working set
// that fits in L2 is timed cold, as it would be in a real pipeline, rather than served from
// cache by the previous repetition. The flush *reads* a scratch buffer twice the L2's size and
// writes nothing that stays: it leaves the L2 full of clean lines, so no write-back of its own
// lands in the timed launch. A flush that writes (a cudaMemset of the scratch, the usual idiom)
// leaves the L2 full of dirty lines instead, and the next launch pays for writing them back
// (cdl_bench's flush/ benchmarks measure it; the report's flush section gives the figure).
#pragma once

#include "device_buffer.hpp"

#include <cstddef>
#include <functional>
#include <vector>

namespace cdl {

class event_pair {
 public:
  event_pair();
  ~event_pair();
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;

  void start(cudaStream_t s);
  void stop(cudaStream_t s);
  // Waits for the stop event; milliseconds between the two.
  double elapsed_ms();

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

enum class flush_kind {
  read,    // reads 2 x L2 and writes nothing that stays: the L2 is left clean (the suite's flush)
  memset,  // cudaMemset of 2 x L2: the L2 is left dirty (kept to measure what that costs)
  // No flush: a kernel that touches no memory holds the GPU while the host queues the events and
  // the launch. A flush does that too; with nothing before it, the GPU reaches the start event
  // before the host has queued the launch, and the pair times the host's queuing as well.
  hold,
};

class l2_flusher {
 public:
  explicit l2_flusher(std::size_t l2_bytes, flush_kind kind = flush_kind::read);
  void flush(cudaStream_t s);

 private:
  flush_kind kind_;
  device_buffer<std::byte> scratch_;
  device_buffer<unsigned> sink_;
  int pass_ = 0;
};

// A kernel that does nothing, one block of one thread: the floor of a timed launch (launch
// latency and the events around it), and a probe of what a flush leaves behind.
void launch_empty_kernel(cudaStream_t s);

// Median and spread of a set of timings.
struct timing_stats {
  int repetitions = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;

  static timing_stats of(std::vector<double> samples_ms);
  // (p90 - p10) / median: the run-to-run spread a difference must exceed to mean anything.
  double relative_spread() const { return median_ms > 0 ? (p90_ms - p10_ms) / median_ms : 0; }
};

struct timing_options {
  int warmup = 3;
  int repetitions = 30;
  bool flush_l2 = true;
};

// Times `launch` (which enqueues work on the given stream): warm-up runs, then each
// repetition bracketed by its own events.
timing_stats time_launches(const std::function<void(cudaStream_t)>& launch, const timing_options& options,
                           cudaStream_t stream = nullptr);

}  // namespace cdl
