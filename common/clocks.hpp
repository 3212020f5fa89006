// The GPU's clocks, and why the driver holds them back, at a moment of a run: cdl_bench reads
// them at its start and its end, and the report warns when they moved, since a GPU that slowed
// down (power, heat) during a run makes its later benchmarks look slower than its earlier ones.
//
// Read through NVML, the driver's management library, loaded at run time: a machine without a
// driver (CI, a laptop without a GPU) has none, and the reading then says why it is missing
// instead of failing the run.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cdl {

struct clock_reading {
  bool available = false;
  std::string missing;                          // why there is no reading, when not available
  unsigned sm_mhz = 0, memory_mhz = 0;          // now
  unsigned sm_max_mhz = 0, memory_max_mhz = 0;  // the most the GPU allows
  unsigned long long reasons = 0;               // NVML's clocks event (throttle) reasons, a bitmask
  std::vector<std::string> reason_names;        // the same, by name ("sw_power_cap", ...)
  unsigned temperature_c = 0;
  double power_w = 0;
};

// Reads the current device's clocks (the NVML device with the CUDA device's PCI bus id).
clock_reading read_clocks();

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(clock_reading, available, missing, sm_mhz, memory_mhz, sm_max_mhz,
                                   memory_max_mhz, reasons, reason_names, temperature_c, power_w)

}  // namespace cdl
