#include "tasks_workload.hpp"

#include "fixture.hpp"
#include "inputs.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>

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

// Scratch for the grouping, grown on demand and kept: allocating inside a timed launch would
// time cudaMalloc, not the grouping.
struct grouping_scratch {
  device_buffer<unsigned> keys, keys_sorted, index, index_sorted, unique, counts, runs;
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
    std::size_t sort_bytes = 0, rle_bytes = 0;
    CDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.data(), keys_sorted.data(), index.data(),
                                                   index_sorted.data(), n, 0, 5));
    CDL_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_sorted.data(), unique.data(),
                                                      counts.data(), runs.data(), n));
    temp = device_buffer<std::byte>(std::max(sort_bytes, rle_bytes));
    capacity = n;
  }
};

}  // namespace

task_groups group_tasks(const tasks_launch& a) {
  static grouping_scratch s;
  static std::mutex m;
  const std::lock_guard lock(m);
  s.reserve(a.n);
  task_groups g{s.index_sorted.data(), {}, {0}};
  if (a.n == 0) return g;
  keys_and_indices<<<unsigned((a.n + 255) / 256), 256, 0, a.stream>>>(a.tasks, a.n, s.keys.data(), s.index.data());
  CDL_CHECK_LAUNCH();
  std::size_t bytes = s.temp.bytes();
  // Op ids are below 32: sorting 5 bits is enough.
  CDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(s.temp.data(), bytes, s.keys.data(), s.keys_sorted.data(),
                                                 s.index.data(), s.index_sorted.data(), a.n, 0, 5, a.stream));
  bytes = s.temp.bytes();
  CDL_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(s.temp.data(), bytes, s.keys_sorted.data(), s.unique.data(),
                                                    s.counts.data(), s.runs.data(), a.n, a.stream));
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

tasks_host make_tasks_host(const tasks_problem& p, std::uint64_t seed) {
  if (p.distinct < 1 || p.distinct > task_op_count)
    throw error("tasks: distinct ops must be 1.." + std::to_string(task_op_count) + ", got " + std::to_string(p.distinct));
  const std::vector<float> p1 = uniform_inputs<float>(p.n, seed + 1, 0.5, 1.0), p2 = uniform_inputs<float>(p.n, seed + 2, 0.0, 0.5);
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
      const double v = visit<task_ops>(t.op, [&](auto op) { return op(double(h.x[i]), double(t.p1), double(t.p2)); });
      h.reference[i] = {v, std::fabs(v)};
    }
  });
  return h;
}

double tasks_tolerance() { return tolerance_for(epsilon_of<float>(), 2, 8); }

tasks_fixture::tasks_fixture(const tasks_problem& p, std::uint64_t seed)
    : problem_(p), x_(p.n), y_(p.n), tasks_(p.n) {
  tasks_host h = make_tasks_host(p, seed);
  x_.copy_from(h.x);
  tasks_.copy_from(h.tasks);
  reference_ = std::move(h.reference);
}

void tasks_fixture::launch(tasks_launch_fn fn, tasks_form, cudaStream_t stream) const {
  fn(tasks_launch{x_.data(), tasks_.data(), y_.data(), problem_.n, stream});
}

validation_result tasks_fixture::run_and_validate(tasks_launch_fn fn, tasks_form form, cudaStream_t stream) const {
  return poison_run_validate(y_.data(), y_.bytes(), dtype::f32, problem_.n, reference_, tasks_tolerance(), stream,
                             [&] { launch(fn, form, stream); });
}

}  // namespace cdl
