// The registry: the one list of (strategy, workload) implementations. Tests, benchmarks and
// the demo program all iterate over it, so nothing is implemented without being validated and
// measured. Building it touches no GPU (only function pointers and names), so tests can be
// listed, and CPU tests run, on a machine without one.
#pragma once

#include "image_workload.hpp"
#include "map_workload.hpp"
#include "matmul_workload.hpp"
#include "objects_workload.hpp"
#include "op_text.hpp"
#include "points_workload.hpp"
#include "tasks_workload.hpp"
#include "zip_workload.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cdl {

// One implementation of one workload: a strategy (file stem in strategies/), an optional
// variant of its mechanism, the kernel form or data layout, and the launch function.
template <class Launch, class Form>
struct registry_entry {
  std::string strategy;  // the lesson's file name without .cu, e.g. "NN_function_pointer"
  std::string variant;   // e.g. "symbol", "table"; empty if the strategy has one mechanism
  Form form;
  void (*launch)(const Launch&);
  // Why it cannot run a launch's problem (its op and type: a patched image holds some ops alone),
  // answered with no GPU; null where it runs every problem.
  std::string (*refuses)(const Launch&) = nullptr;

  std::string refusal(const Launch& a) const { return refuses ? refuses(a) : ""; }

  // "strategy.variant/form": unique, stable, used in test and benchmark names.
  std::string name() const {
    return strategy + (variant.empty() ? "" : "." + variant) + "/" + std::string(to_string(form));
  }
};

using map_entry = registry_entry<map_launch, map_form>;
using zip_entry = registry_entry<zip_launch, map_form>;
using points_entry = registry_entry<points_launch, layout>;
using image_entry = registry_entry<image_launch, image_form>;
using tasks_entry = registry_entry<tasks_launch, tasks_form>;
using matmul_entry = registry_entry<matmul_launch, matmul_form>;
using objects_entry = registry_entry<objects_launch, object_form>;

// The op-length sweep (common/polynomial.hpp): the map of a polynomial of `steps` steps, by each
// strategy that runs an op of any length: from its text (compiled, interpreted or patched), or by a
// switch over the lengths built in; in the vec form (or the scalar one, where an entry says so), and
// in float64 where `float64` says so.
using length_launch_fn = void (*)(const map_launch& a, int steps);
struct length_entry {
  std::string strategy;
  length_launch_fn launch;
  map_form form = map_form::vec;
  bool float64 = true;  // whether it runs the float64 problems too
  std::string name() const { return strategy + "/" + std::string(to_string(form)); }
};

// A route that runs an op given as text at run time, a user's op (cdl_run --expr, the JIT stages,
// 10's tiers): compiled (06, 07, 08), interpreted (16) or patched (17). Each strategy registers its
// own; whoever runs a user's op finds them here, by name or all of them, so that a new route is its
// own files and one registration. A route's kernel for a text is made at the first launch of that
// text (or by prepare), found by the text after.
// What a route says, with no GPU, of whether it takes an op and how (cdl_run --explain).
struct route_explanation {
  bool taken = false;  // in at least one form
  std::string text;
};
struct op_route {
  std::string strategy;   // its strategy's file stem, e.g. "08_expression_jit"
  std::string variant;    // e.g. "baseline"; empty for the strategy's own
  bool language = false;  // reads 08's language (the op's program); else C++ text, or either
  void (*launch)(const map_launch& a, const jit::op_text& op);
  // Why it would not run op at type t in form f, with the routes that do; "" where it runs it.
  // Answered with no GPU, but for what only the GPU tells (17: the stencils' architecture).
  std::string (*refuses)(const jit::op_text& op, dtype t, map_form f) = nullptr;
  // Its kernel for op made (compiled, patched, encoded) and loaded now, as at its first launch:
  // false where it refuses the op, its type or the form (refusal() says why).
  bool (*prepare)(const jit::op_text& op, dtype t, map_form f) = nullptr;
  // What a user should know of how it runs op, where that is not the form asked ("" otherwise).
  std::string (*note)(const jit::op_text& op, dtype t, map_form f) = nullptr;
  // With no GPU: whether it takes op at type t and how, form by form (where it has more to say of
  // that than its refusal: 17, whose answer is the image the op is written into).
  route_explanation (*explain)(const jit::op_text& op, dtype t) = nullptr;

  std::string name() const { return strategy + (variant.empty() ? "" : "." + variant); }
  std::string refusal(const jit::op_text& op, dtype t, map_form f) const {
    return refuses ? refuses(op, t, f) : "";
  }
};

struct registry {
  std::vector<map_entry> map;
  std::vector<zip_entry> zip;
  std::vector<image_entry> image;
  std::vector<tasks_entry> tasks;
  std::vector<points_entry> points;
  std::vector<matmul_entry> matmul;
  std::vector<objects_entry>
      objects;  // the objects' own forms: the other workloads' calls are on task records
  std::vector<length_entry> op_length;
  std::vector<op_route> routes;  // in reading order

  // Each strategy adds its launch functions through these: one entry per kernel form or layout.
  void add_map(std::string strategy, std::string variant, map_launch_fn launch,
               std::string (*refuses)(const map_launch&) = nullptr);
  void add_zip(std::string strategy, std::string variant, zip_launch_fn launch);
  void add_points(std::string strategy, std::string variant, points_launch_fn launch);
  void add_image(std::string strategy, std::string variant, image_launch_fn launch);
  void add_tasks(std::string strategy, std::string variant, tasks_form form, tasks_launch_fn launch);
  void add_matmul(std::string strategy, std::string variant, matmul_launch_fn launch);

  // A strategy that serves every workload, a launch function each (tasks: one per form it has).
  struct launches {
    map_launch_fn map;
    zip_launch_fn zip;
    points_launch_fn points;
    image_launch_fn image;
    matmul_launch_fn matmul;
    std::vector<std::pair<tasks_form, tasks_launch_fn>> tasks;  // per_element_tasks or grouped_tasks
  };
  static std::vector<std::pair<tasks_form, tasks_launch_fn>> per_element_tasks(tasks_launch_fn launch) {
    return {{tasks_form::per_element, launch}};
  }
  // One kernel per op, the groups' sizes brought to the host or left on the device.
  static std::vector<std::pair<tasks_form, tasks_launch_fn>> grouped_tasks(tasks_launch_fn on_host,
                                                                           tasks_launch_fn on_device) {
    return {{tasks_form::grouped, on_host}, {tasks_form::grouped_device, on_device}};
  }
  void add_all(const std::string& strategy, const launches& l, const std::string& variant = "");
};

// Built on first use from the strategy list in strategies/suite/registry.cpp.
const registry& get_registry();

// Finds an entry by name(); throws cdl::error listing the registered names when there is none.
template <class Entry>
const Entry& find_entry(const std::vector<Entry>& entries, std::string_view name, std::string_view workload);
inline const map_entry& find_map_entry(std::string_view name) {
  return find_entry(get_registry().map, name, "map");
}
// The route of that name(); cdl::error listing the routes where there is none.
const op_route& find_route(std::string_view name);

}  // namespace cdl
