// The tasks workload: per-element heterogeneous work. Each element carries a task record
// {op, p1, p2} and y[i] = op(x[i], p1, p2), with `distinct` different ops arranged by a layout:
//   uniform - one op for every element (no choice to make: the floor for the others);
//   sorted  - contiguous runs, one op each (a warp rarely straddles two);
//   warp    - one op per warp of 32 consecutive elements (no divergence, but every warp differs);
//   random  - an independent random op per element (the worst case: up to `distinct` paths
//             per warp).
#pragma once

#include "fixture.hpp"
#include "ops.cuh"
#include "skeletons/tasks.cuh"

namespace cdl {

enum class task_layout { uniform, sorted, warp, random };
std::string_view to_string(task_layout l);

// How an implementation reaches the op: one kernel choosing per element, or grouping the
// elements by op and launching one kernel per op (the template strategies' answer), with the
// group sizes brought to the host (`grouped`) or left on the device (`grouped_device`).
enum class tasks_form { per_element, grouped, grouped_device };
inline std::string_view to_string(tasks_form f) {
  return f == tasks_form::per_element ? "per_element"
         : f == tasks_form::grouped   ? "grouped"
                                      : "grouped_device";
}

struct tasks_problem {
  task_layout layout = task_layout::random;
  int distinct = 8;  // 1..32 ops in use
  std::size_t n = 0;

  std::string describe() const;
  std::size_t min_bytes() const { return n * (2 * sizeof(float) + sizeof(task)); }
};

struct tasks_launch {
  const float* x;
  const task* tasks;
  float* y;
  std::size_t n;
  cudaStream_t stream;
};
using tasks_launch_fn = void (*)(const tasks_launch&);

// Groups the elements by op on the device (radix sort of (op, index) pairs, then run-length
// encoding) and copies the group boundaries to the host. The sort, the encoding and that
// synchronising copy are the price of per-op kernels, and are inside the timed launch.
struct task_groups {
  const unsigned* index;             // element indices sorted by op (device)
  std::vector<int> ops;              // op of each group
  std::vector<std::size_t> offsets;  // group g is index[offsets[g] .. offsets[g + 1])
};
task_groups group_tasks(const tasks_launch& a);
// The kernels of a grouping: a template kernel per op that occurs, over its index list, so that
// each reads x and the records and writes y through the permutation (scattered, where the layout
// mixes ops). group_tasks then this is the template strategies' `grouped` launch.
void run_task_groups(const tasks_launch& a, const task_groups& g);

// A grouping kept for later launches: group_tasks's index lives in scratch that its next call
// reuses, so this holds a copy. What a caller that groups once and launches many times keeps (the
// form `grouped_reused`: each launch is run_task_groups alone).
struct kept_task_groups {
  explicit kept_task_groups(const tasks_launch& a);
  device_buffer<unsigned> index;
  task_groups groups;  // its index points into `index`
};

// The data moved into op order once (x and the records gathered through a kept grouping's index),
// so that each op's kernel reads and writes contiguous ranges: the form `in_op_order`, whose
// launch is run_kernels (y in op order, here) then scatter (y back into a.y, element order). Its
// grouping serves the form `grouped_reused` too (run_task_groups(a, groups())).
class tasks_in_op_order {
 public:
  explicit tasks_in_op_order(const tasks_launch& a);
  const task_groups& groups() const { return kept_.groups; }
  void run(const tasks_launch& a) const {
    run_kernels(a.stream);
    scatter(a);
  }
  void run_kernels(cudaStream_t stream) const;
  void scatter(const tasks_launch& a) const;

 private:
  kept_task_groups kept_;
  device_buffer<float> x_;
  mutable device_buffer<float> y_;  // each launch's results, in op order
  device_buffer<task> tasks_;
};

// The same grouping with no round trip to the host: the sort, then each op id's range found on
// the device (begin[id] .. begin[id + 1] of index, for all task_op_count ids). The host cannot
// know which ops occur without asking, which is the round trip this avoids, so it launches one
// kernel per op id and each kernel reads its own range (skeleton::launch_task_range); a kernel
// whose op does not occur finds an empty range and exits.
struct device_task_groups {
  const unsigned* index;  // element indices sorted by op (device)
  const unsigned* begin;  // task_op_count + 1 range boundaries (device)
  unsigned blocks;        // the grid of each range kernel: as many blocks as the GPU holds at once
};
device_task_groups group_tasks_on_device(const tasks_launch& a);

// The host side of a problem, built without a GPU: x (from `seed`), the task records (p1, p2
// from `seed + 1`, `seed + 2`; random ops from `seed + 3`) and the float64 reference. The fixture
// uploads it; cdl_problem writes it out for the Python peers.
struct tasks_host {
  std::vector<float> x;
  std::vector<task> tasks;
  std::vector<reference_value> reference;
};
tasks_host make_tasks_host(const tasks_problem& p, std::uint64_t seed);
double tasks_tolerance();

struct tasks_inputs {
  device_buffer<float> x;
  device_buffer<task> tasks;
};
using tasks_fixture = fixture<tasks_problem, tasks_launch_fn, tasks_form, tasks_inputs>;

}  // namespace cdl
