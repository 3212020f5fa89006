// 14 - A CUDA graph's SWITCH node: the op chosen on the GPU, between kernels, with no host.
//
// Idea.    CUDA 12.8 added conditional nodes of type switch (cudaGraphCondTypeSwitch) to graphs:
//          a node with one body graph per case, of which the one whose number a conditional
//          handle holds runs. Device code sets the handle (cudaGraphSetConditional) in a kernel
//          that runs before the node. Here the graph is: a one-thread kernel that reads the op's
//          id from device memory and sets the handle, then the switch node whose body i holds
//          the template kernel of op i (the map skeleton's, as 01 launches it). The choice is
//          made on the GPU each time the graph runs: no host round trip, no call through a
//          pointer and no switch inside the kernel, which is the template kernel.
// Cost.    A graph per problem (pointers, n and k are its kernels' parameters), built at the
//          problem's first launch; per run, the setting kernel and the node. `.plain` is the
//          graph without the choice (the op's kernel alone): the graph's own cost.
// Use it   where the choice is data on the GPU (a count, a flag a kernel computed) and the work
//          that follows is a kernel per case: the graph keeps each case's kernel specialised and
//          saves the copy to the host and back that the choice would otherwise take. Not for a
//          choice per element (the tasks workload's per_element forms), which a node cannot make.
// See it.  Nothing new in the machine code: each body's kernel is the template kernel.
//          `nsys profile --cuda-graph-trace=node` shows the setting kernel, then the one body.
// Measured: the report's map and dispatch tables (beside 01, whose kernels the bodies are). What
//          they showed on an H100: the plain graph runs in a direct launch's time; the switch adds
//          the same few microseconds to every run whatever n and k (the setting kernel, then the
//          node; how they share it was not measured), which only a long kernel hides.
// Run it.  `cdl_run --strategy 14_graph_switch/vec --op sine --n 2^24 --k 16`
#include "common/check.hpp"
#include "common/device_buffer.hpp"
#include "common/registry.hpp"
#include "common/skeletons/map.cuh"
#include "strategies/minimal.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

// ---- The mechanism alone (strategies/minimal.hpp); the general, measured form follows ----------
namespace cdl::minimal {
const form graph_switch_form{"14_graph_switch", graph_switch, nullptr, __FILE__, __LINE__};
__global__ void choose_op(cudaGraphConditionalHandle h, const int* id) { cudaGraphSetConditional(h, *id); }
__global__ void quadratic_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i] + 2.0f * x[i] + 1.0f;
}
__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}
void graph_switch(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  int* id = nullptr;  // the op's id, in device memory, where a kernel could have written it
  CDL_CUDA_CHECK(cudaMallocAsync(&id, sizeof(int), stream));
  CDL_CUDA_CHECK(cudaMemsetAsync(id, 0, sizeof(int), stream));  // 0: quadratic
  cudaGraph_t graph = nullptr;
  CDL_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle handle = 0;
  CDL_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph));
  cudaGraphNodeParams choose{};
  choose.type = cudaGraphNodeTypeKernel;
  void* choose_args[] = {&handle, &id};
  choose.kernel = {reinterpret_cast<void*>(choose_op), dim3(1), dim3(1), 0, choose_args, nullptr};
  cudaGraphNode_t chosen = nullptr;
  CDL_CUDA_CHECK(cudaGraphAddNode(&chosen, graph, nullptr, nullptr, 0, &choose));
  cudaGraphNodeParams cases{};
  cases.type = cudaGraphNodeTypeConditional;
  cases.conditional = {handle, cudaGraphCondTypeSwitch, 2, nullptr};
  cudaGraphNode_t node = nullptr;
  CDL_CUDA_CHECK(cudaGraphAddNode(&node, graph, &chosen, nullptr, 1, &cases));
  void* args[] = {&x, &y, &n};
  void* kernels[] = {reinterpret_cast<void*>(quadratic_kernel), reinterpret_cast<void*>(square_kernel)};
  for (int i = 0; i < 2; ++i) {  // body i: op i's own kernel
    cudaGraphNodeParams body{};
    body.type = cudaGraphNodeTypeKernel;
    body.kernel = {kernels[i], dim3(unsigned((n + 255) / 256)), dim3(256), 0, args, nullptr};
    cudaGraphNode_t b = nullptr;
    CDL_CUDA_CHECK(cudaGraphAddNode(&b, cases.conditional.phGraph_out[i], nullptr, nullptr, 0, &body));
  }
  cudaGraphExec_t exec = nullptr;
  CDL_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CDL_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CDL_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the graph and the id go
  CDL_CUDA_CHECK(cudaGraphExecDestroy(exec));
  CDL_CUDA_CHECK(cudaGraphDestroy(graph));
  CDL_CUDA_CHECK(cudaFree(id));
}
}  // namespace cdl::minimal
// ------------------------------------------------------------------------------------------------

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
  device_buffer<int> id{1};  // the op's id, read by choose_op each run
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

template <bool Switch>
void launch_map(const map_launch& a) {
  if (a.form == map_form::staged) throw error("14_graph_switch has no staged form");
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  using key = std::tuple<const void*, void*, std::size_t, int, dtype, map_form, map_op>;
  static std::map<key, std::unique_ptr<graph>> graphs;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  // A new pair of buffers is a new fixture: the graphs of the last one will not run again.
  if (!graphs.empty() &&
      (std::get<0>(graphs.begin()->first) != a.x || std::get<1>(graphs.begin()->first) != a.y))
    graphs.clear();
  std::unique_ptr<graph>& found = graphs[key{a.x, a.y, a.n, a.k, a.type, g.form, a.op}];
  if (!found) found = build<Switch>(a, g);
  CDL_CUDA_CHECK(cudaGraphLaunch(found->exec, a.stream));
}

}  // namespace

void register_14_graph_switch(registry& r) {
  r.add_map("14_graph_switch", "", launch_map<true>);
  r.add_map("14_graph_switch", "plain", launch_map<false>);
}

}  // namespace cdl
