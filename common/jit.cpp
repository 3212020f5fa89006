// jit.hpp's stages: NVRTC and libNVVM loaded at their first compile, the embedded headers
// offered to NVRTC, nvJitLink's links, and library loading. Read the header first.
#include "jit.hpp"

#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <nvvm.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

namespace cdl::jit {

compile_error::compile_error(const std::string& what, std::string log)
    : error(what + (log.empty() ? std::string() : ":\n" + log)), log_(std::move(log)) {}

std::string_view to_string(code_kind k) {
  static constexpr std::string_view names[] = {"cubin", "ltoir", "ptx"};
  return names[int(k)];
}

namespace {

// The C strings of `strings`, as the compilers' option arguments take them (valid while it lives;
// not a const vector: libNVVM and nvJitLink take const char**).
std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  for (const std::string& s : strings) out.push_back(s.c_str());
  return out;
}

// NVRTC and libNVVM are loaded by their first compile, not when the process starts (the programs
// do not link them): a process that never compiles never pays for loading them, and a process's
// first compile includes loading its compiler, which is what a new process pays for its first new
// op (cdl_bench's jit/first_compile_in_process measures from before the load). Each library's
// functions are listed once (an X-macro) and looked up by name.
void* open_library(const char* path, const char* name) {
  // The toolkit's library, by the path the build found, else by its name on the loader's path.
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw error(std::string("cannot load ") + path + ": " + dlerror());
  return lib;
}
template <class F>
F symbol(void* lib, const char* name, const char* path) {
  void* f = dlsym(lib, name);
  if (!f) throw error(std::string(path) + " has no " + name + ": it is not the library this was built for");
  return reinterpret_cast<F>(f);
}

// One entry a line (the formatter would reflow them differently on each run).
// clang-format off
#define CDL_NVRTC_FUNCTIONS(X, prefix) \
  X(prefix, GetErrorString) \
  X(prefix, Version) \
  X(prefix, CreateProgram) \
  X(prefix, DestroyProgram) \
  X(prefix, AddNameExpression) \
  X(prefix, CompileProgram) \
  X(prefix, GetProgramLogSize) \
  X(prefix, GetProgramLog) \
  X(prefix, GetCUBINSize) \
  X(prefix, GetCUBIN) \
  X(prefix, GetPTXSize) \
  X(prefix, GetPTX) \
  X(prefix, GetLTOIRSize) \
  X(prefix, GetLTOIR) \
  X(prefix, GetLoweredName)
#define CDL_NVVM_FUNCTIONS(X, prefix) \
  X(prefix, GetErrorString) \
  X(prefix, Version) \
  X(prefix, CreateProgram) \
  X(prefix, DestroyProgram) \
  X(prefix, AddModuleToProgram) \
  X(prefix, LazyAddModuleToProgram) \
  X(prefix, CompileProgram) \
  X(prefix, GetProgramLogSize) \
  X(prefix, GetProgramLog) \
  X(prefix, GetCompiledResultSize) \
  X(prefix, GetCompiledResult)
// clang-format on

// struct <prefix>_api, a member for each function of the list, and <prefix>(), which loads the
// library at its first call and looks each function up by its name (prefix and member).
#define CDL_API_MEMBER(prefix, name) decltype(&prefix##name) name;
#define CDL_API_SYMBOL(prefix, name) a.name = symbol<decltype(a.name)>(lib, #prefix #name, path);
#define CDL_RUNTIME_LOADED_API(prefix, functions, library_path, soname) \
  struct prefix##_api {                                                 \
    functions(CDL_API_MEMBER, prefix)                                   \
  };                                                                    \
  const prefix##_api& prefix() {                                        \
    static const prefix##_api api = [] {                                \
      const char* path = library_path;                                  \
      void* lib = open_library(path, soname);                           \
      prefix##_api a{};                                                 \
      functions(CDL_API_SYMBOL, prefix) return a;                       \
    }();                                                                \
    return api;                                                         \
  }
CDL_RUNTIME_LOADED_API(nvrtc, CDL_NVRTC_FUNCTIONS, CDL_NVRTC_LIBRARY, "libnvrtc.so")
CDL_RUNTIME_LOADED_API(nvvm, CDL_NVVM_FUNCTIONS, CDL_NVVM_LIBRARY, "libnvvm.so")

void check_nvrtc(nvrtcResult code, const char* call, const char* file, int line) {
  if (code != NVRTC_SUCCESS)
    throw error(std::string(call) + " failed: " + nvrtc().GetErrorString(code) + " (" + file + ":" +
                std::to_string(line) + ")");
}
#define CDL_NVRTC_CHECK(call) check_nvrtc((call), #call, __FILE__, __LINE__)

void check_nvvm(nvvmResult code, const char* call, const char* file, int line) {
  if (code != NVVM_SUCCESS)
    throw error(std::string(call) + " failed: " + nvvm().GetErrorString(code) + " (" + file + ":" +
                std::to_string(line) + ")");
}
#define CDL_NVVM_CHECK(call) check_nvvm((call), #call, __FILE__, __LINE__)

// nvJitLink has no error-string function; its result codes are numbered in nvJitLink.h.
void check_nvjitlink(nvJitLinkResult code, const char* call, const char* file, int line) {
  if (code != NVJITLINK_SUCCESS)
    throw error(std::string(call) + " failed: nvJitLinkResult " + std::to_string(int(code)) + " (" + file +
                ":" + std::to_string(line) + ")");
}
#define CDL_NVJITLINK_CHECK(call) check_nvjitlink((call), #call, __FILE__, __LINE__)

// PTX as text of its own length: the compilers end it with a NUL, and nvJitLink takes a text's
// length (a test reading it takes the text alone).
void drop_trailing_nuls(std::vector<char>& ptx) {
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
}

std::string trimmed(std::vector<char> text) {
  std::string s(text.begin(), text.end());
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}

// A compiler's log, which NVRTC, libNVVM and nvJitLink all hand back the same way: get_size(&n),
// then get_text(buffer of n bytes); one more byte, for the one that leaves out the NUL.
template <class GetSize, class GetText>
std::string compiler_log(GetSize get_size, GetText get_text) {
  std::size_t size = 0;
  get_size(&size);
  std::vector<char> log(size + 1);
  get_text(log.data());
  return trimmed(std::move(log));
}

// NVRTC finds a header only by the exact string in the #include, so each embedded header is
// offered under its path and under every relative spelling another embedded file uses for it
// ("../ops.cuh" from common/skeletons/map.cuh names common/ops.cuh).
struct header_table {
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs, text_ptrs;
};
const header_table& headers() {
  static const header_table table = [] {
    namespace fs = std::filesystem;
    std::map<std::string, std::string_view> by_name;
    for (const source_file& f : embedded_sources()) by_name.emplace(std::string(f.name), f.text);
    const std::map<std::string, std::string_view> files = by_name;
    const std::regex include(R"re(#\s*include\s*"([^"]+)")re");
    for (const auto& [name, text] : files) {
      for (std::cregex_iterator m(text.data(), text.data() + text.size(), include), end; m != end; ++m) {
        const std::string spelled = (*m)[1];
        const std::string target =
            (fs::path(name).parent_path() / spelled).lexically_normal().generic_string();
        const auto found = files.find(target);
        if (found == files.end()) continue;  // a host-only header, skipped under NVRTC
        const auto [it, added] = by_name.emplace(spelled, found->second);
        if (!added && it->second.data() != found->second.data())
          throw error("embedded headers: \"" + spelled + "\" names two different files");
      }
    }
    header_table t;
    for (const auto& [name, text] : by_name) {
      t.names.push_back(name);
      t.text_ptrs.push_back(text.data());
    }
    t.name_ptrs = c_strings(t.names);
    return t;
  }();
  return table;
}

struct program_deleter {
  void operator()(nvrtcProgram p) const { nvrtc().DestroyProgram(&p); }
};
using program_handle = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, program_deleter>;

}  // namespace

std::vector<std::string> compile_options(int arch, code_kind kind) {
  // nvcc's flags for the skeletons (CMakeLists.txt), so both build the same kernel; nvcc's
  // --extended-lambda and --expt-relaxed-constexpr serve host code NVRTC never sees.
  std::vector<std::string> o{"-arch=sm_" + std::to_string(arch), "-std=c++20"};
  if (kind == code_kind::ltoir) o.push_back("-dlto");  // implies relocatable device code
  return o;
}

compiled compile(const program& p, int arch, code_kind kind, const std::vector<std::string>& extra_options) {
  return compile_with_base(p, arch, kind, compile_options(arch, kind), extra_options);
}

compiled compile_with_base(const program& p, int arch, code_kind kind, const std::vector<std::string>& base,
                           const std::vector<std::string>& extra_options) {
  const header_table& h = headers();
  nvrtcProgram raw = nullptr;
  CDL_NVRTC_CHECK(nvrtc().CreateProgram(&raw, p.source.c_str(), p.name.c_str(), int(h.names.size()),
                                        h.text_ptrs.data(), h.name_ptrs.data()));
  const program_handle prog(raw);
  for (const std::string& e : p.name_expressions) CDL_NVRTC_CHECK(nvrtc().AddNameExpression(raw, e.c_str()));

  std::vector<std::string> options = base;
  options.insert(options.end(), p.options.begin(), p.options.end());
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> option_ptrs = c_strings(options);
  const nvrtcResult rc = nvrtc().CompileProgram(raw, int(option_ptrs.size()), option_ptrs.data());

  compiled out{kind,
               arch,
               {},
               compiler_log([&](std::size_t* n) { CDL_NVRTC_CHECK(nvrtc().GetProgramLogSize(raw, n)); },
                            [&](char* text) { CDL_NVRTC_CHECK(nvrtc().GetProgramLog(raw, text)); })};
  if (rc == NVRTC_ERROR_COMPILATION) throw compile_error(p.name + " does not compile", out.log);
  if (rc != NVRTC_SUCCESS)
    throw compile_error(p.name + ": nvrtcCompileProgram failed: " + nvrtc().GetErrorString(rc), out.log);

  std::size_t size = 0;
  if (kind == code_kind::cubin) {
    CDL_NVRTC_CHECK(nvrtc().GetCUBINSize(raw, &size));
    out.image.code.resize(size);
    CDL_NVRTC_CHECK(nvrtc().GetCUBIN(raw, out.image.code.data()));
  } else if (kind == code_kind::ptx) {  // what the CUBIN was assembled from (the tests read it)
    CDL_NVRTC_CHECK(nvrtc().GetPTXSize(raw, &size));
    out.image.code.resize(size);
    CDL_NVRTC_CHECK(nvrtc().GetPTX(raw, out.image.code.data()));
    drop_trailing_nuls(out.image.code);
  } else {
    CDL_NVRTC_CHECK(nvrtc().GetLTOIRSize(raw, &size));
    out.image.code.resize(size);
    CDL_NVRTC_CHECK(nvrtc().GetLTOIR(raw, out.image.code.data()));
  }
  for (const std::string& e : p.name_expressions) {
    const char* lowered = nullptr;
    CDL_NVRTC_CHECK(nvrtc().GetLoweredName(raw, e.c_str(), &lowered));
    out.image.kernel_names[e] = lowered;
  }
  return out;
}

std::vector<phase> read_nvrtc_time(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error("NVRTC wrote no --time table at " + path);
  std::vector<phase> out;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<std::string> f;  // fields are separated by ", "
    for (std::size_t at = 0; at != std::string::npos;) {
      const std::size_t comma = line.find(',', at);
      f.push_back(line.substr(at, comma == std::string::npos ? comma : comma - at));
      at = comma == std::string::npos ? comma : comma + 2;
    }
    if (f.size() < 3) continue;
    try {
      out.push_back({f[1], std::stod(f[2])});
    } catch (const std::exception&) {
      throw error("NVRTC's --time table at " + path + " has a line that is not a phase: " + line);
    }
  }
  if (out.empty()) throw error("NVRTC's --time table at " + path + " holds no phase");
  return out;
}

std::vector<phase> read_nvjitlink_time(const std::string& info_log) {
  std::vector<phase> out;
  std::istringstream in(info_log);
  for (std::string line; std::getline(in, line);) {
    const std::size_t time = line.find(" time "), colon = line.rfind(':');
    if (time == std::string::npos || colon == std::string::npos || colon < time) continue;
    const std::string step = line.substr(time + 1, colon - time - 1);  // "time to create PTX"
    try {
      std::size_t used = 0;
      const double ms = std::stod(line.substr(colon + 1), &used);
      if (line.find_first_not_of(" \t\r", colon + 1 + used) != std::string::npos)
        throw error("trailing text");
      out.push_back({step, ms});
    } catch (const std::exception&) {
      throw error("nvJitLink's -time report has a step without a number: " + line);
    }
  }
  if (out.empty()) throw error("nvJitLink's info log holds no -time report (was -time given?)");
  return out;
}

std::vector<std::string> nvvm_options(int arch, bool optimise) {
  // -opt=0 runs no optimiser: libNVVM only selects instructions. The expression JIT's baseline tier takes
  // it, on IR written in the form the optimiser would leave (its lowering), and ptxas,
  // which contracts multiplies and adds into FMAs, folds and schedules, makes nearly the same
  // machine code of it; what that saves in compile time and costs in run time is measured by the
  // JIT stages and the map benchmarks of that tier. The
  // other options are NVRTC's defaults (IEEE division and square root, no flush to zero, FMA
  // contraction on): set out here because they are part of what the kernel computes.
  return {"-arch=compute_" + std::to_string(arch),
          optimise ? "-opt=3" : "-opt=0",
          "-prec-div=1",
          "-prec-sqrt=1",
          "-ftz=0",
          "-fma=1"};
}

const std::string& libdevice() {
  static const std::string bitcode = [] {
    std::ifstream in(CDL_LIBDEVICE, std::ios::binary);
    std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw error("cannot read libdevice (" CDL_LIBDEVICE ")");
    if (b.empty()) throw error("libdevice (" CDL_LIBDEVICE ") is missing or empty");
    return b;
  }();
  return bitcode;
}

compiled compile_nvvm(const nvvm_module& m, int arch) {
  nvvmProgram raw = nullptr;
  CDL_NVVM_CHECK(nvvm().CreateProgram(&raw));
  const std::unique_ptr<nvvmProgram, void (*)(nvvmProgram*)> guard(
      &raw, [](nvvmProgram* p) { nvvm().DestroyProgram(p); });
  CDL_NVVM_CHECK(nvvm().AddModuleToProgram(raw, m.ir.data(), m.ir.size(), m.name.c_str()));
  // Lazily: only the libdevice functions the module calls are linked and compiled.
  if (m.needs_libdevice)
    CDL_NVVM_CHECK(nvvm().LazyAddModuleToProgram(raw, libdevice().data(), libdevice().size(), "libdevice"));
  const std::vector<std::string> options = nvvm_options(arch, m.optimise);
  std::vector<const char*> option_ptrs = c_strings(options);
  const nvvmResult rc = nvvm().CompileProgram(raw, int(option_ptrs.size()), option_ptrs.data());

  compiled out{code_kind::ptx,
               arch,
               {},
               compiler_log([&](std::size_t* n) { CDL_NVVM_CHECK(nvvm().GetProgramLogSize(raw, n)); },
                            [&](char* text) { CDL_NVVM_CHECK(nvvm().GetProgramLog(raw, text)); })};
  if (rc != NVVM_SUCCESS)
    throw compile_error(m.name + ": libNVVM cannot compile it (" + nvvm().GetErrorString(rc) + ")", out.log);
  std::size_t size = 0;
  CDL_NVVM_CHECK(nvvm().GetCompiledResultSize(raw, &size));
  std::vector<char> ptx(size);
  CDL_NVVM_CHECK(nvvm().GetCompiledResult(raw, ptx.data()));
  out.image.code.assign(ptx.begin(), ptx.end());
  drop_trailing_nuls(out.image.code);
  for (const std::string& k : m.kernels) out.image.kernel_names[k] = k;  // unmangled: the IR names them
  return out;
}

std::vector<std::string> link_options(int arch, bool lto) {
  std::vector<std::string> o{"-arch=sm_" + std::to_string(arch)};
  if (lto) o.push_back("-lto");
  return o;
}

linked link(std::span<const compiled* const> parts, int arch, const std::vector<std::string>& extra_options) {
  // LTO when any part is LTO-IR; PTX alone is only assembled (ptxas), as the driver would.
  const bool lto =
      std::any_of(parts.begin(), parts.end(), [](const compiled* c) { return c->kind == code_kind::ltoir; });
  std::vector<std::string> options = link_options(arch, lto);
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> option_ptrs = c_strings(options);
  nvJitLinkHandle h = nullptr;
  CDL_NVJITLINK_CHECK(nvJitLinkCreate(&h, std::uint32_t(option_ptrs.size()), option_ptrs.data()));
  const std::unique_ptr<nvJitLinkHandle, void (*)(nvJitLinkHandle*)> guard(
      &h, [](nvJitLinkHandle* p) { nvJitLinkDestroy(p); });

  linked out{arch, {}, {}, {}};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const compiled& c = *parts[i];
    if (c.arch != arch)
      throw error("link: part " + std::to_string(i) + " was compiled for sm_" + std::to_string(c.arch));
    const std::string name = "part" + std::to_string(i);
    static constexpr nvJitLinkInputType input[] = {NVJITLINK_INPUT_CUBIN, NVJITLINK_INPUT_LTOIR,
                                                   NVJITLINK_INPUT_PTX};
    CDL_NVJITLINK_CHECK(
        nvJitLinkAddData(h, input[int(c.kind)], c.image.code.data(), c.image.code.size(), name.c_str()));
    out.image.kernel_names.insert(c.image.kernel_names.begin(), c.image.kernel_names.end());
  }
  const nvJitLinkResult rc = nvJitLinkComplete(h);
  out.log = compiler_log([&](std::size_t* n) { CDL_NVJITLINK_CHECK(nvJitLinkGetErrorLogSize(h, n)); },
                         [&](char* text) { CDL_NVJITLINK_CHECK(nvJitLinkGetErrorLog(h, text)); });
  if (rc != NVJITLINK_SUCCESS)
    throw link_error("nvJitLink could not link (nvJitLinkResult " + std::to_string(int(rc)) + ")", out.log);
  out.info = compiler_log([&](std::size_t* n) { CDL_NVJITLINK_CHECK(nvJitLinkGetInfoLogSize(h, n)); },
                          [&](char* text) { CDL_NVJITLINK_CHECK(nvJitLinkGetInfoLog(h, text)); });

  std::size_t size = 0;
  if (std::find(options.begin(), options.end(), "-ptx") != options.end()) {
    CDL_NVJITLINK_CHECK(nvJitLinkGetLinkedPtxSize(h, &size));
    out.image.code.resize(size);
    CDL_NVJITLINK_CHECK(nvJitLinkGetLinkedPtx(h, out.image.code.data()));
    drop_trailing_nuls(out.image.code);
    return out;
  }
  CDL_NVJITLINK_CHECK(nvJitLinkGetLinkedCubinSize(h, &size));
  out.image.code.resize(size);
  CDL_NVJITLINK_CHECK(nvJitLinkGetLinkedCubin(h, out.image.code.data()));
  return out;
}

loaded::loaded(const module_image& image, float* compiler_ms) : kernel_names_(image.kernel_names) {
  // cudaJitWallTime is an output: the driver overwrites the option's value slot with a float (the
  // documented form); some drivers write through the pointer the slot held instead. Both are read.
  float written = 0;
  cudaJitOption option[] = {cudaJitWallTime};
  void* value[] = {&written};
  CDL_CUDA_CHECK(cudaLibraryLoadData(&library_, image.code.data(), option, value, 1, nullptr, nullptr, 0));
  if (!compiler_ms) return;
  if (value[0] != &written) std::memcpy(&written, &value[0], sizeof written);
  *compiler_ms = written;
}

loaded::~loaded() {
  // Not checked: at process exit the runtime may already be unloading, and there is nothing to
  // do about a failure here.
  if (library_) (void)cudaLibraryUnload(library_);
}

cudaKernel_t loaded::kernel(const std::string& name_expression) const {
  const auto found = kernel_names_.find(name_expression);
  if (found == kernel_names_.end()) throw error("JIT library has no kernel named by " + name_expression);
  cudaKernel_t k = nullptr;
  CDL_CUDA_CHECK(cudaLibraryGetKernel(&k, library_, found->second.c_str()));
  return k;
}

float load_now(const module_image& image, const std::string& name_expression) {
  float compiler_ms = 0;
  const loaded library(image, &compiler_ms);
  cudaFuncAttributes attributes{};
  CDL_CUDA_CHECK(
      cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(library.kernel(name_expression))));
  return compiler_ms;
}

void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, cudaStream_t stream,
            std::size_t dynamic_shared_bytes) {
  // A cudaKernel_t is accepted wherever the runtime takes a kernel's address.
  CDL_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args,
                                  dynamic_shared_bytes, stream));
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  CDL_NVRTC_CHECK(nvrtc().Version(&major, &minor));
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

std::string nvvm_version() {
  int major = 0, minor = 0;
  CDL_NVVM_CHECK(nvvm().Version(&major, &minor));
  return "libNVVM " + std::to_string(major) + "." + std::to_string(minor);
}

std::string nvjitlink_version() {
  unsigned major = 0, minor = 0;
  CDL_NVJITLINK_CHECK(nvJitLinkVersion(&major, &minor));
  return "nvJitLink " + std::to_string(major) + "." + std::to_string(minor);
}

int device_arch() {
  int device = 0, major = 0, minor = 0;
  CDL_CUDA_CHECK(cudaGetDevice(&device));
  CDL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CDL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

void construct_compile_statics() {
  headers();
  nvrtc();  // NVRTC's own statics too: loading it constructs them
}

}  // namespace cdl::jit
