// The result record: one run of one (strategy, workload) configuration, with everything a
// report needs to trust and place it (validation, timing, floor, environment, revision).
// Serialised with nlohmann/json; files are written atomically (temporary file, then rename),
// so a reader never sees half a file.
#pragma once

#include "device_info.hpp"
#include "timing.hpp"
#include "validation.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace cdl {

struct environment {
  device_info device;
  double copy_bandwidth_gbs = 0;  // measured in the same process
  std::string git_revision;
  std::string nvcc_version;
  std::string build_type;
  std::string host;
  std::string timestamp;  // UTC, ISO 8601
};

struct run_record {
  std::string strategy, variant, form, workload;
  nlohmann::json problem;  // the workload's own knobs (op, type, n, k, ...)
  validation_result validation;
  timing_stats timing;
  double bytes = 0;             // minimum bytes the kernel must move
  double bandwidth_gbs = 0;     // bytes / median time
  double fraction_of_copy = 0;  // bandwidth / environment.copy_bandwidth_gbs
  double first_launch_ms = 0;   // wall clock of the first launch, synchronised: a JIT's compile and load
  environment env;
};

// The environment of this process: device, build, host, time; copy bandwidth as given.
environment current_environment(double copy_bandwidth_gbs);

// JSON conversions (found by nlohmann::json through argument-dependent lookup).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(device_info, ordinal, name, cc_major, cc_minor, sm_count,
                                                l2_bytes, global_mem_bytes, sm_clock_khz, mem_clock_khz,
                                                mem_bus_bits, peak_bandwidth_gbs, driver_version,
                                                runtime_version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(validation_result, passed, checked, failures, first_bad, first_bad_got,
                                   first_bad_expected, max_abs_error, max_rel_error, tolerance)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(timing_stats, repetitions, median_ms, min_ms, max_ms, p10_ms, p90_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(environment, device, copy_bandwidth_gbs, git_revision, nvcc_version,
                                   build_type, host, timestamp)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(run_record, strategy, variant, form, workload, problem, validation, timing,
                                   bytes, bandwidth_gbs, fraction_of_copy, first_launch_ms, env)

// A problem's name in result files, made from its describe(): "map op=sine type=f32 n=4" ->
// "map/op:sine/type:f32/n:4". cdl_bench and cdl_problem (for the Python peers) both use it.
inline std::string result_name(std::string describe) {
  for (char& c : describe) c = c == ' ' ? '/' : c == '=' ? ':' : c;
  return describe;
}

// A problem's fields, from its describe(): "image op=sobel 3840x2160 r=1" -> {"workload": "image",
// "op": "sobel", "shape": "3840x2160", "r": "1"}. Values are text, as a name has them; a token
// without a key is the problem's "shape".
nlohmann::json problem_fields(const std::string& describe);

// A benchmark's identity, made once from its parts (docs/results_format.md): its name
// ("map/<strategy>.<variant>/<form>/op:sine/type:f32/n:4/k:1") and the same parts as fields,
// which every record of it carries, so that no reader takes a name apart: the problem's fields
// and the entry's ("strategy[.variant][/form]"): {"strategy": ..., "variant": ..., "form": "vec",
// ...}.
struct benchmark_id {
  std::string name;
  nlohmann::json fields;
};
benchmark_id identify(const std::string& entry, const std::string& describe);

// cdl_run's records in cdl_bench's results format (docs/results_format.md), so that one reader
// serves both: a record's median, min and max as Google Benchmark's aggregates (µs), each with its
// fields as the label and its counters; one that failed validation as an error entry. A user's op
// (--expr) is the problem's op "expression", its text in the field of that name.
nlohmann::json benchmark_entries(const run_record& r);
nlohmann::json results_document(const std::vector<run_record>& records, const environment& env);

// Writes `path` through a temporary file in the same directory and a rename: a reader (or a run
// interrupted half way) sees the old file or the whole new one, never part of one.
void write_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);
// Writes `j` to `path` through a temporary file in the same directory and a rename.
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j);
// Reads and parses `path`; throws cdl::error naming the file and what is wrong with it.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace cdl
