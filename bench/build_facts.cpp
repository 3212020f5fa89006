// cdl_build_facts: the articles' claims that a compiler answers, not a stopwatch. Each probe is
// a few lines of CUDA C++ compiled twice for the architecture the project targets: by nvcc (the
// compiler that built this program, when it is still there) and by NVRTC (strategy 06's). The
// two need not agree: NVRTC 13.0 accepts a kernel called like a function, and inlines it, where
// nvcc refuses. Outcomes and logs go to a JSON file that the report's claims table reads.
// Needs no GPU.
//
//   cdl_build_facts OUTPUT.json
#include "common/jit.hpp"
#include "common/record.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

struct probe {
  const char* id;
  const char* question;
  cdl::jit::code_kind kind;  // ltoir compiles with -rdc, which a launch from device code needs
  const char* source;
};

const probe probes[] = {
    {"global_calls_device", "Can a __global__ function call a __device__ function directly?",
     cdl::jit::code_kind::cubin,
     "__device__ float twice(float x) { return 2.0f * x; }\n"
     "__global__ void kernel(float* y) { y[threadIdx.x] = twice(y[threadIdx.x]); }\n"},
    {"global_calls_global", "Can a kernel call another kernel as a function?", cdl::jit::code_kind::cubin,
     "__global__ void inner(float* y) { y[threadIdx.x] *= 2.0f; }\n"
     "__global__ void outer(float* y) { inner(y); }\n"},
    {"global_launches_global", "Can a kernel launch another kernel (dynamic parallelism, -rdc)?",
     cdl::jit::code_kind::ltoir,
     "__global__ void inner(float* y) { y[threadIdx.x] *= 2.0f; }\n"
     "__global__ void outer(float* y) { inner<<<1, 32>>>(y); }\n"},
    {"aos_struct", "Does a kernel take an array of structs without special handling?",
     cdl::jit::code_kind::cubin,
     "struct point { float x, y; };\n"
     "__global__ void kernel(point* p, int n) {\n"
     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "  if (i < n) { p[i].x *= 2.0f; p[i].y += 1.0f; }\n"
     "}\n"},
};

// nvcc's verdict on a probe: {"compiles": bool, "log": text}, or null when nvcc is gone.
nlohmann::json nvcc_verdict(const probe& p, int arch, const std::filesystem::path& dir) {
  const std::filesystem::path nvcc = CDL_NVCC_PATH;
  if (!std::filesystem::exists(nvcc)) return nullptr;
  const std::filesystem::path src = dir / (std::string(p.id) + ".cu"),
                              log = dir / (std::string(p.id) + ".log");
  std::ofstream(src) << p.source;
  std::ostringstream cmd;  // (a chain of std::string + trips a false -Wrestrict in GCC 12)
  cmd << "'" << nvcc.string() << "' -arch=sm_" << arch << " -cubin"
      << (p.kind == cdl::jit::code_kind::ltoir ? " -rdc=true" : "") << " -o /dev/null '" << src.string()
      << "' > '" << log.string() << "' 2>&1";
  const std::string command = cmd.str();
  const int status = std::system(command.c_str());
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  return {{"compiles", status == 0}, {"log", text.str()}, {"command", command}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
    return 2;
  }
  constexpr int arch = 90;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cdl_build_facts." + std::to_string(::getpid()));
  try {
    std::filesystem::create_directories(dir);
    nlohmann::json facts = nlohmann::json::array();
    for (const probe& p : probes) {
      nlohmann::json f{{"id", p.id},
                       {"question", p.question},
                       {"source", p.source},
                       {"arch", arch},
                       {"nvrtc_options", cdl::jit::compile_options(arch, p.kind)}};
      try {
        const cdl::jit::compiled c =
            cdl::jit::compile({std::string(p.id) + ".cu", p.source, {}, {}}, arch, p.kind);
        f["nvrtc"] = {{"compiles", true}, {"log", c.log}};
      } catch (const cdl::jit::compile_error& e) {
        f["nvrtc"] = {{"compiles", false}, {"log", e.log()}};
      }
      f["nvcc"] = nvcc_verdict(p, arch, dir);
      const auto verdict = [](const nlohmann::json& v) {
        return v.is_null() ? "not run" : v["compiles"].get<bool>() ? "compiles" : "does not compile";
      };
      std::printf("%-24s nvcc: %-16s NVRTC: %s\n", p.id, verdict(f["nvcc"]), verdict(f["nvrtc"]));
      facts.push_back(f);
    }
    cdl::write_json_atomic(argv[1], {{"schema", "cdl-build-facts/1"}, {"facts", facts}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_build_facts: %s\n", e.what());
    std::filesystem::remove_all(dir);
    return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
