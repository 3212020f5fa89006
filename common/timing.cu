// timing.hpp's event-timed launches and the L2 flush kernel that precedes each timed launch.
#include "timing.hpp"

#include "device_info.hpp"

#include <algorithm>
#include <cmath>

namespace cdl {

event_pair::event_pair() {
  CDL_CUDA_CHECK(cudaEventCreate(&start_));
  CDL_CUDA_CHECK(cudaEventCreate(&stop_));
}
event_pair::~event_pair() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}
void event_pair::start(cudaStream_t s) { CDL_CUDA_CHECK(cudaEventRecord(start_, s)); }
void event_pair::stop(cudaStream_t s) { CDL_CUDA_CHECK(cudaEventRecord(stop_, s)); }
double event_pair::elapsed_ms() {
  CDL_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  CDL_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

namespace {
// Every 16 bytes of the scratch are loaded once; the XOR of them is stored only if it equals
// `never`, which the host picks so that it cannot (the scratch is all zeros), so the loads
// cannot be optimised away and nothing is written.
__global__ void read_flush_kernel(const uint4* __restrict__ scratch, std::size_t n, unsigned never,
                                  unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = scratch[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == never) *sink = acc;
}
__global__ void empty_kernel() {}
// One thread waits on the GPU's nanosecond timer: longer than a host takes to queue a launch.
__global__ void hold_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
constexpr unsigned long long hold_ns = 200'000;
}  // namespace

void launch_empty_kernel(cudaStream_t s) {
  empty_kernel<<<1, 1, 0, s>>>();
  CDL_CHECK_LAUNCH();
}

l2_flusher::l2_flusher(std::size_t l2_bytes, flush_kind kind)
    : kind_(kind),
      scratch_(kind == flush_kind::hold ? 0 : 2 * l2_bytes / sizeof(uint4) * sizeof(uint4)),
      sink_(1) {
  // Zeros, written once here: the first flush writes them back, every later one finds them clean.
  CDL_CUDA_CHECK(cudaMemset(scratch_.data(), 0, scratch_.bytes()));
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
}

void l2_flusher::flush(cudaStream_t s) {
  if (kind_ == flush_kind::hold) {
    hold_kernel<<<1, 1, 0, s>>>(hold_ns);
    CDL_CHECK_LAUNCH();
    return;
  }
  if (scratch_.bytes() == 0) return;
  if (kind_ == flush_kind::memset) {
    CDL_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), ++pass_ & 0xFF, scratch_.bytes(), s));
    return;
  }
  const std::size_t n = scratch_.bytes() / sizeof(uint4);
  const unsigned blocks =
      unsigned(std::min<std::size_t>((n + 255) / 256, std::size_t(query_device().sm_count) * 8));
  read_flush_kernel<<<blocks, 256, 0, s>>>(reinterpret_cast<const uint4*>(scratch_.data()), n, 0xFFFFFFFFu,
                                           sink_.data());
  CDL_CHECK_LAUNCH();
}

timing_stats timing_stats::of(std::vector<double> ms) {
  timing_stats t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  // Linear interpolation between order statistics (the usual "type 7" quantile).
  const auto quantile = [&](double q) {
    const double pos = q * double(ms.size() - 1);
    const std::size_t lo = std::size_t(std::floor(pos)), hi = std::min(lo + 1, ms.size() - 1);
    return ms[lo] + (ms[hi] - ms[lo]) * (pos - double(lo));
  };
  t.repetitions = int(ms.size());
  t.median_ms = quantile(0.5);
  t.p10_ms = quantile(0.1);
  t.p90_ms = quantile(0.9);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  return t;
}

timing_stats time_launches(const std::function<void(cudaStream_t)>& launch, const timing_options& options,
                           cudaStream_t stream) {
  for (int i = 0; i < options.warmup; ++i) launch(stream);
  CDL_CUDA_CHECK(cudaStreamSynchronize(stream));

  l2_flusher flusher(options.flush_l2 ? query_device().l2_bytes : 0);
  event_pair events;
  std::vector<double> samples;
  samples.reserve(std::size_t(options.repetitions));
  for (int r = 0; r < options.repetitions; ++r) {
    if (options.flush_l2) flusher.flush(stream);
    events.start(stream);
    launch(stream);
    events.stop(stream);
    samples.push_back(events.elapsed_ms());
  }
  return timing_stats::of(std::move(samples));
}

}  // namespace cdl
