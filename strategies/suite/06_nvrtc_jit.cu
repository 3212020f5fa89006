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
//          the price of a user's new expression (the report sets it beside what NVRTC takes for
//          a one-line kernel), the first compile of a process dearer still (it loads NVRTC:
//          common/jit.cpp loads it at the first compile). Measured in every cache state by
//          cdl_bench's jit/ benchmarks and set out in the report's JIT section: NVRTC 12.9+ keeps
//          a cache of its own through the driver, which answers the *same* text faster, so a
//          figure timed by compiling one text repeatedly is the cache, not the compiler. What a
//          new op adds to that floor is NVVM's optimiser and ptxas on the kernel, not the headers,
//          so the kernel's size sets it (one k loop, one vector per thread, no tail code keep it
//          small); a precompiled header (-pch, --use-pch) does not help: reading the PCH file
//          costs more than parsing the headers it replaces (`cdl_run --expr '...' --compile-times`
//          shows the phases; the report's JIT section what the headers, each kernel and each option
//          cost, each compiled beside a program without it). This project's cache
//          (common/jit_cache.hpp) pays a compile once per machine: a later lookup is a hit in
//          memory or a read from disk (the report's JIT section times both). At run time
//          nothing: the kernel is a template kernel, and measured as fast. The price is the
//          toolchain at run time (libnvrtc, ~100 MB) and a compiler's failure modes (bad
//          source, a missing header) moved from build time to the user's run time.
// Use it   when the op is only known at run time and many elements are processed per compile:
//          expressions typed by a user, generated code (query engines, simulators), or ops
//          specialised to run-time constants. With an op per element (tasks) the JIT still
//          needs a switch in the kernel; here its ops are compiled from text like the others.
// See it.  Each compiled program's source is in jit::whole_program (strategies/suite/jit_kernels.cu);
//          `cdl_run --expr '...' --dump-source` prints one. Its SASS (the CUBIN is in the cache
//          directory; `cuobjdump -sass` reads it) matches strategy 01's kernel for the same op.
// Run it.  `cdl_run --strategy 06_nvrtc_jit/vec --op sine --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/06_nvrtc_jit.cu. This is the general form: the
//          skeleton's own header compiled by NVRTC with the op's text, as in every workload, so that every
//          strategy runs the same loop and a difference in time is the call.
#include "strategies/suite/jit_kernels.hpp"

#include "common/jit_cache.hpp"

#include <nvrtc.h>

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

// The variant `fast_compile`: the same program with NVRTC's --Ofast-compile, which gives up
// optimisations to compile sooner: a faster compile, not faster code. What it saves is timed beside
// 06's own compile (jit/compile/06_fast_compile/new_op against jit/compile/06/new_op) and what it
// costs at run time by its kernels beside 06's; what its kernels are made of (registers, a stack
// frame) is in the resources data (cdl_jit_resources), since a skeleton that left an array's index
// to the optimiser's unrolling would find it in local memory here (elementwise.cuh: unrolled).
jit::module_image build_fast_compile(jit::workload w, dtype t, const jit::op_text& op, int arch, int kernel) {
  jit::program p = jit::whole_program(w, t, op, kernel);
  p.options.push_back(jit::fast_compile_option);
  return compile_cached(std::move(p), arch);
}

}  // namespace

const jit::build_fn nvrtc_jit_build = build;
const jit::build_fn nvrtc_jit_fast_compile_build = build_fast_compile;

void register_06_nvrtc_jit(registry& r) {
  jit::register_strategy<build>(r, "06_nvrtc_jit");
  jit::register_strategy<build_fast_compile>(r, "06_nvrtc_jit", "fast_compile");
  jit::register_route<build>(r, "06_nvrtc_jit");
  jit::register_route<build_fast_compile>(r, "06_nvrtc_jit", "fast_compile");
}

}  // namespace cdl
