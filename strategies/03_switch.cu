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
//          indirect branch through a jump table: 72 of them in this file on sm_90), and no CALL
//          through a register. The price of carrying every op shows in the resource report:
//          map_vec_kernel<float, switch_invoker> needs a 64-byte stack frame (STACK:64) where
//          the template kernel needs none, and at k = 1 its vec form reaches 0.83 of the copy
//          bandwidth instead of 1.00 (H100, 2^28 elements).
#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/tasks.cuh"
#include "common/skeletons/zip.cuh"

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

// Per element: the id comes from the task record, so a warp whose elements hold different
// ids runs each of their cases in turn.
struct per_element_switch {
  __device__ float operator()(int id, float x, float p1, float p2) const {
    return visit<task_ops>(id, [&](auto op) { return op(x, p1, p2); });
  }
};
void launch_tasks(const tasks_launch& a) { skeleton::launch_tasks(a, per_element_switch{}); }

}  // namespace

void register_03_switch(registry& r) {
  r.add_image("03_switch", "", launch_image);
  r.add_tasks("03_switch", "", tasks_form::per_element, launch_tasks);
  r.add_matmul("03_switch", "", launch_matmul);
  r.add_map("03_switch", "", launch_map);
  r.add_zip("03_switch", "", launch_zip);
  r.add_points("03_switch", "", launch_points);
}

}  // namespace cdl
