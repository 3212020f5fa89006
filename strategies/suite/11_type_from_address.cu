// 11 - Type from address (COAL): virtual calls on many objects, with the class found from where
//      the object lives instead of from the vtable pointer it carries.
//
// Idea.    Object-oriented code gives each element an object of one of several classes and calls
//          a virtual method on it (the objects workload, common/objects_workload.hpp): a load of
//          the object's vtable pointer, a load of the vtable entry, a call through a register.
//          Zhang, Alawneh and Rogers, "Judging a type by its pointer: optimizing GPU virtual
//          functions" (ASPLOS 2021), allocate each class's objects in an address range of its own
//          (COAL): the class follows from the object's address by a search of the ranges' bounds,
//          the method from a table by class, with no load from the object; 80 % faster than CUDA's
//          virtual calls on their workloads (Volta-era GPUs). Forms, on the same objects:
//          `virtual` (CUDA's call, objects in element order), `virtual_by_class` (allocated by
//          class), `coal` (search in shared memory, table, indirect call), `coal_prefetched` (the
//          warp asks for its objects first), `type_pointer` (their TypePointer in software: the
//          class in the pointer's unused top bits), `coal_inlined` (search, then a switch of
//          inlined calls), `class_switch` (a switch on a class number the object holds).
// Cost.    An arena per class, sized in advance, and a table of the classes; the inlined and
//          switch forms need the closed set of classes at compile time.
// Use it   where the measurement says so (the report's objects section gives this GPU's answer).
//          Sorted by class, every form reads at the copy's pace; with classes mixed in a warp,
//          the vtable-pointer load COAL saves is also the whole warp's fetch of the objects, before
//          the call splits the warp by class, so the saving can vanish. Where the set of classes
//          is closed, class_switch needs no lookup at all.
// See it.  `cuobjdump -sass`: virtual's kernel loads the pointer (LDG), the vtable pointer
//          (LD.E.64), the vtable entry (LD.E: an index), the method's address (LDC.64 from
//          constant bank 2) and calls (CALL.REL.NOINC); coal's has the search (LDS), the table
//          entry (LDG.E.CONSTANT), the same LDC and CALL, and no load from the object before it;
//          coal_prefetched adds CCTL.E.PF1; coal_inlined and class_switch have a BRX, no CALL.
// Measured: the report's objects section (each form against virtual, per layout, the paper's
//          figure beside, where COAL's time goes, and the counters).
// Run it.  `cdl_bench --benchmark_filter=^objects/11_type_from_address/.*/layout:random/distinct:32/`
//          (its workload is the objects', which cdl_bench runs and cdl_run does not)
#include "common/check.hpp"
#include "common/objects_workload.hpp"
#include "common/registry.hpp"

#include <new>

namespace cdl {
namespace {

inline constexpr int block = 256;

__global__ void __launch_bounds__(block)
    virtual_kernel(const float* x, const void* const* objects, float* y, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = static_cast<const task_object*>(objects[i])->apply(x[i]);
}

// The class whose arena holds p: the last c with begin[c] <= p (arenas of classes not in use are
// empty, begin[c] == begin[c + 1], and are skipped).
__device__ int class_of(const char* p, const char* const* begin) {
  int lo = 0, hi = task_op_count;  // begin[lo] <= p < begin[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (begin[mid] <= p)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

using method = float (*)(const task_object*, float);
template <class Op>
__device__ float call_as(const task_object* o, float x) {
  return static_cast<const task_object_of<Op>*>(o)->apply_here(x);
}
// The classes' methods by class number: COAL's function lookup.
template <class... Ops>
__device__ const method methods_of[] = {&call_as<Ops>...};
template <class... Ops>
__device__ const method* method_table(op_list<Ops...>) {
  return methods_of<Ops...>;
}

template <object_form Form>
__global__ void __launch_bounds__(block)
    by_class_kernel(const float* x, const void* const* objects, const char* const* arena_begin, float* y,
                    std::size_t n) {
  __shared__ const char* begin[task_op_count + 1];  // the arenas' bounds, read by every element
  constexpr bool search =
      Form == object_form::coal || Form == object_form::coal_inlined || Form == object_form::coal_prefetched;
  static_assert(block > task_op_count, "a thread per bound");
  if (search && threadIdx.x <= task_op_count) begin[threadIdx.x] = arena_begin[threadIdx.x];
  __syncthreads();
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const auto* o = static_cast<const task_object*>(objects[i]);  // (type_pointer's is tagged)
  if constexpr (Form == object_form::coal || Form == object_form::coal_prefetched) {
    // A virtual call's first load, of the vtable pointer, is made by the whole warp at once, and
    // brings every element's object into L1 before the call splits the warp by class; without
    // it, each class's turn asks for its own objects, one turn after another. coal_prefetched
    // asks for them first, without waiting for them.
    if constexpr (Form == object_form::coal_prefetched) asm volatile("prefetch.L1 [%0];" ::"l"(o));
    y[i] = method_table(task_ops{})[class_of(reinterpret_cast<const char*>(o), begin)](o, x[i]);
  } else if constexpr (Form == object_form::type_pointer) {
    const auto tagged = reinterpret_cast<std::uintptr_t>(objects[i]);
    const auto* object = reinterpret_cast<const task_object*>(tagged & address_mask);
    y[i] = method_table(task_ops{})[tagged >> class_tag_shift](object, x[i]);
  } else {
    const int c =
        Form == object_form::class_switch ? o->op : class_of(reinterpret_cast<const char*>(o), begin);
    y[i] = visit<task_ops>(c, [&](auto op) { return call_as<decltype(op)>(o, x[i]); });
  }
}

// The objects, made here: a virtual call reaches only vtables made by its own module (this file).
// Element i's object, of its task's class, at in_order + i and at by_class + slot[i], and each
// element's two pointers beside.
__global__ void make_objects_kernel(objects_build b) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= b.n) return;
  const task t = b.tasks[i];
  visit<task_ops>(t.op, [&](auto op) {
    using object = task_object_of<decltype(op)>;
    b.in_order_pointers[i] = new (b.in_order + object_bytes * i) object(t.op, t.p1, t.p2);
    const void* by_class = new (b.by_class + object_bytes * b.slot[i]) object(t.op, t.p1, t.p2);
    b.by_class_pointers[i] = by_class;
    b.tagged_pointers[i] = reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(by_class) |
                                                         std::uintptr_t(t.op) << class_tag_shift);
  });
}
void make_objects_here(const objects_build& b) {
  make_objects_kernel<<<unsigned((b.n + block - 1) / block), block>>>(b);
  CDL_CHECK_LAUNCH();
}

template <object_form Form>
void launch(const objects_launch& a) {
  if (a.n == 0) return;
  const unsigned grid = unsigned((a.n + block - 1) / block);
  if constexpr (Form == object_form::virtual_calls)
    virtual_kernel<<<grid, block, 0, a.stream>>>(a.x, a.objects, a.y, a.n);
  else if constexpr (Form == object_form::virtual_by_class)
    virtual_kernel<<<grid, block, 0, a.stream>>>(a.x, a.by_class, a.y, a.n);
  else if constexpr (Form == object_form::class_switch)
    by_class_kernel<Form><<<grid, block, 0, a.stream>>>(a.x, a.objects, a.arena_begin, a.y, a.n);
  else if constexpr (Form == object_form::type_pointer)
    by_class_kernel<Form><<<grid, block, 0, a.stream>>>(a.x, a.tagged, a.arena_begin, a.y, a.n);
  else
    by_class_kernel<Form><<<grid, block, 0, a.stream>>>(a.x, a.by_class, a.arena_begin, a.y, a.n);
  CDL_CHECK_LAUNCH();
}

}  // namespace

void register_11_type_from_address(registry& r) {
  make_objects = make_objects_here;
  r.objects.push_back(
      {"11_type_from_address", "", object_form::virtual_calls, launch<object_form::virtual_calls>});
  r.objects.push_back(
      {"11_type_from_address", "", object_form::virtual_by_class, launch<object_form::virtual_by_class>});
  r.objects.push_back({"11_type_from_address", "", object_form::coal, launch<object_form::coal>});
  r.objects.push_back(
      {"11_type_from_address", "", object_form::coal_inlined, launch<object_form::coal_inlined>});
  r.objects.push_back(
      {"11_type_from_address", "", object_form::class_switch, launch<object_form::class_switch>});
  r.objects.push_back(
      {"11_type_from_address", "", object_form::type_pointer, launch<object_form::type_pointer>});
  r.objects.push_back(
      {"11_type_from_address", "", object_form::coal_prefetched, launch<object_form::coal_prefetched>});
}

}  // namespace cdl
