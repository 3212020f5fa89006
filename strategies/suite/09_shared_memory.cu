// 09 - Shared-memory variants: the same ops, the same ways of passing them, staged through
//      shared memory where threads of a block share data, and where they do not.
//
// Idea.    Shared memory is a per-SM scratchpad (up to 227 KiB on H100) that a block's threads
//          fill cooperatively and then read at register-like latency. It pays when *different*
//          threads need the *same* data: the block loads each global element once and every
//          thread that needs it reads it from shared memory. Three forms, written once in the
//          workload skeletons and taking the op from every strategy, because the op never
//          knows where its data came from:
//            image/tiled   (skeletons/image.cuh)  a 32 x 32 tile plus an r-pixel halo per
//                          block; a blur of radius r reads each pixel (2r+1)^2 times.
//            matmul/tiled  (skeletons/matmul.cuh) 128 x 128 tiles of C, 8-deep slices of A
//                          and B in shared memory, 8 x 8 results per thread in registers:
//                          each element loaded once per block feeds 128 steps.
//            map|zip/staged (skeletons/elementwise.cuh) each thread copies its own element
//                          through shared memory: the articles' advice, where no data is
//                          shared at all.
// Cost.    A __syncthreads per tile, the halo loaded redundantly by neighbouring blocks,
//          shared memory that limits how many blocks an SM holds, and code to write. For an
//          elementwise op: an extra store, barrier and load per element, for nothing, since
//          no thread reads another's element. The op's dispatch cost is unchanged: a function
//          pointer in the tiled GEMM's inner loop still costs a call per step.
// Use it   when threads of a block reuse each other's inputs: stencils, convolutions, matrix
//          products, reductions, transposes. Not for elementwise work, where the loads are
//          already coalesced and each element is used once: there the vec form (16-byte loads
//          and stores) is what reaches the memory system's bandwidth.
// See it.  In `cuobjdump -sass`, the tiled kernels load global memory with LDG, store it with
//          STS, synchronise with BAR.SYNC, and compute from LDS; ncu's "shared memory"
//          section shows the bank conflicts (none for these layouts: a warp reads consecutive
//          words of a tile row).
// Measured: the report's stencil, matrix-product and staging sections and strategies/README.md
//          (generated from the reference) give each tiled form against its global one and
//          cuBLAS, for every strategy, beside each tiled kernel's registers, occupancy and
//          indirect calls (a function pointer in the GEMM's inner loop: a CALL per step).
//
// The mechanism alone, a tile, its halo and the barrier, is the lesson (strategies/09_shared_memory.cu);
// the suite writes it once per workload in the skeletons, generic over the op, so that every
// strategy runs the same tiles and a difference in time is the call.
// The forms travel in each launch's arguments (map_launch::form, image_launch::form,
// matmul_launch::form) and each strategy's launch already hands them to its skeleton, so this
// file only registers, for each strategy, the forms above.
// Run it.  `cdl_run --strategy 01_template_functor/staged --op quadratic --n 2^24`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
#include "common/check.hpp"
#include "common/registry.hpp"

namespace cdl {
namespace {

// Adds `form` for each entry `keep` accepts, with the entry's own launch.
template <class Entry, class Form, class Keep>
void add_form(std::vector<Entry>& entries, Form form, Keep keep) {
  const std::vector<Entry> existing = entries;
  for (const Entry& e : existing)
    if (keep(e)) entries.push_back({e.strategy, e.variant, form, e.launch, e.refuses});
}

}  // namespace

void register_09_shared_memory(registry& r) {
  // Every strategy that reaches the skeletons gets the tiled image and matmul forms (registry.cpp
  // registers this one last, after all of them). 00_inline pastes each op into kernels of its own
  // and has no tiled ones.
  const auto skeleton_based = [](const auto& e) { return e.strategy != "00_inline"; };
  add_form(r.image, image_form::tiled, skeleton_based);
  add_form(r.matmul, matmul_form::tiled, skeleton_based);
  // The tiled GEMM's progression, step by step (skeletons/matmul.cuh), with one strategy: the
  // steps are about the kernel, not the dispatch.
  const auto template_naive = [](const matmul_entry& e) {
    return e.strategy == "01_template_functor" && e.form == matmul_form::naive;
  };
  for (matmul_form step : {matmul_form::tiled_step0, matmul_form::tiled_step1, matmul_form::tiled_step2,
                           matmul_form::tiled_step3})
    add_form(r.matmul, step, template_naive);
  // Staging says nothing about dispatch: one compile-time and one run-time strategy suffice.
  const auto staged = [](const auto& e) {
    return e.form == map_form::scalar && e.variant.empty() &&
           (e.strategy == "01_template_functor" || e.strategy == "06_nvrtc_jit");
  };
  add_form(r.map, map_form::staged, staged);
  add_form(r.zip, map_form::staged, staged);
}

}  // namespace cdl
