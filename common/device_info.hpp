// What the results were measured on, and the floor every memory-bound figure is set against:
// the device-to-device copy bandwidth measured in the same process.
#pragma once

#include "device_buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cdl {

struct device_info {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  int sm_clock_khz = 0, mem_clock_khz = 0, mem_bus_bits = 0;
  double peak_bandwidth_gbs = 0;  // from clocks and bus width; the datasheet's number, not a measurement
  int driver_version = 0, runtime_version = 0;
};

// True when a CUDA device can be used; otherwise false and the reason (no driver, no
// device, CUDA_VISIBLE_DEVICES empty). Never throws, so callers can skip cleanly.
bool gpu_available(std::string* why = nullptr);

// The device's properties (cached per process). Throws cdl::cuda_error without a GPU.
const device_info& query_device();

// The floor itself: a device-to-device cudaMemcpy of `bytes`, from a buffer holding a seeded
// pattern. `verify` checks the destination against the pattern, so the floor is validated
// like every other result before it is trusted.
class copy_fixture {
 public:
  explicit copy_fixture(std::size_t bytes);
  void launch(cudaStream_t stream) const;
  bool verify() const;  // downloads the destination; true when it equals the source pattern
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  device_buffer<std::uint32_t> src_;
  mutable device_buffer<std::uint32_t> dst_;  // written by every copy
};

// Device-to-device cudaMemcpy bandwidth in GB/s (1e9 bytes/s), counting bytes read plus
// bytes written, median of `repetitions` copies of `bytes` each. Throws if the copy is wrong.
double measure_copy_bandwidth_gbs(std::size_t bytes, int repetitions = 20);

// A copy size that is well past L2 and that the device can hold: max(1 GiB, 8 x L2), capped
// to a quarter of the free memory.
std::size_t default_copy_bytes();

}  // namespace cdl
