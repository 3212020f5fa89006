// record.hpp's JSON form of a result record and the atomic writes every results file goes
// through; read the header first.
#include "record.hpp"

#include "check.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
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
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    write(out);
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(tmp);
      throw error("cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw error("cannot move " + tmp.string() + " to " + path.string() + ": " + ec.message());
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
