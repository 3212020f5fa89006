// The syllabus: every strategy, in reading order. Adding a strategy means adding its file and
// one line here; tests, benchmarks and the demo pick it up from the registry.
#include "common/registry.hpp"

#include "common/check.hpp"
#include "strategies/suite/one_workload.hpp"

#include <algorithm>

namespace cdl {

// Each strategy registers its entries through one of these, called in reading order.
void register_00_inline(registry&);
void register_01_template_functor(registry&);
void register_02_device_lambda(registry&);
void register_03_switch(registry&);
void register_04_function_pointer(registry&);  // below: the parts of one_workload.hpp
void register_05_virtual(registry&);
void register_06_nvrtc_jit(registry&);
void register_07_jit_lto(registry&);
void register_08_expression_jit(registry&);  // map only: the language has x and nothing else
void register_09_shared_memory(registry&);   // the tiled and staged forms of the others' entries
void register_10_tiered_dispatch(registry&);
void register_11_type_from_address(registry&);   // the objects workload only
void register_12_variant_visit(registry&);       // every workload but tasks (its header says why)
void register_13_precompiled_plugin(registry&);  // the map (its plugins are map kernels)
void register_14_graph_switch(registry&);        // the map and the tasks groups (nodes choose kernels)
void register_15_device_launch(registry&);       // the map and the tasks groups (a kernel launches them)
void register_16_interpreter(registry&);         // the map (08's language, run as data)
void register_17_copy_and_patch(registry&);      // the op-length sweep (float, its stencils' operations)

// 04 and 05 are compiled once per workload (one_workload.hpp); each part registers its own.
#define CDL_DECLARE_PART(strategy, workload) void register_##strategy##_##workload(registry&);
#define CDL_CALL_PART(strategy, workload) register_##strategy##_##workload(r);
CDL_SPLIT_PARTS(CDL_DECLARE_PART, 04_function_pointer)
CDL_SPLIT_PARTS(CDL_DECLARE_PART, 05_virtual)
void register_04_function_pointer(registry& r) { CDL_SPLIT_PARTS(CDL_CALL_PART, 04_function_pointer) }
void register_05_virtual(registry& r) { CDL_SPLIT_PARTS(CDL_CALL_PART, 05_virtual) }

void registry::add_map(std::string strategy, std::string variant, map_launch_fn launch,
                       std::string (*refuses)(const map_launch&)) {
  for (map_form form : {map_form::scalar, map_form::vec})
    map.push_back({strategy, variant, form, launch, refuses});
}
void registry::add_zip(std::string strategy, std::string variant, zip_launch_fn launch) {
  for (map_form form : {map_form::scalar, map_form::vec}) zip.push_back({strategy, variant, form, launch});
}
void registry::add_points(std::string strategy, std::string variant, points_launch_fn launch) {
  for (layout l : {layout::aos, layout::soa}) points.push_back({strategy, variant, l, launch});
}

void registry::add_image(std::string strategy, std::string variant, image_launch_fn launch) {
  image.push_back({strategy, variant, image_form::global, launch});
}
void registry::add_tasks(std::string strategy, std::string variant, tasks_form form, tasks_launch_fn launch) {
  tasks.push_back({strategy, variant, form, launch});
}
void registry::add_matmul(std::string strategy, std::string variant, matmul_launch_fn launch) {
  matmul.push_back({strategy, variant, matmul_form::naive, launch});
}

void registry::add_all(const std::string& strategy, const launches& l, const std::string& variant) {
  add_map(strategy, variant, l.map);
  add_zip(strategy, variant, l.zip);
  add_points(strategy, variant, l.points);
  add_image(strategy, variant, l.image);
  add_matmul(strategy, variant, l.matmul);
  for (const auto& [form, launch] : l.tasks) add_tasks(strategy, variant, form, launch);
}

const registry& get_registry() {
  static const registry r = [] {
    registry built;
    register_00_inline(built);
    register_01_template_functor(built);
    register_02_device_lambda(built);
    register_03_switch(built);
    register_04_function_pointer(built);
    register_05_virtual(built);
    register_06_nvrtc_jit(built);
    register_07_jit_lto(built);
    register_08_expression_jit(built);
    register_10_tiered_dispatch(built);
    register_11_type_from_address(built);
    register_12_variant_visit(built);
    register_13_precompiled_plugin(built);
    register_14_graph_switch(built);
    register_15_device_launch(built);
    register_16_interpreter(built);
    register_17_copy_and_patch(built);
    register_09_shared_memory(built);  // last: it adds its forms to every strategy's entries
    // Reading order: each strategy's forms together, strategies by number.
    const auto in_reading_order = [](auto& entries) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.strategy < b.strategy; });
    };
    in_reading_order(built.map);
    in_reading_order(built.zip);
    in_reading_order(built.points);
    in_reading_order(built.image);
    in_reading_order(built.tasks);
    in_reading_order(built.matmul);
    in_reading_order(built.objects);
    return built;
  }();
  return r;
}

template <class Entry>
const Entry& find_entry(const std::vector<Entry>& entries, std::string_view name, std::string_view workload) {
  for (const Entry& e : entries)
    if (e.name() == name) return e;
  // The list of names is for the error alone: a lookup that succeeds (10's tiered_map makes one
  // beside a new op's first launch) does not build it.
  std::string valid;
  for (const Entry& e : entries) valid += "\n  " + e.name();
  throw error("unknown strategy '" + std::string(name) + "' for workload " + std::string(workload) +
              "; registered:" + valid);
}
const op_route& find_route(std::string_view name) {
  for (const op_route& r : get_registry().routes)
    if (r.name() == name) return r;
  std::string valid;
  for (const op_route& r : get_registry().routes) valid += "\n  " + r.name();
  throw error("unknown route '" + std::string(name) + "' for a user's op; registered:" + valid);
}

template const map_entry& find_entry(const std::vector<map_entry>&, std::string_view, std::string_view);
template const zip_entry& find_entry(const std::vector<zip_entry>&, std::string_view, std::string_view);
template const points_entry& find_entry(const std::vector<points_entry>&, std::string_view, std::string_view);
template const image_entry& find_entry(const std::vector<image_entry>&, std::string_view, std::string_view);
template const tasks_entry& find_entry(const std::vector<tasks_entry>&, std::string_view, std::string_view);
template const matmul_entry& find_entry(const std::vector<matmul_entry>&, std::string_view, std::string_view);

}  // namespace cdl
