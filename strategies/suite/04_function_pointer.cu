// 04 - Device function pointers: the op is an address, called indirectly.
//
// Idea.    A __device__ function has an address in the GPU's code space. The host cannot take
//          it (&f in host code is the host stub's address), so it is stored in a __device__
//          variable when the module loads and fetched: cudaMemcpyFromSymbol copies it to the
//          host, which passes it to the kernel by value ("symbol" variant). Or the kernel
//          reads it from the __device__ table indexed by an op id ("table" variant), which
//          also allows a different function per element.
// Cost.    An indirect call per evaluation: the callee cannot be inlined, so arguments and
//          results go through the calling convention's registers, registers the callee may
//          clobber are saved around the call, and the compiler cannot schedule the op's
//          arithmetic together with the loop's loads. Memory-bound loops hide this;
//          compute-bound ones (large k) pay it on every call. The table variant adds a load
//          of the pointer.
// Use it   when the function is chosen at run time from a set compiled into the program and
//          a per-op kernel (01) is impractical: many ops, or a choice per element.
// See it.  The kernels' SASS holds `CALL.REL.NOINC R<n>` (a call through a register) instead
//          of the op's arithmetic, and each callee (as_device_function<...>) is a separate
//          function ending in RET (`cuobjdump -sass` of this file's object counts them). The
//          calling convention costs registers and a stack frame (the report's resource table
//          gives map_vec_kernel<float, pointer_invoker> against the template's kernel).
//          Fetch the pointer once, not per launch: cudaMemcpyFromSymbol synchronises.
// Build.   ptxas sizes a call through a pointer for every function the module could reach
//          with it, so this file is compiled once per workload (strategies/suite/one_workload.hpp):
//          the map kernel's registers are then set by the map's table, not by the image
//          filters'. The variant `crowded` is the file compiled whole, kept to show the cost.
// Run it.  `cdl_run --strategy 04_function_pointer.symbol/vec --op quadratic --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/04_function_pointer.cu. This is the general form, an
//          invoker that calls through a __device__ pointer, handed to the skeletons, as in every workload, so
//          that every strategy runs the same loop and a difference in time is the call.
#include "strategies/suite/one_workload.hpp"

#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/tasks.cuh"
#include "common/skeletons/zip.cuh"

#include <array>
#include <mutex>

namespace cdl {
namespace {

using namespace signatures;

template <class Sig>
struct fn_ptr;
template <class R, class... A>
struct fn_ptr<R(A...)> {
  using type = R (*)(A...);
};
template <class Sig>
using fn_ptr_t = typename fn_ptr<Sig>::type;

// One __device__ table per (op family, signature), in op-id order. Each initialiser takes the
// address of a real __device__ function (common/ops.cuh), which makes the compiler emit it out
// of line; the addresses are resolved when the module is loaded.
template <class List, class Sig>
__device__ fn_ptr_t<Sig> d_table[List::size];
template <class... Ops, class R, class... A>
__device__ fn_ptr_t<R(A...)> d_table<op_list<Ops...>, R(A...)>[sizeof...(Ops)] = {
    &as_device_function<Ops, R, A...>...};

// Host copies of a table's pointers and its device address, fetched once per process: the
// first launch pays for a synchronising copy; timed launches never do.
template <class List, class Sig>
struct fetched {
  std::array<fn_ptr_t<Sig>, List::size> fns{};
  const fn_ptr_t<Sig>* table = nullptr;
};
template <class List, class Sig>
const fetched<List, Sig>& fetch() {
  static fetched<List, Sig> f;
  static std::once_flag once;
  std::call_once(once, [] {
    CDL_CUDA_CHECK(cudaMemcpyFromSymbol(f.fns.data(), d_table<List, Sig>, sizeof(f.fns)));
    void* address = nullptr;
    CDL_CUDA_CHECK(cudaGetSymbolAddress(&address, d_table<List, Sig>));
    f.table = static_cast<const fn_ptr_t<Sig>*>(address);
  });
  return f;
}

// The invokers the skeletons call per evaluation.
template <class Sig>
struct pointer_invoker {
  fn_ptr_t<Sig> fn;
  template <class... A>
  __device__ auto operator()(A... a) const {
    return fn(a...);
  }
};
template <class Sig>
struct table_invoker {
  const fn_ptr_t<Sig>* table;
  int id;
  template <class... A>
  __device__ auto operator()(A... a) const {
    return table[id](a...);
  }
};

// Builds the invoker for element type T: Sig<T> is the op's signature.
template <bool use_table, class List, template <class> class Sig, class Op>
auto invoker_factory(Op op) {
  return [id = static_cast<int>(op)](auto t) {
    using S = Sig<decltype(t)>;
    const auto& f = fetch<List, S>();
    if constexpr (use_table)
      return table_invoker<S>{f.table, id};
    else
      return pointer_invoker<S>{f.fns[std::size_t(id)]};
  };
}

// The launches, each compiled only where this object serves its workload.
#if CDL_SERVES(map)
template <bool use_table>
void launch_map(const map_launch& a) {
  skeleton::launch_map_with(a, invoker_factory<use_table, map_ops, unary>(a.op));
}
#endif
#if CDL_SERVES(zip)
template <bool use_table>
void launch_zip(const zip_launch& a) {
  skeleton::launch_zip_with(a, invoker_factory<use_table, zip_ops, binary>(a.op));
}
#endif
#if CDL_SERVES(points)
template <bool use_table>
void launch_points(const points_launch& a) {
  skeleton::launch_points_with(a, invoker_factory<use_table, point_ops, point_fn>(a.op));
}
#endif
#if CDL_SERVES(image)
template <bool use_table>
void launch_image(const image_launch& a) {
  skeleton::launch_image_with(a, invoker_factory<use_table, image_ops, image_fn>(a.op));
}
#endif
#if CDL_SERVES(matmul)
template <bool use_table>
void launch_matmul(const matmul_launch& a) {
  skeleton::launch_matmul_with(a, invoker_factory<use_table, semirings, ternary>(a.op));
}
#endif
#if CDL_SERVES(tasks)
// Per element, only the table can serve: each element indexes it with its own op id.
struct per_element_table {
  const fn_ptr_t<ternary<float>>* table;
  __device__ float operator()(int id, float x, float p1, float p2) const { return table[id](x, p1, p2); }
};
void launch_tasks(const tasks_launch& a) {
  skeleton::launch_tasks(a, per_element_table{fetch<task_ops, ternary<float>>().table});
}
#endif

}  // namespace

void CDL_REGISTER_PART(registry& r) {
#if CDL_CROWDED
  // Every workload's launches (and so their tables) in this one module, as in a file that serves
  // them all; only the map's is registered, to be measured beside the map's own build.
  r.add_map("04_function_pointer", "crowded", launch_map<false>);
  (void)&launch_zip<false>, (void)&launch_points<false>, (void)&launch_image<false>,
      (void)&launch_matmul<false>;
  (void)&launch_map<true>, (void)&launch_zip<true>, (void)&launch_points<true>, (void)&launch_image<true>;
  (void)&launch_matmul<true>, (void)&launch_tasks;
#else
  for (const auto& [variant, table] : {std::pair{"symbol", false}, std::pair{"table", true}}) {
#if CDL_SERVES(map)
    r.add_map("04_function_pointer", variant, table ? launch_map<true> : launch_map<false>);
#elif CDL_SERVES(zip)
    r.add_zip("04_function_pointer", variant, table ? launch_zip<true> : launch_zip<false>);
#elif CDL_SERVES(points)
    r.add_points("04_function_pointer", variant, table ? launch_points<true> : launch_points<false>);
#elif CDL_SERVES(image)
    r.add_image("04_function_pointer", variant, table ? launch_image<true> : launch_image<false>);
#elif CDL_SERVES(matmul)
    r.add_matmul("04_function_pointer", variant, table ? launch_matmul<true> : launch_matmul<false>);
#elif CDL_SERVES(tasks)
    if (table) r.add_tasks("04_function_pointer", variant, tasks_form::per_element, launch_tasks);
#endif
  }
#endif
}

}  // namespace cdl
