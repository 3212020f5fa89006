// 14 - A CUDA graph's conditional node: the op chosen on the GPU, between kernels, with no host.
//
// Idea.    Since CUDA 12.8 a graph can hold a SWITCH node (cudaGraphCondTypeSwitch): it runs the one
//          of its body graphs whose number a conditional handle holds. A one-thread kernel reads the
//          op's id where a kernel could have written it and sets the handle
//          (cudaGraphSetConditional); body i holds op i's template kernel.
// Cost.    A graph to build and instantiate (its kernels' arguments are in it: here one per k);
//          per run, the setting kernel and the node. The calls inside are the template's, free.
//          The report's map and tasks tables give it beside 01.
// Use it   when the choice is data on the GPU and the work that follows is a kernel per case: it
//          saves the copy to the host and back. Not for a choice per element, which no node makes.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/14_graph_switch.cu -o 14_graph_switch
// See it.  The bodies' kernels are the template's (cuobjdump -sass); nsys --cuda-graph-trace=node
//          shows the setting kernel, then the chosen body's kernel.
// Suite.   strategies/suite/14_graph_switch.cu: the map, and the tasks' groups run by IF nodes.
#include <map>

#include "strategies/lesson.cuh"

struct square {
  __host__ __device__ float operator()(float x) const { return x * x; }
};

__global__ void choose_op(cudaGraphConditionalHandle h, const int* id) { cudaGraphSetConditional(h, *id); }

cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t* after, void* kernel, unsigned grid,
                           unsigned block, void** args) {
  cudaGraphNodeParams node{};
  node.type = cudaGraphNodeTypeKernel;
  node.kernel = {kernel, dim3(grid), dim3(block), 0, args, nullptr};
  cudaGraphNode_t added = nullptr;
  CHECK(cudaGraphAddNode(&added, g, after, nullptr, after ? 1 : 0, &node));
  return added;
}

// The graph for one problem: choose_op, then a switch node whose body i runs op i's kernel. The
// arguments are copied into the graph when each node is added.
cudaGraphExec_t make_graph(const lesson::problem& p, int k, const int* id) {
  cudaGraph_t graph = nullptr;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle handle = 0;
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph));
  void* choose_args[] = {&handle, &id};
  const cudaGraphNode_t chosen =
      add_kernel(graph, nullptr, reinterpret_cast<void*>(choose_op), 1, 1, choose_args);
  cudaGraphNodeParams cases{};
  cases.type = cudaGraphNodeTypeConditional;
  cases.conditional = {handle, cudaGraphCondTypeSwitch, 2, nullptr};
  cudaGraphNode_t node = nullptr;
  CHECK(cudaGraphAddNode(&node, graph, &chosen, nullptr, 1, &cases));
  const float* x = p.dx;
  float* y = p.dy;
  std::size_t n = p.n;
  lesson::quadratic quadratic;
  square sq;
  void* quadratic_args[] = {&x, &y, &n, &k, &quadratic};
  void* square_args[] = {&x, &y, &n, &k, &sq};
  add_kernel(cases.conditional.phGraph_out[0], nullptr,
             reinterpret_cast<void*>(lesson::map_kernel<lesson::quadratic>), lesson::grid(n), lesson::block,
             quadratic_args);
  add_kernel(cases.conditional.phGraph_out[1], nullptr, reinterpret_cast<void*>(lesson::map_kernel<square>),
             lesson::grid(n), lesson::block, square_args);
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  return exec;
}

int main() {
  lesson::problem p;
  int* id = nullptr;  // in device memory, where an earlier kernel could have written it
  CHECK(cudaMalloc(&id, sizeof(int)));
  CHECK(cudaMemset(id, 0, sizeof(int)));  // 0: quadratic
  std::map<int, cudaGraphExec_t> graphs;  // one per k, made before the first run is timed
  const int status = lesson::compare(p, {{"graph", [&](int k) {
                                            if (!graphs.count(k)) graphs[k] = make_graph(p, k, id);
                                            CHECK(cudaGraphLaunch(graphs[k], 0));
                                          }}});
  for (auto& [k, exec] : graphs) CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaFree(id));
  return status;
}
