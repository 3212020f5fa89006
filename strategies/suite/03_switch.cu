// 03 - Switch dispatch: an op id chosen at run time, a switch in the kernel.
//
// Idea.    Every op is compiled into one kernel; an integer id selects among them with a
//          `switch` evaluated on the device (cdl::visit<List> in common/ops.cuh writes the
//          literal switch). The id is a kernel argument: uniform across the launch here, so
//          every thread takes the same branch; in the tasks workload it is read per element.
// Cost.    A uniform id costs a compare-and-branch per call (or per element, if the compiler
//          hoists the switch out of the loop, which it may, since the id does not change),
//          and the kernel carries the code of every op: more registers for the largest op,
//          a larger instruction footprint. When ids differ within a warp, the warp runs each
//          taken case one after the other (divergence): the cost the tasks workload measures.
// Use it   when the set of ops is known at build time and small, the choice is made at run
//          time, and one kernel should serve all of them. This is the articles' "if/else on
//          an op id", which they call "far more efficient": the benchmarks say compared with
//          what.
// See it.  In `cuobjdump -sass`, the kernel holds every op's instructions behind a BRX (an
//          indirect branch through a jump table, one per switch), and no CALL
//          through a register. The price of carrying every op shows in the resource report
//          (`nvcc -Xptxas -v`, and the report's resource table): ptxas gives
//          map_vec_kernel<float, switch_invoker> a stack frame and spills where the template
//          kernel spills nothing, and at k = 1 its vec form stays below the copy bandwidth that
//          the template's reaches (the report's memory-bound map). The "hoisted" variant below
//          takes the same switch once per thread, outside the element loop (map) or the k loop
//          (the GEMMs): no spill, the template kernel's loop in each case.
// Run it.  `cdl_run --strategy 03_switch/vec --op quadratic --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/03_switch.cu. This is the general form, an invoker
//          that switches on the op's id, handed to the skeletons, as in every workload, so that every
//          strategy runs the same loop and a difference in time is the call.
#include "common/polynomial.hpp"
#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/tasks.cuh"
#include "common/skeletons/zip.cuh"

#include <algorithm>
#include <iterator>

namespace cdl {
namespace {

// The invoker: holds the id, switches on it at every call.
template <class List>
struct switch_invoker {
  int id;
  template <class... A>
  __device__ auto operator()(A... a) const {
    return visit<List>(id, [&](auto op) { return op(a...); });
  }
};

void launch_map(const map_launch& a) {
  skeleton::launch_map_with(a, [&](auto) { return switch_invoker<map_ops>{static_cast<int>(a.op)}; });
}
// Variant "hoisted": the same switch taken once per thread, outside the element loop. Each case
// is then the template kernel's loop with its op inlined, and the kernel pays one uniform branch
// per thread instead of one per element. Hoisting is what a compiler may do to the per-element
// switch but need not; writing it out makes it certain.
template <class T, map_form Form>
__global__ void __launch_bounds__(skeleton::elementwise_block)
    map_hoisted_kernel(const T* x, T* y, std::size_t n, int k, int id) {
  visit<map_ops>(id, [&](auto op) {
    if constexpr (Form == map_form::vec)
      skeleton::map_vec_body(x, y, n, k, op);
    else
      skeleton::map_scalar_body(x, y, n, k, op);
  });
}
void launch_map_hoisted(const map_launch& a) {
  if (a.form == map_form::staged) throw error("03_switch.hoisted has no staged form");
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const skeleton::elementwise_geometry g =
        skeleton::elementwise_launch_geometry(a.form, a.n, sizeof(T), {a.x, a.y});
    const auto kernel = g.form == map_form::vec ? map_hoisted_kernel<T, map_form::vec>
                                                : map_hoisted_kernel<T, map_form::scalar>;
    kernel<<<g.grid, skeleton::elementwise_block, 0, a.stream>>>(
        static_cast<const T*>(a.x), static_cast<T*>(a.y), a.n, a.k, static_cast<int>(a.op));
    CDL_CHECK_LAUNCH();
  });
}

void launch_zip(const zip_launch& a) {
  skeleton::launch_zip_with(a, [&](auto) { return switch_invoker<zip_ops>{static_cast<int>(a.op)}; });
}
void launch_points(const points_launch& a) {
  skeleton::launch_points_with(a, [&](auto) { return switch_invoker<point_ops>{static_cast<int>(a.op)}; });
}

void launch_image(const image_launch& a) {
  skeleton::launch_image_with(a, [&](auto) { return switch_invoker<image_ops>{static_cast<int>(a.op)}; });
}
void launch_matmul(const matmul_launch& a) {
  skeleton::launch_matmul_with(a, [&](auto) { return switch_invoker<semirings>{static_cast<int>(a.op)}; });
}
// The GEMM's hoisted switch: one branch per thread, then the template's tiled (or naive) body with
// the semiring inlined. Each case of the tiled kernel is a function of its own, called once per
// thread: with the three bodies inlined into one kernel, ptxas allocates one set of registers
// for all of them, and at two blocks per SM the plain product's body then spills (the report's
// resource table shows `matmul_tiled_hoisted_kernel`). A function per case is allocated on its
// own. Its shared memory is the launch's dynamic shared memory, which every case addresses as
// shared (a pointer passed to a function that is not inlined would be a generic one).
template <class T, class Op>
__device__ __noinline__ void matmul_tiled_case(const T* __restrict__ A, const T* __restrict__ B,
                                               T* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char tiles[];
  auto& s = *reinterpret_cast<skeleton::matmul_slices<T, skeleton::tiled_final_step>*>(tiles);
  skeleton::matmul_tiled_body<skeleton::tiled_final_step>(A, B, C, M, N, K, Op::template identity<T>(), Op{},
                                                          s);
}
template <class T>
__global__ void __launch_bounds__(skeleton::tiled_threads,
                                  (skeleton::tiled_min_blocks<T, skeleton::tiled_final_step>))
    matmul_tiled_hoisted_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                                int N, int K, int id) {
  visit<semirings>(id, [&](auto op) { matmul_tiled_case<T, decltype(op)>(A, B, C, M, N, K); });
}
template <class T>
__global__ void __launch_bounds__(skeleton::matmul_tile* skeleton::matmul_tile)
    matmul_naive_hoisted_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                                int N, int K, int id) {
  visit<semirings>(id, [&](auto op) {
    skeleton::matmul_naive_body(A, B, C, M, N, K, decltype(op)::template identity<T>(), op);
  });
}
void launch_matmul_hoisted(const matmul_launch& a) {
  if (a.form != matmul_form::naive && a.form != matmul_form::tiled)
    throw error("03_switch.hoisted has no form " + std::string(to_string(a.form)));
  if (a.m == 0 || a.n == 0) return;
  visit_dtype(a.type, [&](auto t) {
    using T = decltype(t);
    const auto *A = static_cast<const T*>(a.a), *B = static_cast<const T*>(a.b);
    auto* C = static_cast<T*>(a.c);
    if (a.form == matmul_form::tiled)
      matmul_tiled_hoisted_kernel<<<skeleton::matmul_tiled_grid(a.m, a.n), skeleton::tiled_threads,
                                    sizeof(skeleton::matmul_slices<T, skeleton::tiled_final_step>),
                                    a.stream>>>(A, B, C, a.m, a.n, a.k, static_cast<int>(a.op));
    else
      matmul_naive_hoisted_kernel<<<skeleton::matmul_grid(a.m, a.n),
                                    dim3(skeleton::matmul_tile, skeleton::matmul_tile), 0, a.stream>>>(
          A, B, C, a.m, a.n, a.k, static_cast<int>(a.op));
    CDL_CHECK_LAUNCH();
  });
}

// Per element: the id comes from the task record, so a warp whose elements hold different
// ids runs each of their cases in turn.
struct per_element_switch {
  __device__ float operator()(int id, float x, float p1, float p2) const {
    return visit<task_ops>(id, [&](auto op) { return op(x, p1, p2); });
  }
};
void launch_tasks(const tasks_launch& a) { skeleton::launch_tasks(a, per_element_switch{}); }

// The op-length sweep: a switch, at every call, over polynomials of every length built in.
using polynomials = op_list<polynomial<1>, polynomial<4>, polynomial<16>, polynomial<30>, polynomial<64>>;
static_assert(polynomials::size == std::size(op_lengths));
void launch_polynomial(const map_launch& a, int steps) {
  const auto at = std::find(std::begin(op_lengths), std::end(op_lengths), steps);
  if (at == std::end(op_lengths))
    throw error("03_switch: no polynomial of " + std::to_string(steps) + " steps");
  const int id = int(at - std::begin(op_lengths));
  skeleton::launch_map_with(a, [&](auto) { return switch_invoker<polynomials>{id}; });
}

}  // namespace

void register_03_switch(registry& r) {
  r.add_all("03_switch", {launch_map, launch_zip, launch_points, launch_image, launch_matmul,
                          registry::per_element_tasks(launch_tasks)});
  r.add_map("03_switch", "hoisted", launch_map_hoisted);
  r.add_matmul("03_switch", "hoisted", launch_matmul_hoisted);
  r.op_length.push_back({"03_switch", launch_polynomial});
}

}  // namespace cdl
