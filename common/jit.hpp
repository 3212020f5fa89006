// The run-time compilation pipeline (NVRTC, nvJitLink's link-time optimisation, libNVVM for the
// expression language), one type per stage, after NVIDIA/jitify2:
//
//   program --compile()--> compiled --link()--> linked --loaded{}--> loaded --kernel()--> cudaKernel_t
//   source text,           CUBIN or             CUBIN made           a cudaLibrary_t      launched with
//   kernels to             LTO-IR, with the     by nvJitLink from    in this process      cudaLaunchKernel
//   instantiate            kernels' mangled     LTO-IR or PTX
//                          names                parts
//   nvvm_module --compile_nvvm()--> compiled (PTX): NVVM IR, no C++ front end
//
// Each stage returns its value or throws: jit::compile_error and jit::link_error carry the
// compiler's or linker's log, in which the op's own lines are named after the op (a `#line`
// directive in the generated source), so an error points at the line the user wrote.
//
// The programs include the project's real headers (ops.cuh, skeletons/*.cuh), embedded in the
// executable at build time: NVRTC compiles the same skeleton nvcc compiled. Compiling and
// linking need no GPU (CPU tests run them in CI); only loading does. Loading goes through the
// runtime's library API, so the executables do not link libcuda and still start without one.
#pragma once

#include "check.hpp"

#include <cuda_runtime.h>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cdl::jit {

// A compiler or linker failure; what() holds the message and the log.
class compile_error : public error {
 public:
  compile_error(const std::string& what, std::string log);
  const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};
class link_error : public compile_error {
  using compile_error::compile_error;
};

// A file compiled into the executable: its path in the source tree and its text.
struct source_file {
  std::string_view name;
  std::string_view text;
};
// The headers NVRTC sees (common/ops.cuh, common/skeletons/*.cuh, ...), generated at build time.
const std::vector<source_file>& embedded_sources();

enum class code_kind { cubin, ltoir, ptx };
std::string_view to_string(code_kind k);

// Stage 0: what to compile.
struct program {
  std::string name;                           // file name in logs, e.g. "map_sine_f32.cu"
  std::string source;                         // includes embedded headers by their paths
  std::vector<std::string> name_expressions;  // kernels to instantiate, e.g. "&cdl::k<float, cdl::jit_op>"
  std::vector<std::string> options;  // NVRTC options beyond compile_options(), e.g. --Ofast-compile=mid
};

// Compiled code and the mangled names of the kernels the program asked for.
struct module_image {
  std::vector<char> code;
  std::map<std::string, std::string> kernel_names;  // name expression -> mangled name
};

// Stage 1: NVRTC's output for one architecture (sm_XY as XY: 90 for Hopper).
struct compiled {
  code_kind kind;
  int arch;
  module_image image;
  std::string log;  // warnings, if any
};

// Constructs the function-local statics compile() uses (the embedded header table) and loads
// NVRTC (whose own statics its loading constructs), so that a
// caller can make them before an object of its own whose destructor waits for a compile on
// another thread: statics are destroyed in the reverse order of their construction.
void construct_compile_statics();

// The NVRTC options compile() uses: part of every cache key.
std::vector<std::string> compile_options(int arch, code_kind kind);
// extra_options (e.g. --time=FILE) change nothing compiled and are no part of a cache key. A kind
// of ptx gives the PTX the CUBIN is assembled from (the tests run it on the host).
compiled compile(const program& p, int arch, code_kind kind,
                 const std::vector<std::string>& extra_options = {});
// compile() with `base` in place of compile_options() (p.options still follow): what one of those
// options costs is measured by leaving it out (cdl_bench's jit/parts/). Its output belongs in no
// cache, whose keys name compile_options().
compiled compile_with_base(const program& p, int arch, code_kind kind, const std::vector<std::string>& base,
                           const std::vector<std::string>& extra_options = {});

// NVRTC's own account of a compile, as its --time=FILE option writes it ("file, phase, metric,
// unit" a line): each phase's milliseconds, in its order (the C++ front end, the NVVM optimiser,
// and for a CUBIN "PTX Translation", which is ptxas). Throws if the file is missing or holds no phase.
struct phase {
  std::string name;
  double ms;
};
std::vector<phase> read_nvrtc_time(const std::string& path);

// The expression language's first stage: NVVM IR (LLVM 7 text, as libNVVM takes it) -> PTX, with libdevice
// linked lazily when the IR calls it. No C++ front end: this is the compiler under NVRTC.
struct nvvm_module {
  std::string name;  // in logs
  std::string ir;
  std::vector<std::string> kernels;  // their names in the IR (unmangled)
  bool needs_libdevice = false;
  bool optimise = true;  // -opt=3; false: -opt=0, instruction selection alone (nvvm_options says why)
};
std::vector<std::string> nvvm_options(int arch, bool optimise);
compiled compile_nvvm(const nvvm_module& m, int arch);

// Stage 2: nvJitLink's output. Link-time optimisation across the parts: a call from one LTO-IR
// part into a function defined in another is inlined as if both had been one source file.
struct linked {
  int arch;
  module_image image;  // CUBIN (PTX with -ptx); kernel names gathered from the parts
  std::string log;
  std::string info;  // nvJitLink's info log: its -time report, where asked for
};
// LTO-IR parts are linked with -lto; PTX parts are assembled (ptxas) and linked. extra_options
// (e.g. -time) change nothing linked, but -ptx: the image is then the linked program's PTX (its
// text, for reading: the tests run it on the host), not a CUBIN.
std::vector<std::string> link_options(int arch, bool lto);
linked link(std::span<const compiled* const> parts, int arch,
            const std::vector<std::string>& extra_options = {});

// nvJitLink's own account of a link, as its -time option writes it into the info log (lines such
// as "nvJitLinkComplete time to create PTX: 11.1"): each step's milliseconds, in its order. For an
// LTO link, "time to create PTX" is libNVVM (the optimiser and code generator on the whole
// program) and "time to finish" what follows it (ptxas and the link itself). Throws if the log
// holds no step, or a step without a number.
std::vector<phase> read_nvjitlink_time(const std::string& info_log);

// Stage 3: a CUBIN loaded into the process (all devices, lazily), unloaded on destruction; or PTX,
// which the driver assembles (ptxas) as it loads it. compiler_ms, where given, receives the time
// the driver says its compiler took (cudaJitWallTime; 0 for a CUBIN, which has nothing to assemble).
class loaded {
 public:
  explicit loaded(const module_image& image, float* compiler_ms = nullptr);
  ~loaded();
  loaded(const loaded&) = delete;
  loaded& operator=(const loaded&) = delete;

  // Stage 4: the kernel a name expression of the program named.
  cudaKernel_t kernel(const std::string& name_expression) const;

 private:
  cudaLibrary_t library_ = nullptr;
  std::map<std::string, std::string> kernel_names_;
};

// Loads an image, then makes its kernel's (otherwise lazy) load onto the device happen now, as a
// first launch would, and unloads it: what a timed load must include. For PTX, the driver's ptxas,
// whose own time it returns (ms, as loaded's compiler_ms): the rest of the load is not compiling.
float load_now(const module_image& image, const std::string& name_expression);

// Launches a kernel obtained from a library; args point to each parameter's value.
void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, cudaStream_t stream,
            std::size_t dynamic_shared_bytes = 0);

// "NVRTC 13.0", "libNVVM 2.0" and "nvJitLink 13.0": part of every cache key, printed in records.
std::string nvrtc_version();
std::string nvvm_version();
std::string nvjitlink_version();
// The architecture of the current device, as compile() wants it (needs a GPU).
int device_arch();

}  // namespace cdl::jit
