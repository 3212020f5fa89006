// record.hpp's JSON form of a result record and the atomic writes every results file goes
// through; read the header first.
#include "record.hpp"

#include "check.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#ifndef CDL_GIT_REVISION
#define CDL_GIT_REVISION "unknown"
#endif
#ifndef CDL_NVCC_VERSION
#define CDL_NVCC_VERSION "unknown"
#endif
#ifndef CDL_BUILD_TYPE
#define CDL_BUILD_TYPE "unknown"
#endif

namespace cdl {

nlohmann::json problem_fields(const std::string& describe) {
  nlohmann::json f = nlohmann::json::object();
  std::istringstream words(describe);
  std::string word;
  words >> word;
  f["workload"] = word;
  while (words >> word) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos)
      f["shape"] = word;
    else
      f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

benchmark_id identify(const std::string& entry, const std::string& describe) {
  nlohmann::json f = problem_fields(describe);
  const std::size_t slash = entry.find('/'), dot = entry.find('.');
  const std::string way = entry.substr(0, slash);
  f["strategy"] = way.substr(0, dot);
  if (dot < way.size()) f["variant"] = way.substr(dot + 1);
  if (slash != std::string::npos) f["form"] = entry.substr(slash + 1);
  const std::string problem = result_name(describe);
  const std::size_t rest = problem.find('/');
  return {f["workload"].get<std::string>() + "/" + entry +
              (rest == std::string::npos ? "" : problem.substr(rest)),
          f};
}

nlohmann::json benchmark_entries(const run_record& r) {
  const auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  std::string describe = r.workload;
  for (const char* key : {"op", "type", "n", "k"})
    if (r.problem.contains(key)) describe += std::string(" ") + key + "=" + text(r.problem[key]);
  benchmark_id id =
      identify(r.strategy + (r.variant.empty() ? "" : "." + r.variant) + "/" + r.form, describe);
  for (const auto& [key, value] : r.problem.items())
    if (!id.fields.contains(key)) id.fields[key] = text(value);
  const std::string label = id.fields.dump();
  if (!r.validation.passed)
    return nlohmann::json::array({{{"name", id.name},
                                   {"run_name", id.name},
                                   {"run_type", "iteration"},
                                   {"label", label},
                                   {"error_occurred", true},
                                   {"error_message", "validation failed: " + r.validation.summary()}}});
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [aggregate, ms] : {std::pair<const char*, double>{"median", r.timing.median_ms},
                                      {"min", r.timing.min_ms},
                                      {"max", r.timing.max_ms}})
    out.push_back({{"name", id.name + "_" + aggregate},
                   {"run_name", id.name},
                   {"run_type", "aggregate"},
                   {"aggregate_name", aggregate},
                   {"aggregate_unit", "time"},
                   {"repetitions", r.timing.repetitions},
                   {"threads", 1},
                   {"iterations", 1},
                   {"real_time", ms * 1e3},
                   {"cpu_time", 0.0},
                   {"time_unit", "us"},
                   {"label", label},
                   {"GB/s", r.bandwidth_gbs},
                   {"frac_copy", r.fraction_of_copy},
                   {"max_rel_err", r.validation.max_rel_error},
                   {"p10_us", r.timing.p10_ms * 1e3},
                   {"p90_us", r.timing.p90_ms * 1e3},
                   {"first_launch_ms", r.first_launch_ms}});
  return out;
}

nlohmann::json results_document(const std::vector<run_record>& records, const environment& env) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (const run_record& r : records)
    for (const nlohmann::json& entry : benchmark_entries(r)) benchmarks.push_back(entry);
  return {{"context",
           {{"date", env.timestamp},
            {"host_name", env.host},
            {"executable", "cdl_run"},
            {"cdl_environment", nlohmann::json(env).dump()},
            {"device", env.device.name},
            {"git_revision", env.git_revision},
            {"copy_bandwidth_gbs", std::to_string(env.copy_bandwidth_gbs)},
            {"cdl_mode", "cdl_run"}}},
          {"benchmarks", benchmarks}};
}

environment current_environment(double copy_bandwidth_gbs) {
  environment e;
  e.device = query_device();
  e.copy_bandwidth_gbs = copy_bandwidth_gbs;
  e.git_revision = CDL_GIT_REVISION;
  e.nvcc_version = CDL_NVCC_VERSION;
  e.build_type = CDL_BUILD_TYPE;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  e.host = host;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  e.timestamp = stamp;
  return e;
}

void write_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  std::error_code ec;
  if (path.has_parent_path() && !std::filesystem::is_directory(path.parent_path()) &&
      !std::filesystem::create_directories(path.parent_path(), ec))
    throw error("cannot write " + path.string() + ": cannot make its folder " + path.parent_path().string() +
                (ec ? ": " + ec.message() : ""));
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) write(out);
    out.flush();
    if (!out) {
      const std::string why = errno ? std::strerror(errno) : "the stream failed";
      out.close();
      std::filesystem::remove(tmp, ec);
      throw error("cannot write " + path.string() + ": " + why + " (it is left as it was)");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw error("cannot write " + path.string() + ": cannot move the written file into place: " + why +
                " (it is left as it was)");
  }
}

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j) {
  write_atomic(path, [&](std::ostream& out) { out << j.dump(2) << '\n'; });
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw error("cannot open results file " + path.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw error("results file " + path.string() + " is not valid JSON: " + e.what());
  }
}

}  // namespace cdl
