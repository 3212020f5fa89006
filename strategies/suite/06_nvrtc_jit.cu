// 06 - NVRTC JIT: the kernel is compiled at run time, with the op written into its source.
//
// Idea.    Keep the op as text (common/ops.cuh stringifies each op's expression from the same
//          macro argument the functor is made from) and, when the op is known, hand NVRTC a
//          tiny program: the workload's skeleton header (embedded in the executable at build
//          time: the same file nvcc compiled), a functor made from the op's text, and the
//          skeleton's kernel template of the launch's form instantiated with it (a name
//          expression; each form is compiled at its first launch, so a new op pays for the one
//          kernel it runs). NVRTC compiles
//          it straight to a CUBIN for the running GPU; the runtime's library API loads it
//          (cudaLibraryLoadData: no driver API linked, so the program starts without a GPU).
//          The kernel is then exactly strategy 01's template kernel: the op inlined.
// Cost.    Compile time, paid once per (op, type, architecture): for an op no cache has seen,
//          the price of a user's new expression, tens of milliseconds (about one and a half
//          times what NVRTC takes for a one-line kernel), the first compile of a process dearer
//          still (it loads NVRTC: common/jit.cpp loads it at the first compile). Measured in
//          every cache state by cdl_bench's jit/ benchmarks and set out in the report's JIT
//          section: NVRTC 12.9+ keeps a cache of its own through
//          the driver, which answers the *same* text several times faster, so a figure timed by
//          compiling one text repeatedly is the cache, not the compiler. What a new op adds to that
//          floor is NVVM's optimiser and ptxas on the kernel, not the headers, so the kernel's
//          size sets it (one k loop, one vector per thread, no tail code keep it small); a
//          precompiled header (-pch, --use-pch) does not help: reading the PCH file costs more
//          than parsing the headers it replaces
//          (`cdl_run --expr '...' --compile-times` shows the phases; the report's JIT section
//          what the headers, each kernel and each option cost, each compiled beside a program
//          without it). This project's cache
//          (common/jit_cache.hpp) pays a compile once per machine: a later lookup is a memory
//          hit (microseconds) or a disk read (about a millisecond in a new process). At run time
//          nothing: the kernel is a template kernel, and measured as fast. The price is the
//          toolchain at run time (libnvrtc, ~100 MB) and a compiler's failure modes (bad
//          source, a missing header) moved from build time to the user's run time.
// Use it   when the op is only known at run time and many elements are processed per compile:
//          expressions typed by a user, generated code (query engines, simulators), or ops
//          specialised to run-time constants. With an op per element (tasks) the JIT still
//          needs a switch in the kernel; here its ops are compiled from text like the others.
// See it.  Each compiled program's source is in jit::whole_program (strategies/jit_kernels.cu);
//          `cdl_run --expr '...' --dump-source` prints one. Its SASS (the CUBIN is in the cache
//          directory; `cuobjdump -sass` reads it) matches strategy 01's kernel for the same op.
// Run it.  `cdl_run --strategy 06_nvrtc_jit/vec --op sine --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone first (one op, one kernel, one launch); then the general form, the
//          skeleton's own header compiled by NVRTC with the op's text, as in every workload, so
//          that every strategy runs the same loop and a difference in time is the call.
#include "strategies/jit_kernels.hpp"

#include "common/jit_cache.hpp"
#include "strategies/minimal.hpp"

#include <nvrtc.h>

// ---- The mechanism alone (strategies/minimal.hpp); the general, measured form follows ----------
// Built into tests/gpu_minimal_test only, which links NVRTC (minimal.hpp says why).
namespace cdl::minimal {
#if !CDL_MINIMAL_JIT
const form nvrtc_form{"06_nvrtc_jit", nullptr, nullptr, __FILE__, __LINE__};  // for cdl_run --list
#else
// The op is text until the program runs; NVRTC compiles it, with its kernel, for this GPU.
const char* const quadratic_source = R"(
extern "C" __global__ void quadratic(const float* x, float* y, unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i] + 2.0f * x[i] + 1.0f;
})";
cudaKernel_t compile_quadratic() {
  // sm_XY: a CUBIN for this GPU, nothing left for the driver to compile at load time
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(device_arch());
  const char* options[] = {arch.c_str()};
  nvrtcProgram p = nullptr;
  nvrtc_check(nvrtcCreateProgram(&p, quadratic_source, "quadratic.cu", 0, nullptr, nullptr), p);
  nvrtc_check(nvrtcCompileProgram(p, 1, options), p);
  std::size_t size = 0;
  nvrtc_check(nvrtcGetCUBINSize(p, &size), p);
  std::vector<char> cubin(size);
  nvrtc_check(nvrtcGetCUBIN(p, cubin.data()), p);
  nvrtcDestroyProgram(&p);
  return load_kernel(cubin, "quadratic");
}
void launch_quadratic(cudaKernel_t kernel, const float* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  unsigned long long count = n;
  void* args[] = {&x, &y, &count};
  CDL_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(unsigned((n + 255) / 256)),
                                  dim3(256), args, 0, stream));
}
void nvrtc_jit(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  static const cudaKernel_t kernel = compile_quadratic();  // compiled at the first launch
  launch_quadratic(kernel, x, y, n, stream);
}
void nvrtc_check(nvrtcResult r, nvrtcProgram p) {  // a failure throws with the compiler's log
  if (r == NVRTC_SUCCESS) return;
  throw error(std::string("NVRTC: ") + nvrtcGetErrorString(r) + "\n" +
              compiler_log(p, nvrtcGetProgramLogSize, nvrtcGetProgramLog));
}
int device_arch() {  // sm_XY as XY
  int device = 0, major = 0, minor = 0;
  CDL_CUDA_CHECK(cudaGetDevice(&device));
  CDL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CDL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}
cudaKernel_t load_kernel(const std::vector<char>& image, const char* name) {
  cudaLibrary_t library = nullptr;  // loaded for the life of the process
  CDL_CUDA_CHECK(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel = nullptr;
  CDL_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, name));
  return kernel;
}
#endif
}  // namespace cdl::minimal
// ------------------------------------------------------------------------------------------------

#if !CDL_MINIMAL_JIT
namespace cdl {
namespace {

// Source -> CUBIN, through the cache: compiled once per (op, type, kernel, options, architecture,
// compiler).
jit::module_image compile_cached(jit::program p, int arch) {
  return jit::process_cache().get(jit::cache_key(p, arch, jit::code_kind::cubin),
                                  [&] { return jit::compile(p, arch, jit::code_kind::cubin).image; });
}

jit::module_image build(jit::workload w, dtype t, const jit::op_text& op, int arch, int kernel) {
  return compile_cached(jit::whole_program(w, t, op, kernel), arch);
}

// The variant `fast`: the same program with NVRTC's --Ofast-compile, which gives up optimisations
// to compile sooner. Whether the kernel is slower for it is what the benchmarks measure beside the
// compile (jit/compile/06_fast/new_op against jit/compile/06/new_op).
jit::module_image build_fast(jit::workload w, dtype t, const jit::op_text& op, int arch, int kernel) {
  jit::program p = jit::whole_program(w, t, op, kernel);
  p.options.push_back(jit::fast_compile_option);
  return compile_cached(std::move(p), arch);
}

}  // namespace

const jit::build_fn nvrtc_jit_build = build;
const jit::build_fn nvrtc_jit_fast_build = build_fast;

void register_06_nvrtc_jit(registry& r) {
  jit::register_strategy<build>(r, "06_nvrtc_jit");
  jit::register_strategy<build_fast>(r, "06_nvrtc_jit", "fast");
}

}  // namespace cdl
#endif  // !CDL_MINIMAL_JIT
