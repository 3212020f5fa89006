// The syllabus: every strategy, in reading order. Adding a strategy means adding its file and
// one line here; tests, benchmarks and the demo pick it up from the registry.
#include "common/registry.hpp"

#include "common/check.hpp"

namespace cdl {

std::string map_entry::name() const {
  return strategy + (variant.empty() ? "" : "." + variant) + "/" + std::string(to_string(form));
}

void add_map_entries(registry& r, std::string strategy, std::string variant, map_launch_fn launch) {
  for (map_form form : {map_form::scalar, map_form::vec}) r.map.push_back({strategy, variant, form, launch});
}

const registry& get_registry() {
  static const registry r = [] {
    registry built;
    register_00_inline(built);
    register_01_template_functor(built);
    register_04_function_pointer(built);
    return built;
  }();
  return r;
}

const map_entry& find_map_entry(std::string_view name) {
  std::string valid;
  for (const map_entry& e : get_registry().map) {
    if (e.name() == name) return e;
    valid += "\n  " + e.name();
  }
  throw error("unknown strategy '" + std::string(name) + "' for workload map; registered:" + valid);
}

}  // namespace cdl
