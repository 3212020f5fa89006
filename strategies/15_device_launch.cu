// 15 - Device launch: a kernel chooses the op and launches its kernel (dynamic parallelism).
//
// Idea.    With relocatable device code and the device runtime (-rdc=true, cudadevrt), a kernel can
//          launch kernels. A one-thread parent reads the op's id where a kernel could have written
//          it and launches that op's template kernel into cudaStreamTailLaunch: it starts when the
//          parent has finished, with no host in between.
// Cost.    The parent's launch and the device-side launch, once per run; the child is 01's kernel,
//          so the calls inside cost nothing. Relocatable code is compiled and linked apart, and the
//          whole program needs the device link. The report's map table gives it beside 01.
// Use it   when the choice is data on the GPU (a count, a flag) and the work that follows is a
//          kernel per case: it saves the copy to the host and back. 14's graphs do the same.
// Build.   nvcc -std=c++20 -O3 -arch=native -rdc=true -I. strategies/15_device_launch.cu -o 15 -lcudadevrt
// See it.  cuobjdump -sass 15: the parent calls the device runtime's cudaLaunchDeviceV2 (CALL.ABS);
//          the children are the template's kernels.
// Suite.   strategies/suite/15_device_launch.cu: the map, and the tasks' groups launched per op.
#include "strategies/lesson.cuh"

struct square {
  __host__ __device__ float operator()(float x) const { return x * x; }
};

__global__ void parent(const float* x, float* y, std::size_t n, int k, const int* op_id) {
  const unsigned grid = lesson::grid(n), block = lesson::block;
  switch (*op_id) {  // once per run, on the GPU
    case 0:
      lesson::map_kernel<<<grid, block, 0, cudaStreamTailLaunch>>>(x, y, n, k, lesson::quadratic{});
      break;
    default: lesson::map_kernel<<<grid, block, 0, cudaStreamTailLaunch>>>(x, y, n, k, square{}); break;
  }
}

int main() {
  lesson::problem p;
  int* op_id = nullptr;  // in device memory, where an earlier kernel could have written it
  CHECK(cudaMalloc(&op_id, sizeof(int)));
  CHECK(cudaMemset(op_id, 0, sizeof(int)));  // 0: quadratic
  const int status =
      lesson::compare(p, {{"device", [&](int k) { parent<<<1, 1>>>(p.dx, p.dy, p.n, k, op_id); }}});
  CHECK(cudaFree(op_id));
  return status;
}
