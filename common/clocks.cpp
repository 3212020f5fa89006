// clocks.hpp's readings, from NVML, which is loaded at run time (no libnvidia-ml at link time,
// so the programs start without a driver); read the header first.
#include "clocks.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <type_traits>
#include <utility>

namespace cdl {
namespace {

// The few NVML entry points used, by their C signatures (nvml.h is not part of the CUDA Toolkit
// here; its ABI is stable). nvmlReturn_t 0 is NVML_SUCCESS.
using nvml_device = void*;
struct nvml_api {
  int (*init)();
  int (*by_pci_bus_id)(const char*, nvml_device*);
  int (*clock)(nvml_device, int, unsigned*);
  int (*max_clock)(nvml_device, int, unsigned*);
  int (*reasons)(nvml_device, unsigned long long*);
  int (*temperature)(nvml_device, int, unsigned*);
  int (*power_mw)(nvml_device, unsigned*);
};
constexpr int nvml_clock_sm = 1, nvml_clock_memory = 2, nvml_temperature_gpu = 0;

// NVML's clocks event reasons (nvmlClocksEventReason*), bit by bit.
constexpr std::pair<unsigned long long, const char*> reason_bits[] = {{0x1, "gpu_idle"},
                                                                      {0x2, "applications_clocks_setting"},
                                                                      {0x4, "sw_power_cap"},
                                                                      {0x8, "hw_slowdown"},
                                                                      {0x10, "sync_boost"},
                                                                      {0x20, "sw_thermal_slowdown"},
                                                                      {0x40, "hw_thermal_slowdown"},
                                                                      {0x80, "hw_power_brake_slowdown"},
                                                                      {0x100, "display_clock_setting"}};

// Loads NVML once per process; null with `why` when it cannot.
const nvml_api* nvml(std::string& why) {
  static std::string failure;
  static const nvml_api* api = []() -> const nvml_api* {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      failure = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) cannot be loaded";
      return nullptr;
    }
    static nvml_api a{};
    const auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    // Drivers before 535 name the reasons function "ClocksThrottleReasons"; the bits are the same.
    if (!sym(a.init, "nvmlInit_v2") || !sym(a.by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") ||
        !sym(a.clock, "nvmlDeviceGetClockInfo") || !sym(a.max_clock, "nvmlDeviceGetMaxClockInfo") ||
        !(sym(a.reasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
          sym(a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons")) ||
        !sym(a.temperature, "nvmlDeviceGetTemperature") || !sym(a.power_mw, "nvmlDeviceGetPowerUsage")) {
      failure = "NVML lacks a function this program reads";
      return nullptr;
    }
    if (int rc = a.init(); rc != 0) {
      failure = "nvmlInit_v2 failed (nvmlReturn_t " + std::to_string(rc) + ")";
      return nullptr;
    }
    return &a;
  }();
  why = failure;
  return api;
}

}  // namespace

clock_reading read_clocks() {
  clock_reading r;
  const nvml_api* api = nvml(r.missing);
  if (!api) return r;
  char bus_id[32] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    cudaGetLastError();
    r.missing = "no CUDA device to read the clocks of";
    return r;
  }
  nvml_device d = nullptr;
  unsigned milliwatts = 0;
  if (api->by_pci_bus_id(bus_id, &d) != 0) {
    r.missing = std::string("NVML does not know the device at ") + bus_id;
    return r;
  }
  const int reads[] = {api->clock(d, nvml_clock_sm, &r.sm_mhz),
                       api->clock(d, nvml_clock_memory, &r.memory_mhz),
                       api->max_clock(d, nvml_clock_sm, &r.sm_max_mhz),
                       api->max_clock(d, nvml_clock_memory, &r.memory_max_mhz),
                       api->reasons(d, &r.reasons),
                       api->temperature(d, nvml_temperature_gpu, &r.temperature_c),
                       api->power_mw(d, &milliwatts)};
  for (int code : reads)
    if (code != 0) {
      r.missing = "an NVML query failed (nvmlReturn_t " + std::to_string(code) + ")";
      return r;
    }
  r.power_w = milliwatts / 1000.0;
  for (const auto& [bit, name] : reason_bits)
    if (r.reasons & bit) r.reason_names.push_back(name);
  r.available = true;
  return r;
}

}  // namespace cdl
