// 05 - Virtual functions: the op is an object, called through its vtable.
//
// Idea.    A base class declares `virtual R apply(A...) const`; each op is a derived class.
//          A kernel calls apply through a base pointer and the object's vtable picks the
//          function. The vtable pointer inside an object is an address in the code space of
//          whoever *constructed* it, so objects used on the device must be constructed on the
//          device: a one-thread kernel placement-news them into device memory, and another
//          runs their destructors before the memory is freed. Copying a host-built object to
//          the device gives it a host vtable pointer: calling it faults.
// Cost.    Per call: load the vtable pointer from the object, load the function address from
//          the vtable, call indirectly (everything strategy 04 costs, plus two dependent
//          loads). Once: two kernel launches and an allocation to build and destroy the
//          objects, kept here for the life of the process.
// Use it   when the ops are naturally objects with state and a common interface, and the
//          per-call cost is amortised by real work per call. For a handful of small pure
//          functions, 01 or 03 is simpler and faster.
// See it.  `cuobjdump -sass`: a load of the vtable pointer from the object, a load of the
//          function's address from the vtable (LDC from constant bank 2, where the compiler
//          places vtables), then `CALL.REL.NOINC R<n>`; each op_object<...>::apply is a
//          separate function (the report's resource table gives the kernels' registers).
// Build.   As 04, compiled once per workload (strategies/suite/one_workload.hpp), so that one
//          workload's objects do not size another's calls; `crowded` is the file compiled whole.
// Run it.  `cdl_run --strategy 05_virtual/vec --op quadratic --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. The mechanism alone is the lesson, strategies/05_virtual.cu. This is the general form, an invoker
//          that calls a virtual method, handed to the skeletons, as in every workload, so that every strategy
//          runs the same loop and a difference in time is the call.
#include "strategies/suite/one_workload.hpp"

#include "common/registry.hpp"
#include "common/skeletons/image.cuh"
#include "common/skeletons/map.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/points.cuh"
#include "common/skeletons/tasks.cuh"
#include "common/skeletons/zip.cuh"

#include <new>

namespace cdl {
namespace {

using namespace signatures;

template <class Sig>
struct op_base;
template <class R, class... A>
struct op_base<R(A...)> {
  __device__ virtual R apply(A... a) const = 0;
  __device__ virtual ~op_base() {}
};

template <class Op, class Sig>
struct op_object;
template <class Op, class R, class... A>
struct op_object<Op, R(A...)> final : op_base<R(A...)> {
  __device__ R apply(A... a) const override { return Op{}(a...); }
};

// Every op object of a family gets a fixed-size slot, so slot i lives at storage + i * slot.
inline constexpr std::size_t slot_bytes = 16;

template <class Sig, class... Ops>
__global__ void construct_objects(std::byte* storage, op_list<Ops...>) {
  std::size_t i = 0;
  ((new (storage + slot_bytes * i++) op_object<Ops, Sig>()), ...);
}
template <class Sig>
__global__ void destroy_objects(std::byte* storage, int count) {
  for (int i = 0; i < count; ++i) reinterpret_cast<op_base<Sig>*>(storage + slot_bytes * i)->~op_base();
}

// The objects of one family for one signature, built on first use and destroyed at exit.
template <class List, class Sig>
class device_objects {
 public:
  device_objects() : storage_(slot_bytes * List::size) {
    construct_objects<Sig><<<1, 1>>>(storage_.data(), List{});
    CDL_CHECK_LAUNCH();
    CDL_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~device_objects() {
    destroy_objects<Sig><<<1, 1>>>(storage_.data(), List::size);
    cudaDeviceSynchronize();  // a destructor must not throw; a failure here only leaks
  }
  const std::byte* storage() const { return storage_.data(); }
  const op_base<Sig>* object(int id) const {
    return reinterpret_cast<const op_base<Sig>*>(storage_.data() + slot_bytes * std::size_t(id));
  }
  static const device_objects& get() {
    static const device_objects objects;
    return objects;
  }

 private:
  device_buffer<std::byte> storage_;
};

template <class Sig>
struct virtual_invoker {
  const op_base<Sig>* object;
  template <class... A>
  __device__ auto operator()(A... a) const {
    return object->apply(a...);
  }
};

template <class List, template <class> class Sig, class Op>
auto invoker_factory(Op op) {
  return [id = static_cast<int>(op)](auto t) {
    using S = Sig<decltype(t)>;
    static_assert(sizeof(op_object<op_at_t<0, List>, S>) <= slot_bytes);
    return virtual_invoker<S>{device_objects<List, S>::get().object(id)};
  };
}

// The launches, each compiled only where this object serves its workload.
#if CDL_SERVES(map)
void launch_map(const map_launch& a) { skeleton::launch_map_with(a, invoker_factory<map_ops, unary>(a.op)); }
#endif
#if CDL_SERVES(zip)
void launch_zip(const zip_launch& a) { skeleton::launch_zip_with(a, invoker_factory<zip_ops, binary>(a.op)); }
#endif
#if CDL_SERVES(points)
void launch_points(const points_launch& a) {
  skeleton::launch_points_with(a, invoker_factory<point_ops, point_fn>(a.op));
}
#endif
#if CDL_SERVES(image)
void launch_image(const image_launch& a) {
  skeleton::launch_image_with(a, invoker_factory<image_ops, image_fn>(a.op));
}
#endif
#if CDL_SERVES(matmul)
void launch_matmul(const matmul_launch& a) {
  skeleton::launch_matmul_with(a, invoker_factory<semirings, ternary>(a.op));
}
#endif
#if CDL_SERVES(tasks)
// Per element: the object is found from the element's op id (slot i of the family's storage).
struct per_element_virtual {
  const std::byte* storage;
  __device__ float operator()(int id, float x, float p1, float p2) const {
    return reinterpret_cast<const op_base<ternary<float>>*>(storage + slot_bytes * std::size_t(id))
        ->apply(x, p1, p2);
  }
};
void launch_tasks(const tasks_launch& a) {
  skeleton::launch_tasks(a, per_element_virtual{device_objects<task_ops, ternary<float>>::get().storage()});
}
#endif

}  // namespace

void CDL_REGISTER_PART(registry& r) {
#if CDL_CROWDED
  // Every workload's launches (and so their objects' functions) in this one module; only the
  // map's is registered, to be measured beside the map's own build.
  r.add_map("05_virtual", "crowded", launch_map);
  (void)&launch_zip, (void)&launch_points, (void)&launch_image, (void)&launch_matmul, (void)&launch_tasks;
#elif CDL_SERVES(map)
  r.add_map("05_virtual", "", launch_map);
#elif CDL_SERVES(zip)
  r.add_zip("05_virtual", "", launch_zip);
#elif CDL_SERVES(points)
  r.add_points("05_virtual", "", launch_points);
#elif CDL_SERVES(image)
  r.add_image("05_virtual", "", launch_image);
#elif CDL_SERVES(matmul)
  r.add_matmul("05_virtual", "", launch_matmul);
#elif CDL_SERVES(tasks)
  r.add_tasks("05_virtual", "", tasks_form::per_element, launch_tasks);
#endif
}

}  // namespace cdl
