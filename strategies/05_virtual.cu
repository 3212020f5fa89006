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
//          separate function. REG:64 STACK:72 for map_vec_kernel<float, virtual_invoker>.
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
  __device__ auto operator()(A... a) const { return object->apply(a...); }
};

template <class List, template <class> class Sig, class Op>
auto invoker_factory(Op op) {
  return [id = static_cast<int>(op)](auto t) {
    using S = Sig<decltype(t)>;
    static_assert(sizeof(op_object<op_at_t<0, List>, S>) <= slot_bytes);
    return virtual_invoker<S>{device_objects<List, S>::get().object(id)};
  };
}
template <class T> using unary = T(T);
template <class T> using binary = T(T, T);
template <class T> using point_fn = point<T>(point<T>);
template <class T> using ternary = T(T, T, T);
template <class T> using image_fn = T(image_view<T>, int, int, int);

void launch_map(const map_launch& a) { skeleton::launch_map_with(a, invoker_factory<map_ops, unary>(a.op)); }
void launch_zip(const zip_launch& a) { skeleton::launch_zip_with(a, invoker_factory<zip_ops, binary>(a.op)); }
void launch_points(const points_launch& a) {
  skeleton::launch_points_with(a, invoker_factory<point_ops, point_fn>(a.op));
}

void launch_image(const image_launch& a) { skeleton::launch_image_with(a, invoker_factory<image_ops, image_fn>(a.op)); }
void launch_matmul(const matmul_launch& a) {
  skeleton::launch_matmul_with(a, invoker_factory<semirings, ternary>(a.op));
}

// Per element: the object is found from the element's op id (slot i of the family's storage).
struct per_element_virtual {
  const std::byte* storage;
  __device__ float operator()(int id, float x, float p1, float p2) const {
    return reinterpret_cast<const op_base<ternary<float>>*>(storage + slot_bytes * std::size_t(id))->apply(x, p1, p2);
  }
};
void launch_tasks(const tasks_launch& a) {
  skeleton::launch_tasks(a, per_element_virtual{device_objects<task_ops, ternary<float>>::get().storage()});
}

}  // namespace

void register_05_virtual(registry& r) {
  r.add_image("05_virtual", "", launch_image);
  r.add_tasks("05_virtual", "", tasks_form::per_element, launch_tasks);
  r.add_matmul("05_virtual", "", launch_matmul);
  r.add_map("05_virtual", "", launch_map);
  r.add_zip("05_virtual", "", launch_zip);
  r.add_points("05_virtual", "", launch_points);
}

}  // namespace cdl
