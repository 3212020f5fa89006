// 14 - A CUDA graph's conditional nodes: the op chosen on the GPU, between kernels, with no host.
//
// Idea.    CUDA 12.8 added conditional nodes to graphs: a SWITCH node (cudaGraphCondTypeSwitch)
//          runs the one of its body graphs whose number a conditional handle holds, an IF node
//          (cudaGraphCondTypeIf) its body if the handle is not 0. A kernel sets the handle
//          (cudaGraphSetConditional) before the node runs. Map: a one-thread kernel reads the op's
//          id from device memory and sets the handle of a switch node whose body i holds op i's
//          template kernel (01's). Tasks (`grouped_device`: the elements sorted by op on the
//          device): an IF node per op id, each holding that op's range kernel (01's), and a kernel
//          that sets each handle to "this op's group is not empty": the ops that occur run, side
//          by side (no node depends on another), and the host never learns the group sizes. The
//          kernels are the template kernels: no call through a pointer, no switch inside.
// Cost.    A graph per problem (pointers, n and k are its kernels' parameters), built at the
//          problem's first launch; per run, the setting kernel and the nodes. `.plain` is the
//          map's graph without the choice (the op's kernel alone): the graph's own cost.
// Use it   where the choice is data on the GPU (a count, a flag, the sizes of groups) and the
//          work that follows is a kernel per case: it saves the copy to the host and back that the
//          choice would otherwise take. Not for a choice per element, which a node cannot make;
//          not for zip, points, image or matmul, whose choice is the map's and costs the same.
// See it.  Each body's kernel is the template kernel; `nsys --cuda-graph-trace=node` shows the nodes.
//          Nsight Compute skipped the kernels in conditional bodies: profile 01's, the same kernel.
// Measured: the report's map, dispatch and tasks tables (beside 01), where the plain graph and the
//          switch are each set beside a direct launch.
// Run it.  `cdl_run --strategy 14_graph_switch/vec --op sine --n 2^24 --k 16`
#include "common/check.hpp"
#include "common/device_buffer.hpp"
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"
#include "common/skeletons/tasks.cuh"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace cdl {
namespace {

__global__ void choose_op(cudaGraphConditionalHandle h, const int* id) { cudaGraphSetConditional(h, *id); }

// Each op's template kernel, scalar and vec, by op id: the switch node's bodies.
template <class T, class... Ops>
void map_kernels(op_list<Ops...>, map_form form, std::vector<void*>& out) {
  (out.push_back(form == map_form::vec ? reinterpret_cast<void*>(skeleton::map_vec_kernel<T, Ops>)
                                       : reinterpret_cast<void*>(skeleton::map_scalar_kernel<T, Ops>)),
   ...);
}

// A graph per problem, built and instantiated at its first launch.
struct graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  device_buffer<int> id{1};  // the map's op id, read by choose_op each run
  ~graph() {
    if (exec) (void)cudaGraphExecDestroy(exec);  // at exit the runtime may be gone already
    if (graph) (void)cudaGraphDestroy(graph);
  }
};

cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t* after, std::size_t count, void* kernel,
                           unsigned grid, unsigned block, void** args) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeKernel;
  p.kernel = {kernel, dim3(grid), dim3(block), 0, args, nullptr};
  cudaGraphNode_t node = nullptr;
  CDL_CUDA_CHECK(cudaGraphAddNode(&node, g, after, nullptr, count, &p));
  return node;
}

template <bool Switch>
std::unique_ptr<graph> build(const map_launch& a, const skeleton::elementwise_geometry& g) {
  auto out = std::make_unique<graph>();
  const int op = static_cast<int>(a.op);
  out->id.copy_from(std::vector<int>{op});
  std::vector<void*> kernels;
  visit_dtype(a.type, [&](auto t) { map_kernels<decltype(t)>(map_ops{}, g.form, kernels); });
  // The kernel nodes copy their arguments when they are added: these may go out of scope after.
  const void* x = a.x;
  void* y = a.y;
  std::size_t n = a.n;
  int k = a.k;
  char no_state = 0;  // the op object each template kernel takes by value (empty)
  void* args[] = {&x, &y, &n, &k, &no_state};
  CDL_CUDA_CHECK(cudaGraphCreate(&out->graph, 0));
  if constexpr (Switch) {
    cudaGraphConditionalHandle handle = 0;
    CDL_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, out->graph));
    const int* id = out->id.data();
    void* choose_args[] = {&handle, &id};
    const cudaGraphNode_t chosen =
        add_kernel(out->graph, nullptr, 0, reinterpret_cast<void*>(choose_op), 1, 1, choose_args);
    cudaGraphNodeParams cases{};
    cases.type = cudaGraphNodeTypeConditional;
    cases.conditional = {handle, cudaGraphCondTypeSwitch, unsigned(kernels.size()), nullptr};
    cudaGraphNode_t node = nullptr;
    CDL_CUDA_CHECK(cudaGraphAddNode(&node, out->graph, &chosen, nullptr, 1, &cases));
    for (std::size_t i = 0; i < kernels.size(); ++i)
      add_kernel(cases.conditional.phGraph_out[i], nullptr, 0, kernels[i], g.grid,
                 skeleton::elementwise_block, args);
  } else {
    add_kernel(out->graph, nullptr, 0, kernels[std::size_t(op)], g.grid, skeleton::elementwise_block, args);
  }
  CDL_CUDA_CHECK(cudaGraphInstantiate(&out->exec, out->graph, 0));
  return out;
}

// The graphs of the problems of one pair of buffers, each built at its first launch; a new pair is
// a new fixture, whose graphs replace the last one's (they will not run again).
template <class Key, class Build>
cudaGraphExec_t graph_for(const Key& key, const void* in, const void* out, Build build) {
  static std::map<Key, std::unique_ptr<graph>> graphs;
  static std::pair<const void*, const void*> buffers;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (buffers != std::pair(in, out)) graphs.clear();
  buffers = {in, out};
  std::unique_ptr<graph>& found = graphs[key];
  if (!found) found = build();
  return found->exec;
}

template <bool Switch>
void launch_map(const map_launch& a) {
  if (a.form == map_form::staged) throw error("14_graph_switch has no staged form");
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  using key = std::tuple<std::size_t, int, dtype, map_form, map_op>;
  const cudaGraphExec_t exec =
      graph_for(key{a.n, a.k, a.type, g.form, a.op}, a.x, a.y, [&] { return build<Switch>(a, g); });
  CDL_CUDA_CHECK(cudaGraphLaunch(exec, a.stream));
}

// Each op id's handle, passed by value to the kernel that sets them all.
struct group_handles {
  cudaGraphConditionalHandle of[task_op_count];
};
__global__ void choose_groups(group_handles h, const unsigned* begin) {
  const int id = int(threadIdx.x);
  if (id < task_op_count) cudaGraphSetConditional(h.of[id], begin[id + 1] > begin[id] ? 1 : 0);
}

template <class... Ops>
std::vector<void*> range_kernels(op_list<Ops...>) {
  return {reinterpret_cast<void*>(skeleton::tasks_range_kernel<Ops>)...};
}

std::unique_ptr<graph> build_tasks(const tasks_launch& a, const device_task_groups& g) {
  auto out = std::make_unique<graph>();
  CDL_CUDA_CHECK(cudaGraphCreate(&out->graph, 0));
  group_handles h{};
  for (cudaGraphConditionalHandle& handle : h.of)
    CDL_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, out->graph));
  const unsigned* begin = g.begin;
  void* choose_args[] = {&h, &begin};
  const cudaGraphNode_t chosen =
      add_kernel(out->graph, nullptr, 0, reinterpret_cast<void*>(choose_groups), 1, 32, choose_args);
  const std::vector<void*> kernels = range_kernels(task_ops{});
  const float* x = a.x;
  const task* t = a.tasks;
  float* y = a.y;
  const unsigned* index = g.index;
  char no_state = 0;  // the op object each range kernel takes by value (empty)
  for (int id = 0; id < task_op_count; ++id) {
    cudaGraphNodeParams when{};
    when.type = cudaGraphNodeTypeConditional;
    when.conditional = {h.of[id], cudaGraphCondTypeIf, 1, nullptr};
    cudaGraphNode_t node = nullptr;
    CDL_CUDA_CHECK(cudaGraphAddNode(&node, out->graph, &chosen, nullptr, 1, &when));
    void* args[] = {&x, &t, &y, &index, &begin, &id, &no_state};
    add_kernel(when.conditional.phGraph_out[0], nullptr, 0, kernels[std::size_t(id)], g.blocks,
               skeleton::tasks_block, args);
  }
  CDL_CUDA_CHECK(cudaGraphInstantiate(&out->exec, out->graph, 0));
  return out;
}

void launch_tasks(const tasks_launch& a) {
  const device_task_groups g = group_tasks_on_device(a);
  if (a.n == 0) return;
  using key = std::tuple<const task*, std::size_t, const unsigned*, const unsigned*, unsigned>;
  const cudaGraphExec_t exec =
      graph_for(key{a.tasks, a.n, g.index, g.begin, g.blocks}, a.x, a.y, [&] { return build_tasks(a, g); });
  CDL_CUDA_CHECK(cudaGraphLaunch(exec, a.stream));
}

}  // namespace

void register_14_graph_switch(registry& r) {
  r.add_map("14_graph_switch", "", launch_map<true>);
  r.add_map("14_graph_switch", "plain", launch_map<false>);
  r.add_tasks("14_graph_switch", "", tasks_form::grouped_device, launch_tasks);
}

}  // namespace cdl
