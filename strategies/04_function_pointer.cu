// 04 - Device function pointers: the op is an address, called indirectly.
//
// Idea.    A __device__ function has an address in the GPU's code space. The host cannot take
//          it (&f in host code is the host stub's address), so it is stored in a __device__
//          variable at load time and fetched: cudaMemcpyFromSymbol copies it to the host, which
//          passes it to the kernel by value ("symbol" variant). Or the kernel reads it from a
//          __device__ table indexed by an op id ("table" variant), which also allows a
//          different function per element.
// Cost.    An indirect call per evaluation: the callee cannot be inlined, so arguments and
//          results go through the ABI registers, registers the callee may clobber are saved
//          around the call, and the compiler cannot schedule the op's arithmetic together with
//          the loop's loads. Memory-bound loops hide this; compute-bound ones (large k) pay it
//          on every call. The table variant adds a dependent load of the pointer.
// Use it   when the function is chosen at run time from a set compiled into the program and
//          a per-op kernel (01) is impractical: many ops, or a choice per element.
// See it.  The kernels' SASS holds `CALL.REL.NOINC` / `CALL.ABS.NOINC` through a register
//          instead of the op's arithmetic, and the callee as a separate function
//          (as_device_function<...>) ending in RET. `cuobjdump -res-usage` shows a stack frame.
//          The pointer must be fetched once, not per launch: cudaMemcpyFromSymbol synchronises.
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"

#include <array>
#include <mutex>

namespace cdl {
namespace {

template <class T>
using map_fn = T (*)(T);

// The device-side table, in op-id order. Each initialiser takes the address of a real
// __device__ function (common/ops.cuh), which makes the compiler emit it out of line.
#define CDL_ADDRESS_F32(name, ulps, expr) &as_device_function<ops::name, float>,
#define CDL_ADDRESS_F64(name, ulps, expr) &as_device_function<ops::name, double>,
__device__ map_fn<float> d_map_fns_f32[] = {CDL_MAP_OPS(CDL_ADDRESS_F32)};
__device__ map_fn<double> d_map_fns_f64[] = {CDL_MAP_OPS(CDL_ADDRESS_F64)};
#undef CDL_ADDRESS_F32
#undef CDL_ADDRESS_F64

constexpr std::size_t op_count = map_op_catalogue.size();

template <class T>
auto& device_table() {
  if constexpr (std::is_same_v<T, float>) return d_map_fns_f32;
  else return d_map_fns_f64;
}

// Host copies of the pointers and the table's device address, fetched once per process (the
// first launch pays for a synchronising copy; timed launches never do).
template <class T>
struct fetched {
  std::array<map_fn<T>, op_count> fns{};
  const map_fn<T>* table = nullptr;
};
template <class T>
const fetched<T>& fetch() {
  static fetched<T> f;
  static std::once_flag once;
  std::call_once(once, [] {
    CDL_CUDA_CHECK(cudaMemcpyFromSymbol(f.fns.data(), device_table<T>(), sizeof(f.fns)));
    void* address = nullptr;
    CDL_CUDA_CHECK(cudaGetSymbolAddress(&address, device_table<T>()));
    f.table = static_cast<const map_fn<T>*>(address);
  });
  return f;
}

// The invokers the skeleton calls per evaluation.
template <class T>
struct pointer_invoker {
  map_fn<T> fn;
  __device__ T operator()(T x) const { return fn(x); }
};
template <class T>
struct table_invoker {
  const map_fn<T>* table;
  int id;
  __device__ T operator()(T x) const { return table[id](x); }
};

template <bool use_table>
void launch(const map_launch& a) {
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const fetched<T>& f = fetch<T>();
    const int id = static_cast<int>(a.op);
    if constexpr (use_table)
      skeleton::launch_map(a.form, input<T>(a), output<T>(a), a.n, a.k, table_invoker<T>{f.table, id}, a.stream);
    else
      skeleton::launch_map(a.form, input<T>(a), output<T>(a), a.n, a.k, pointer_invoker<T>{f.fns[id]}, a.stream);
  });
}

}  // namespace

void register_04_function_pointer(registry& r) {
  add_map_entries(r, "04_function_pointer", "symbol", launch<false>);
  add_map_entries(r, "04_function_pointer", "table", launch<true>);
}

}  // namespace cdl
