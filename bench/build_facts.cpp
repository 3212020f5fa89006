// cdl_build_facts: the articles' claims that a compiler answers, not a stopwatch. Each probe is
// a few lines of CUDA C++ compiled twice for the architecture the project targets: by nvcc (the
// compiler that built this program, when it is still there) and by NVRTC (strategy 06's). The
// two need not agree (NVRTC 13.0 accepts a kernel called like a function, where nvcc refuses),
// so what NVRTC made of a probe is read from its machine code: each function's instructions and
// calls, from cuobjdump -sass of the CUBIN. One probe is also run: a kernel launching a kernel
// (dynamic_parallelism.cu), on the GPU when there is one. Outcomes, logs and SASS summaries go to
// a JSON file that the report's claims table reads. Needs no GPU for the rest.
//
//   cdl_build_facts OUTPUT.json
#include "common/jit.hpp"
#include "common/record.hpp"
#include "dynamic_parallelism.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
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

// What a CUBIN holds, per function: its instruction count, its CALLs and its distinct opcodes
// (cuobjdump -sass, beside nvcc), so that "the callee was inlined" is read, not asserted. Null
// when cuobjdump is not there.
nlohmann::json sass_summary(const std::vector<char>& cubin, const std::string& id,
                            const std::filesystem::path& dir) {
  const std::filesystem::path cuobjdump = std::filesystem::path(CDL_NVCC_PATH).parent_path() / "cuobjdump";
  if (!std::filesystem::exists(cuobjdump)) return nullptr;
  const std::filesystem::path bin = dir / (id + ".nvrtc.cubin"), sass = dir / (id + ".sass");
  std::ofstream(bin, std::ios::binary).write(cubin.data(), std::streamsize(cubin.size()));
  std::ostringstream cmd;
  cmd << "'" << cuobjdump.string() << "' -sass '" << bin.string() << "' > '" << sass.string() << "' 2>&1";
  if (std::system(cmd.str().c_str()) != 0) return nullptr;
  static const std::regex function(R"(Function : (\S+))"),
      instruction(R"(/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*))");
  nlohmann::json functions = nlohmann::json::object();
  std::string current, line;
  std::map<std::string, std::set<std::string>> opcodes;
  std::ifstream in(sass);
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, function)) {
      current = m[1];
      functions[current] = {{"instructions", 0}, {"calls", 0}};
    } else if (!current.empty() && std::regex_search(line, m, instruction)) {
      const std::string op = m[1];
      functions[current]["instructions"] = functions[current]["instructions"].get<int>() + 1;
      if (op.rfind("CALL", 0) == 0) functions[current]["calls"] = functions[current]["calls"].get<int>() + 1;
      opcodes[current].insert(op);
    }
  }
  for (auto& [name, ops] : opcodes) functions[name]["opcodes"] = ops;
  return functions;
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
        if (p.kind == cdl::jit::code_kind::cubin) f["nvrtc"]["sass"] = sass_summary(c.image.code, p.id, dir);
      } catch (const cdl::jit::compile_error& e) {
        f["nvrtc"] = {{"compiles", false}, {"log", e.log()}};
      }
      f["nvcc"] = nvcc_verdict(p, arch, dir);
      const auto verdict = [](const nlohmann::json& v) {
        return v.is_null() ? "not run" : v["compiles"].get<bool>() ? "compiles" : "does not compile";
      };
      std::printf("%-24s nvcc: %-16s NVRTC: %s\n", p.id, verdict(f["nvcc"]), verdict(f["nvrtc"]));
      if (std::string_view(p.id) == "global_launches_global") {
        f["run"] = cdl::run_dynamic_parallelism();  // nvcc's -rdc build of the same two kernels
        std::printf("%-24s run on the GPU: %s\n", "", f["run"].dump().c_str());
      }
      facts.push_back(f);
    }
    cdl::write_json_atomic(argv[1], {{"schema", "cdl-build-facts/1"}, {"facts", facts}});
    for (const auto& f : facts)  // a probe that ran on the GPU and failed is an error, loudly
      if (f.contains("run") && f["run"]["runs"].is_boolean() && !(f["run"]["runs"] && f["run"]["valid"])) {
        std::fprintf(stderr, "cdl_build_facts: the %s probe failed on the GPU: %s\n",
                     f["id"].get<std::string>().c_str(), f["run"].dump().c_str());
        std::filesystem::remove_all(dir);
        return 1;
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_build_facts: %s\n", e.what());
    std::filesystem::remove_all(dir);
    return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
