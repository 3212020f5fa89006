// The registry: the one list of (strategy, workload) implementations. Tests, benchmarks and
// the demo program all iterate over it, so nothing is implemented without being validated and
// measured. Building it touches no GPU (only function pointers and names), so tests can be
// listed, and CPU tests run, on a machine without one.
#pragma once

#include "map_workload.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cdl {

struct map_entry {
  std::string strategy;  // file stem in strategies/, e.g. "04_function_pointer"
  std::string variant;   // mechanism within the strategy ("symbol", "table"); empty if one
  map_form form;
  map_launch_fn launch;

  // "04_function_pointer.table/vec": unique, stable, used in test and benchmark names.
  std::string name() const;
};

struct registry {
  std::vector<map_entry> map;
};

// Adds one entry per kernel form (scalar, vec) for a strategy's launch function.
void add_map_entries(registry& r, std::string strategy, std::string variant, map_launch_fn launch);

// Built on first use from the strategy list in strategies/registry.cpp.
const registry& get_registry();

// Throws cdl::error naming the valid entries when `name` is not one.
const map_entry& find_map_entry(std::string_view name);

// Each strategy registers its entries through one of these, called in reading order.
void register_00_inline(registry&);
void register_01_template_functor(registry&);
void register_04_function_pointer(registry&);

}  // namespace cdl
