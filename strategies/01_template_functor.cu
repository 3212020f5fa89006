// 01 - Template functor: the op is a type, and the kernel a template over it.
//
// Idea.    `template <class F> __global__ void k(..., F f)` calls f(x). Instantiated with a
//          functor type (ops::quadratic, a struct with a __host__ __device__ operator()), the
//          call is resolved at compile time and inlined: the kernel is the inline baseline.
//          This is how CUB, Thrust and the standard algorithms take functions.
// Cost.    Nothing at run time. At build time, one kernel per (op, type, form): compile time
//          and binary size grow with the product. The op must be known when the program is
//          compiled; choosing it at run time means a host-side switch over every
//          instantiation (cdl::visit_op), and an op per *element* is not possible at all
//          (the tasks workload shows this strategy's answer: group by op, one launch each).
// Use it   by default: whenever the set of functions is known at build time.
// See it.  The SASS of map_vec_kernel<float, ops::quadratic> matches 00's inline_quadratic_vec
//          instruction for instruction: FFMAs in the loop, no CALL, no stack frame
//          (`cuobjdump -res-usage` reports 0 bytes of stack).
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"

namespace cdl {
namespace {

template <class T>
void launch_typed(const map_launch& a) {
  // visit_op turns the run-time op id into a functor *type*; each branch instantiates the
  // skeleton for one op. The functor itself is empty: passing it by value costs nothing.
  visit_op(a.op, [&](auto op) { skeleton::launch_map(a.form, input<T>(a), output<T>(a), a.n, a.k, op, a.stream); });
}

void launch(const map_launch& a) {
  visit_dtype(a.type, [&](auto t) { launch_typed<decltype(t)>(a); });
}

}  // namespace

void register_01_template_functor(registry& r) { add_map_entries(r, "01_template_functor", "", launch); }

}  // namespace cdl
