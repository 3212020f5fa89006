// 07 - JIT link-time optimisation: kernels compiled without their op, the op linked in later.
//
// Idea.    Split 06's program in two. The kernels, with the op only *declared* (an extern
//          __device__ function), are compiled once to LTO-IR: NVVM's intermediate code, not
//          machine code. The op alone is compiled to LTO-IR when it is chosen. nvJitLink links
//          the two with -lto: it optimises across them as if they were one file, so the call
//          into the other module is inlined and the kernel is again the template kernel. This
//          is what separate compilation (-rdc) without LTO cannot do: there, the call stays a
//          call (strategy 04's cost without the pointer).
// Cost.    Per op: compiling the op alone to LTO-IR (tens of milliseconds: the C++ front end
//          parsing the headers dominates), then the link, which for a new op optimises and
//          generates code for the kernel (each form's kernel is its own program, compiled and
//          linked at its first launch), split about evenly between libNVVM (the whole program to
//          PTX) and ptxas by nvJitLink's own account (-time; `cdl_run --expr '...' --compile-times`).
//          About half of that link is what any LTO link costs (a one-line kernel with a one-line
//          op, jit/link/one_line_kernel/), the rest the kernel's; the variant `preoptimised` (at
//          the end of this file) shortens the kernel's share, and says why it is not the default.
//          Linking the same inputs again is answered by nvJitLink's own cache (through the
//          driver): a link timed on one op repeatedly looks nearly free. The report's JIT section
//          gives each stage in each cache state. The kernels' LTO-IR is compiled once per process
//          or read from the disk cache, and the linked CUBIN is cached like 06's. At run time:
//          nothing. The linked kernels ran at template speed in every workload (strategies/README.md).
// Use it   when kernels are large or many and ops are small and chosen at run time: a library
//          ships its kernels as LTO-IR (built offline with nvcc -dlto) and links user ops into
//          them, paying for the op's compile rather than the kernels'. Here the kernels' LTO-IR
//          is made by NVRTC from the embedded skeleton header, for the running architecture.
// See it.  The linked CUBIN's SASS has no CALL to lto_entry: the op's instructions sit in the
//          kernel's loop. Programs: jit::lto_skeleton_program and jit::lto_op_program in
//          strategies/suite/jit_kernels.cu.
// Run it.  `cdl_run --strategy 07_jit_lto/vec --op sine --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/07_jit_lto.cu. This is the general form: the
//          skeleton's kernels as LTO-IR, linked with the op's, as in every workload, so that every strategy
//          runs the same loop and a difference in time is the call.
#include "strategies/suite/jit_kernels.hpp"

#include "common/jit_cache.hpp"

#include <nvJitLink.h>
#include <nvrtc.h>

namespace cdl {
namespace {

jit::compiled ltoir(const jit::program& p, int arch) {
  jit::module_image image = jit::process_cache().get(jit::cache_key(p, arch, jit::code_kind::ltoir), [&] {
    return jit::compile(p, arch, jit::code_kind::ltoir).image;
  });
  return {jit::code_kind::ltoir, arch, std::move(image), {}};
}

// Kernels' LTO-IR + op's LTO-IR -> one CUBIN, each stage through the cache.
jit::module_image link_cached(const jit::program& kernels, const jit::program& op_program, int arch) {
  std::string key = jit::nvjitlink_version();
  for (const std::string& o : jit::link_options(arch, true)) key += " " + o;
  for (const jit::program* p : {&kernels, &op_program})
    key.append("\n").append(jit::cache_key(*p, arch, jit::code_kind::ltoir));
  return jit::process_cache().get(key, [&] {
    const jit::compiled parts[] = {ltoir(kernels, arch), ltoir(op_program, arch)};
    const jit::compiled* part_ptrs[] = {&parts[0], &parts[1]};
    return jit::link(part_ptrs, arch).image;
  });
}

jit::module_image build(jit::workload w, dtype t, const jit::op_text& op, int arch, int kernel) {
  return link_cached(jit::lto_skeleton_program(w, t, kernel), jit::lto_op_program(w, t, op), arch);
}

// The variant `preoptimised`: the kernels' LTO-IR written after NVRTC's optimiser has run on it
// (--gen-opt-lto), which a process pays once, so that the link of each new op starts from
// optimised kernels and has less to do (jit/link/07_preoptimised/new_op beside jit/link/07/new_op,
// each over the one-line floor compiled beside it). It is not 07's default because the kernels
// were optimised while the op was still an opaque call, and what the optimiser made of them then
// is not what it makes with the op inlined: the map's linked SASS is the same, but the tiled GEMM
// linked this way reaches the register limit and spills (ptxas -v on the PTX nvJitLink writes
// with -ptx) where 07's spills nothing; the benchmarks time its GEMM beside 07's. The op is
// compiled as in 07: optimising it first lengthens its compile and shortens no link.
jit::module_image build_preoptimised(jit::workload w, dtype t, const jit::op_text& op, int arch, int kernel) {
  jit::program kernels = jit::lto_skeleton_program(w, t, kernel);
  kernels.options.push_back(jit::preoptimise_option);
  return link_cached(kernels, jit::lto_op_program(w, t, op), arch);
}

}  // namespace

const jit::build_fn jit_lto_build = build;

void register_07_jit_lto(registry& r) {
  jit::register_strategy<build>(r, "07_jit_lto");
  jit::register_strategy<build_preoptimised>(r, "07_jit_lto", "preoptimised");
  jit::register_route<build>(r, "07_jit_lto");
}

}  // namespace cdl
