// The objects workload: the tasks workload's work (y[i] = op(x[i], p1, p2), the same records,
// layouts and float64 reference, tasks_workload.hpp) written the way object-oriented code writes
// it: one heap object per element, of one of several classes (the op is the class, p1 and p2
// are its members), each element calling a virtual method of its own object. The objects are
// made on the device (an object with virtual functions must be: its vtable pointer is a device
// address) by the fixture, twice over:
//   in element order - as `new` in a loop over the elements would place them: the classes
//                      interleave as the layout does;
//   by class         - each class in an arena of its own, the arenas one after the other (the
//                      allocation of COAL): an object's class follows from which arena its
//                      address falls in.
// and once more by value, on the host: a cuda::std::variant per element, no vtable, no pointer.
// The strategies differ in how they find the method.
#pragma once

#include "fixture.hpp"
#include "tasks_workload.hpp"

#if defined(__CUDACC__)
#include <cuda/std/variant>
#endif

namespace cdl {

// Which objects a form calls through, and how it finds the method.
enum class object_form {
  virtual_calls,     // element-order objects, a virtual call (vtable pointer, vtable, call)
  virtual_by_class,  // the objects allocated by class, still a virtual call
  coal,              // allocated by class; the class from the address, the method from a table
  coal_inlined,      // allocated by class; the class from the address, a switch, the method inlined
  class_switch,      // element-order objects; a switch on the class number the object stores
  type_pointer,      // allocated by class; the class in the pointer's top bits, the method from a table
  coal_prefetched,   // coal, the warp asking for its objects before the call splits it by class
  variant            // the objects held by value, a cuda::std::variant each, visited
};
std::string_view to_string(object_form f);

// Every object: 8 bytes of vtable pointer, its class number (what a tagged union would hold, read
// by class_switch only) and the task's two parameters.
inline constexpr std::size_t object_bytes = 24;

// type_pointer's pointers carry the class in their top 8 bits, which no device address uses (a
// virtual address has 57 bits at most); the object is at the pointer with those bits cleared.
inline constexpr int class_tag_shift = 56;
inline constexpr std::uint64_t address_mask = (std::uint64_t(1) << class_tag_shift) - 1;
static_assert(task_op_count <= 256, "the class must fit in a pointer's top 8 bits");

// The tasks problem, named as this workload's (benchmarks "objects/..."). An element reads its
// pointer, its object and x, and writes y.
struct objects_problem : tasks_problem {
  std::string describe() const { return "objects" + tasks_problem::describe().substr(5); }
  std::size_t min_bytes() const { return n * (sizeof(void*) + object_bytes + 2 * sizeof(float)); }
};

struct objects_launch {
  const float* x;
  const void* const* objects;      // element i's object, in element order
  const void* const* by_class;     // element i's object, allocated by class
  const void* const* tagged;       // the same pointers with the class in their top bits (type_pointer)
  const void* values;              // element i's object by value: object_value[n] (variant)
  const char* const* arena_begin;  // task_op_count + 1 bounds: class c's arena is [begin[c], begin[c + 1])
  float* y;
  std::size_t n;
  cudaStream_t stream;
};
using objects_launch_fn = void (*)(const objects_launch&);

#if defined(__CUDACC__)
// The classes. The base is what an element's pointer points to; a class per op of the tasks
// catalogue derives from it. apply_here is the same method called without the vtable (a
// qualified call the compiler inlines), for the forms that know the class another way.
struct task_object {
  int op;
  float p1, p2;
  __device__ task_object(int o, float a, float b) : op(o), p1(a), p2(b) {}
  __device__ virtual float apply(float x) const = 0;
  __device__ virtual ~task_object() {}
};
template <class Op>
struct task_object_of final : task_object {
  using task_object::task_object;
  __device__ float apply_here(float x) const { return Op{}(x, p1, p2); }
  __device__ float apply(float x) const override { return apply_here(x); }
};
static_assert(sizeof(task_object_of<ops::task_op<0>>) == object_bytes);

// The same objects held by value, as C++ offers instead of a class hierarchy: one struct per class
// (its members, a method that is not virtual) and a cuda::std::variant of them, whose index is
// the class. No vtable and no pointer: the array holds the objects themselves, in element order.
template <class Op>
struct task_value {
  float p1, p2;
  __device__ float apply(float x) const { return Op{}(x, p1, p2); }
};
template <class... Ops>
cuda::std::variant<task_value<Ops>...> values_of(op_list<Ops...>);
using object_value = decltype(values_of(task_ops{}));
#endif

// What making the objects takes: the records and each element's slot by class, on the device.
struct objects_build {
  const task* tasks;
  const unsigned* slot;  // element i's object goes to by_class + slot[i] * object_bytes
  std::size_t n;
  std::byte* in_order;
  std::byte* by_class;
  const void** in_order_pointers;
  const void** by_class_pointers;
  const void** tagged_pointers;  // by_class_pointers[i] | class << class_tag_shift
};
// The objects are made by the strategy whose kernels call them, not by the fixture: each .cu file
// is a CUDA module of its own, and a function of one module cannot be called through a pointer
// (a vtable entry) from another (the module's constants, registers and shared memory are its
// own). Strategy 11 installs its maker here when it registers; the fixture calls it.
inline void (*make_objects)(const objects_build&) = nullptr;

struct objects_inputs {
  device_buffer<float> x;
  device_buffer<std::byte> in_order, by_class;  // the objects
  device_buffer<const void*> in_order_pointers, by_class_pointers, tagged_pointers;
  device_buffer<const char*> arena_begin;
  device_buffer<std::byte> values;  // object_value[n], made on the host
};
using objects_fixture = fixture<objects_problem, objects_launch_fn, object_form, objects_inputs>;

}  // namespace cdl
