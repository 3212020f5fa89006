// objects_workload.hpp's fixture: the tasks problem's records made into device objects, in element
// order and by class, and the pointers each element holds to its object.
#include "objects_workload.hpp"

namespace cdl {

std::string_view to_string(object_form f) {
  switch (f) {
    case object_form::virtual_calls: return "virtual";
    case object_form::virtual_by_class: return "virtual_by_class";
    case object_form::coal: return "coal";
    case object_form::coal_inlined: return "coal_inlined";
    case object_form::class_switch: return "class_switch";
    case object_form::type_pointer: return "type_pointer";
    case object_form::coal_prefetched: return "coal_prefetched";
    case object_form::variant: return "variant";
  }
  return "?";
}

template <>
objects_fixture::fixture(const objects_problem& p, std::uint64_t seed)
    : workload_fixture(p, dtype::f32, p.n, tasks_tolerance()),
      in_{.x = device_buffer<float>(p.n),
          .in_order = device_buffer<std::byte>(object_bytes * p.n),
          .by_class = device_buffer<std::byte>(object_bytes * p.n),
          .in_order_pointers = device_buffer<const void*>(p.n),
          .by_class_pointers = device_buffer<const void*>(p.n),
          .tagged_pointers = device_buffer<const void*>(p.n),
          .arena_begin = device_buffer<const char*>(task_op_count + 1),
          .values = device_buffer<std::byte>(sizeof(object_value) * p.n)} {
  tasks_host h = make_tasks_host(p, seed);
  in_.x.copy_from(h.x);
  reference_ = std::move(h.reference);
  // The allocator by class: a counting sort of the elements by op gives each class's arena and
  // each element's slot in it (elements of a class keep their order).
  std::vector<std::size_t> first(task_op_count + 1, 0);
  for (const task& t : h.tasks) ++first[std::size_t(t.op) + 1];
  for (int c = 0; c < task_op_count; ++c) first[c + 1] += first[c];
  std::vector<unsigned> slot(p.n);
  std::vector<std::size_t> next(first.begin(), first.end() - 1);
  for (std::size_t i = 0; i < p.n; ++i) slot[i] = unsigned(next[std::size_t(h.tasks[i].op)]++);
  std::vector<const char*> begin(task_op_count + 1);
  for (int c = 0; c <= task_op_count; ++c)
    begin[c] = reinterpret_cast<const char*>(in_.by_class.data()) + object_bytes * first[c];
  in_.arena_begin.copy_from(begin);
  // The objects by value need no device code to be made: a variant holds no vtable pointer.
  std::vector<object_value> values;
  values.reserve(p.n);
  for (const task& t : h.tasks)
    values.push_back(visit<task_ops>(t.op, [&](auto op) {
      return object_value{task_value<decltype(op)>{t.p1, t.p2}};
    }));
  if (p.n)
    CDL_CUDA_CHECK(cudaMemcpy(in_.values.data(), values.data(), in_.values.size(), cudaMemcpyHostToDevice));
  if (reinterpret_cast<std::uintptr_t>(in_.by_class.data() + in_.by_class.size()) > address_mask)
    throw error("objects: the by-class arena's addresses use the top 8 bits that type_pointer's tags need");
  if (p.n == 0) return;
  device_buffer<task> tasks(p.n);
  device_buffer<unsigned> slots(p.n);
  tasks.copy_from(h.tasks);
  slots.copy_from(slot);
  if (!make_objects)
    throw error(
        "objects: no strategy has installed make_objects (the strategy of the objects' type from their "
        "address does when it registers)");
  make_objects({tasks.data(), slots.data(), p.n, in_.in_order.data(), in_.by_class.data(),
                in_.in_order_pointers.data(), in_.by_class_pointers.data(), in_.tagged_pointers.data()});
  CDL_CUDA_CHECK(cudaDeviceSynchronize());  // before `tasks` and `slots` are freed
  // The objects are never destroyed: their destructors do nothing (no member owns memory), and
  // their storage is freed as bytes with the fixture.
}

template <>
void objects_fixture::launch(objects_launch_fn fn, object_form, cudaStream_t stream) const {
  fn(objects_launch{in_.x.data(), in_.in_order_pointers.data(), in_.by_class_pointers.data(),
                    in_.tagged_pointers.data(), in_.values.data(), in_.arena_begin.data(), output<float>(),
                    problem_.n, stream});
}

}  // namespace cdl
