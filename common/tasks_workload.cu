// tasks_workload.hpp's problem, task layouts, float64 reference and fixture, and the grouping
// by op (CUB radix sort and run-length encoding) that the template and lambda strategies use.
#include "tasks_workload.hpp"

#include "device_info.hpp"
#include "inputs.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <thrust/execution_policy.h>
#include <thrust/gather.h>
#include <thrust/scatter.h>

#include <cmath>
#include <mutex>

namespace cdl {

std::string_view to_string(task_layout l) {
  switch (l) {
    case task_layout::uniform: return "uniform";
    case task_layout::sorted: return "sorted";
    case task_layout::warp: return "warp";
    case task_layout::random: return "random";
  }
  return "?";
}

std::string tasks_problem::describe() const {
  return "tasks layout=" + std::string(to_string(layout)) + " distinct=" + std::to_string(distinct) +
         " n=" + std::to_string(n);
}

namespace {

__global__ void keys_and_indices(const task* t, std::size_t n, unsigned* keys, unsigned* index) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    keys[i] = unsigned(t[i].op);
    index[i] = unsigned(i);
  }
}

// begin[id] = the first position of op id in the sorted keys (a lower bound), for id = 0..32.
__global__ void group_bounds(const unsigned* keys_sorted, std::size_t n, unsigned* begin) {
  const unsigned id = threadIdx.x;
  if (id > unsigned(task_op_count)) return;
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (keys_sorted[mid] < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  begin[id] = unsigned(lo);
}

// Scratch for the grouping, grown on demand and kept: allocating inside a timed launch would
// time cudaMalloc, not the grouping.
struct grouping_scratch {
  device_buffer<unsigned> keys, keys_sorted, index, index_sorted, unique, counts, runs, begin;
  device_buffer<std::byte> temp;
  std::size_t capacity = 0;

  void reserve(std::size_t n) {
    if (n <= capacity) return;
    keys = device_buffer<unsigned>(n);
    keys_sorted = device_buffer<unsigned>(n);
    index = device_buffer<unsigned>(n);
    index_sorted = device_buffer<unsigned>(n);
    unique = device_buffer<unsigned>(task_op_count);
    counts = device_buffer<unsigned>(task_op_count);
    // The run-length encoding writes only the first `runs` entries, but group_tasks copies all
    // task_op_count of them back at once (one round trip, not two): zeroed here, the rest is
    // never undefined memory (compute-sanitizer's initcheck would rightly say so).
    CDL_CUDA_CHECK(cudaMemset(unique.data(), 0, unique.bytes()));
    CDL_CUDA_CHECK(cudaMemset(counts.data(), 0, counts.bytes()));
    runs = device_buffer<unsigned>(1);
    begin = device_buffer<unsigned>(task_op_count + 1);
    std::size_t sort_bytes = 0, rle_bytes = 0;
    CDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.data(), keys_sorted.data(),
                                                   index.data(), index_sorted.data(), n, 0, 5));
    CDL_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_sorted.data(), unique.data(),
                                                      counts.data(), runs.data(), n));
    temp = device_buffer<std::byte>(std::max(sort_bytes, rle_bytes));
    capacity = n;
  }
};

grouping_scratch& scratch() {
  static grouping_scratch s;
  return s;
}
std::mutex scratch_mutex;

// The sort both groupings start with: element indices ordered by op id, in s.index_sorted.
void sort_by_op(grouping_scratch& s, const tasks_launch& a) {
  keys_and_indices<<<unsigned((a.n + 255) / 256), 256, 0, a.stream>>>(a.tasks, a.n, s.keys.data(),
                                                                      s.index.data());
  CDL_CHECK_LAUNCH();
  std::size_t bytes = s.temp.bytes();
  // Op ids are below 32: sorting 5 bits is enough.
  CDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(s.temp.data(), bytes, s.keys.data(), s.keys_sorted.data(),
                                                 s.index.data(), s.index_sorted.data(), a.n, 0, 5, a.stream));
}

}  // namespace

device_task_groups group_tasks_on_device(const tasks_launch& a) {
  grouping_scratch& s = scratch();
  const std::lock_guard lock(scratch_mutex);
  s.reserve(std::max<std::size_t>(a.n, 1));
  if (a.n > 0) sort_by_op(s, a);
  group_bounds<<<1, 64, 0, a.stream>>>(s.keys_sorted.data(), a.n, s.begin.data());
  CDL_CHECK_LAUNCH();
  // 2048 threads per SM on the GPUs measured here: a grid that fills the GPU once, whatever the
  // size of the range it will find.
  return {s.index_sorted.data(), s.begin.data(),
          unsigned(query_device().sm_count) * (2048 / skeleton::tasks_block)};
}

task_groups group_tasks(const tasks_launch& a) {
  grouping_scratch& s = scratch();
  const std::lock_guard lock(scratch_mutex);
  s.reserve(a.n);
  task_groups g{s.index_sorted.data(), {}, {0}};
  if (a.n == 0) return g;
  sort_by_op(s, a);
  std::size_t bytes = s.temp.bytes();
  CDL_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(s.temp.data(), bytes, s.keys_sorted.data(),
                                                    s.unique.data(), s.counts.data(), s.runs.data(), a.n,
                                                    a.stream));
  unsigned runs = 0, unique[task_op_count], counts[task_op_count];
  CDL_CUDA_CHECK(cudaMemcpyAsync(&runs, s.runs.data(), sizeof runs, cudaMemcpyDeviceToHost, a.stream));
  CDL_CUDA_CHECK(cudaMemcpyAsync(unique, s.unique.data(), sizeof unique, cudaMemcpyDeviceToHost, a.stream));
  CDL_CUDA_CHECK(cudaMemcpyAsync(counts, s.counts.data(), sizeof counts, cudaMemcpyDeviceToHost, a.stream));
  CDL_CUDA_CHECK(cudaStreamSynchronize(a.stream));
  for (unsigned r = 0; r < runs; ++r) {
    g.ops.push_back(int(unique[r]));
    g.offsets.push_back(g.offsets.back() + counts[r]);
  }
  return g;
}

void run_task_groups(const tasks_launch& a, const task_groups& g) {
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    visit<task_ops>(g.ops[i], [&](auto op) {
      skeleton::launch_task_group(a, g.index + g.offsets[i], g.offsets[i + 1] - g.offsets[i], op);
    });
}

kept_task_groups::kept_task_groups(const tasks_launch& a)
    : index(std::max<std::size_t>(a.n, 1)), groups(group_tasks(a)) {
  if (a.n)
    CDL_CUDA_CHECK(cudaMemcpyAsync(index.data(), groups.index, a.n * sizeof(unsigned),
                                   cudaMemcpyDeviceToDevice, a.stream));
  CDL_CUDA_CHECK(cudaStreamSynchronize(a.stream));
  groups.index = index.data();
}

tasks_in_op_order::tasks_in_op_order(const tasks_launch& a)
    : kept_(a),
      x_(std::max<std::size_t>(a.n, 1)),
      y_(std::max<std::size_t>(a.n, 1)),
      tasks_(std::max<std::size_t>(a.n, 1)) {
  const auto policy = thrust::cuda::par_nosync.on(a.stream);
  const unsigned* index = kept_.groups.index;
  thrust::gather(policy, index, index + a.n, a.x, x_.data());
  thrust::gather(policy, index, index + a.n, a.tasks, tasks_.data());
  CDL_CUDA_CHECK(cudaStreamSynchronize(a.stream));
}

void tasks_in_op_order::run_kernels(cudaStream_t stream) const {
  const task_groups& g = kept_.groups;
  const tasks_launch ordered{x_.data(), tasks_.data(), y_.data(), g.offsets.back(), stream};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    visit<task_ops>(g.ops[i], [&](auto op) {
      skeleton::launch_task_ordered(ordered, g.offsets[i], g.offsets[i + 1] - g.offsets[i], op);
    });
}

void tasks_in_op_order::scatter(const tasks_launch& a) const {
  const std::size_t n = kept_.groups.offsets.back();
  thrust::scatter(thrust::cuda::par_nosync.on(a.stream), y_.data(), y_.data() + n, kept_.groups.index, a.y);
  CDL_CHECK_LAUNCH();
}

tasks_host make_tasks_host(const tasks_problem& p, std::uint64_t seed) {
  if (p.distinct < 1 || p.distinct > task_op_count)
    throw error("tasks: distinct ops must be 1.." + std::to_string(task_op_count) + ", got " +
                std::to_string(p.distinct));
  const std::vector<float> p1 = uniform_inputs<float>(p.n, seed + 1, 0.5, 1.0),
                           p2 = uniform_inputs<float>(p.n, seed + 2, 0.0, 0.5);
  tasks_host h{uniform_inputs<float>(p.n, seed), std::vector<task>(p.n), std::vector<reference_value>(p.n)};
  const std::size_t d = std::size_t(p.distinct);
  for (std::size_t i = 0; i < p.n; ++i) {
    std::size_t op = 0;
    switch (p.layout) {
      case task_layout::uniform: op = 0; break;
      case task_layout::sorted: op = i * d / p.n; break;
      case task_layout::warp: op = (i / 32) % d; break;
      case task_layout::random: op = std::min(d - 1, std::size_t(uniform01(seed + 3, i) * double(d))); break;
    }
    h.tasks[i] = {int(op), p1[i], p2[i]};
  }
  parallel_for(p.n, worker_count(p.n), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const task& t = h.tasks[i];
      const double v =
          visit<task_ops>(t.op, [&](auto op) { return op(double(h.x[i]), double(t.p1), double(t.p2)); });
      h.reference[i] = {v, std::fabs(v)};
    }
  });
  return h;
}

double tasks_tolerance() { return tolerance_for(epsilon_of<float>(), 2, 8); }

template <>
tasks_fixture::fixture(const tasks_problem& p, std::uint64_t seed)
    : workload_fixture(p, dtype::f32, p.n, tasks_tolerance()),
      in_{.x = device_buffer<float>(p.n), .tasks = device_buffer<task>(p.n)} {
  tasks_host h = make_tasks_host(p, seed);
  in_.x.copy_from(h.x);
  in_.tasks.copy_from(h.tasks);
  reference_ = std::move(h.reference);
}

template <>
void tasks_fixture::launch(tasks_launch_fn fn, tasks_form, cudaStream_t stream) const {
  fn(tasks_launch{in_.x.data(), in_.tasks.data(), output<float>(), problem_.n, stream});
}

}  // namespace cdl
