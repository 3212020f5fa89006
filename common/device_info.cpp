// device_info.hpp's queries: the device's properties and the copy bandwidth measured in this
// process, the floor every memory-bound figure is set against.
#include "device_info.hpp"

#include "parallel.hpp"

#include <atomic>

#include "check.hpp"
#include "device_buffer.hpp"
#include "timing.hpp"

#include <algorithm>
#include <vector>

namespace cdl {

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    cudaGetLastError();
    if (why)
      *why = std::string("no usable CUDA device: ") + cudaGetErrorName(code) + " (" +
             cudaGetErrorString(code) + ")";
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
    return false;
  }
  return true;
}

const device_info& query_device() {
  static const device_info info = [] {
    device_info d;
    CDL_CUDA_CHECK(cudaGetDevice(&d.ordinal));
    cudaDeviceProp p{};
    CDL_CUDA_CHECK(cudaGetDeviceProperties(&p, d.ordinal));
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.l2_bytes = std::size_t(p.l2CacheSize);
    d.global_mem_bytes = p.totalGlobalMem;
    d.mem_bus_bits = p.memoryBusWidth;
    // CUDA 13 removed the clock fields from cudaDeviceProp; the attributes remain.
    CDL_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, d.ordinal));
    CDL_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, d.ordinal));
    d.peak_bandwidth_gbs = 2.0 * d.mem_clock_khz * 1e3 * (d.mem_bus_bits / 8.0) / 1e9;  // double data rate
    CDL_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
    CDL_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
    return d;
  }();
  return info;
}

std::size_t default_copy_bytes() {
  std::size_t free_bytes = 0, total = 0;
  CDL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t want = std::max<std::size_t>(std::size_t(1) << 30, 8 * query_device().l2_bytes);
  return std::min(want, free_bytes / 4);
}

namespace {
std::uint32_t pattern(std::size_t i) { return std::uint32_t(i * 2654435761u) ^ 0x5bd1e995u; }
}  // namespace

copy_fixture::copy_fixture(std::size_t bytes) : bytes_(bytes / 4 * 4), src_(bytes / 4), dst_(bytes / 4) {
  std::vector<std::uint32_t> h(src_.size());
  parallel_for(h.size(), worker_count(h.size()), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) h[i] = pattern(i);
  });
  src_.copy_from(h);
  CDL_CUDA_CHECK(cudaMemset(dst_.data(), 0, dst_.bytes()));
}

void copy_fixture::launch(cudaStream_t stream) const {
  CDL_CUDA_CHECK(cudaMemcpyAsync(dst_.data(), src_.data(), bytes_, cudaMemcpyDeviceToDevice, stream));
}

bool copy_fixture::verify() const {
  CDL_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint32_t> h = dst_.to_host();
  std::atomic<bool> equal = true;
  parallel_for(h.size(), worker_count(h.size()), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end && equal; ++i)
      if (h[i] != pattern(i)) equal = false;
  });
  return equal;
}

double measure_copy_bandwidth_gbs(std::size_t bytes, int repetitions) {
  const copy_fixture copy(bytes);
  const timing_stats t = time_launches([&](cudaStream_t s) { copy.launch(s); },
                                       timing_options{.warmup = 3, .repetitions = repetitions});
  if (!copy.verify())
    throw error("device-to-device copy produced wrong data: the copy bandwidth cannot be trusted");
  return 2.0 * double(copy.bytes()) / (t.median_ms * 1e-3) / 1e9;
}

}  // namespace cdl
