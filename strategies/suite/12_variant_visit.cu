// 12 - cuda::std::variant and cuda::std::visit: a closed set of op types held by value, visited.
//
// Idea.    What C++ offers instead of a class hierarchy: the ops (or objects) are types that
//          share no base, a `cuda::std::variant` (libcu++) holds one of them by value with an
//          index saying which, and `cuda::std::visit` calls a generic lambda with the one it
//          holds. A uniform op is a variant passed to the kernel as an argument (map, zip, points,
//          image, the GEMMs: the invoker below); per element, the objects workload's objects are
//          held by value, an array of variants in place of the array of pointers to objects that
//          virtual calls need (its `variant` form, beside strategy 11's forms).
// Cost.    A variant is as large as its largest alternative plus its index. libcu++'s visit is a
//          chain of compares of the index, from the last alternative down (a recursive template in
//          <cuda/std/variant>, not libc++'s table of function pointers), so it costs what a switch
//          costs: each alternative's code is inlined at its compare, nothing is called through a
//          register, and a warp whose elements hold different alternatives runs them in turn.
// Use it   where the set of ops is closed, known at build time, and the choice is data: the ops
//          need no common base, the objects no vtable (so the host can make them and copy them),
//          and an added op is a compile error wherever a visitor does not handle it. Not for the
//          tasks workload's records, which hold an op id, not an object: making a variant from an
//          id is a switch (strategy 03) with extra steps.
// See it.  `cuobjdump -sass` of map_vec_kernel<float, variant_invoker<...>>: compares of the index
//          and branches (ISETP, BRA), or a BRX where the compiler makes the chain a jump table,
//          each op's instructions inline, no CALL; the objects form the same per element after
//          one load of the 12-byte variant.
// Measured: the report's map, dispatch and GEMM tables and its objects section. What to look for:
//          in the map the visit stays in the k loop, as the switch does; in the tiled GEMM each
//          step's compare chain, three bodies inlined, can outgrow the instruction cache (the
//          profile section's `no_instruction` stalls and instructions per element say whether it
//          does); per element, the objects by value read half the bytes of the virtual call and
//          11's class switch (a 12-byte variant where the others read a pointer and a 24-byte
//          object, and no pointer to chase).
// Run it.  `cdl_run --strategy 12_variant_visit/vec --op quadratic --n 2^24 --k 16`
#include "common/objects_workload.hpp"
#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/zip.cuh"

#include <cuda/std/variant>

namespace cdl {
namespace {

// A family's ops as one variant type, and the variant holding the op with a given id.
template <class... Ops>
cuda::std::variant<Ops...> variant_of(op_list<Ops...>);
template <class List>
using op_variant = decltype(variant_of(List{}));
template <class List>
op_variant<List> make_variant(int id) {
  return visit<List>(id, [](auto op) { return op_variant<List>{op}; });
}

// The invoker the skeletons call: holds the variant, visits it at every call.
template <class List>
struct variant_invoker {
  op_variant<List> op;
  template <class... A>
  __device__ auto operator()(A... a) const {
    return cuda::std::visit([&](auto f) { return f(a...); }, op);
  }
};
template <class List>
variant_invoker<List> invoker_for(int id) {
  return {make_variant<List>(id)};
}

void launch_map(const map_launch& a) {
  skeleton::launch_map_with(a, [&](auto) { return invoker_for<map_ops>(static_cast<int>(a.op)); });
}
void launch_zip(const zip_launch& a) {
  skeleton::launch_zip_with(a, [&](auto) { return invoker_for<zip_ops>(static_cast<int>(a.op)); });
}
void launch_points(const points_launch& a) {
  skeleton::launch_points_with(a, [&](auto) { return invoker_for<point_ops>(static_cast<int>(a.op)); });
}
void launch_image(const image_launch& a) {
  skeleton::launch_image_with(a, [&](auto) { return invoker_for<image_ops>(static_cast<int>(a.op)); });
}
void launch_matmul(const matmul_launch& a) {
  skeleton::launch_matmul_with(a, [&](auto) { return invoker_for<semirings>(static_cast<int>(a.op)); });
}

// Per element: the objects workload's objects by value, each element visiting its own.
inline constexpr int block = 256;
__global__ void __launch_bounds__(block)
    objects_variant_kernel(const float* x, const object_value* objects, float* y, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = cuda::std::visit([&](const auto& o) { return o.apply(x[i]); }, objects[i]);
}
void launch_objects(const objects_launch& a) {
  if (a.n == 0) return;
  objects_variant_kernel<<<unsigned((a.n + block - 1) / block), block, 0, a.stream>>>(
      a.x, static_cast<const object_value*>(a.values), a.y, a.n);
  CDL_CHECK_LAUNCH();
}

}  // namespace

void register_12_variant_visit(registry& r) {
  r.add_all("12_variant_visit", {launch_map, launch_zip, launch_points, launch_image, launch_matmul, {}});
  r.objects.push_back({"12_variant_visit", "", object_form::variant, launch_objects});
}

}  // namespace cdl
