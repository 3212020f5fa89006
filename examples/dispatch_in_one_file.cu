// The whole question in one file: four ways to hand y = x*x + 2x + 1 to a kernel, each checked
// against a CPU reference and timed with CUDA events beside a device-to-device copy of the same
// bytes. The suite (strategies/, common/) does this for every op, workload and way, with the
// controls a measurement needs (an L2 flush, repetitions, a noise threshold); this file is the
// idea without them, to read first. Build and run it alone:
//
//   nvcc -std=c++20 -O3 -arch=native examples/dispatch_in_one_file.cu -o dispatch && ./dispatch
//
// (the project builds it too: build/release/examples/dispatch_in_one_file). The four ways:
//   inline   the op written into the kernel: one kernel per op;
//   functor  the op a type, the kernel a template over it: inlined, one instantiation per op;
//   switch   an op id passed at run time and a switch in the kernel: every op compiled in;
//   pointer  a __device__ function pointer read from a symbol: a call through a register.
// The working set (two arrays of 2^26 floats, 512 MiB) is larger than any GPU's L2, so each
// launch reads from memory without a flush.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                      \
  do {                                                                                                   \
    const cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

struct quadratic {  // the op, once, for host and device
  __host__ __device__ float operator()(float x) const { return x * x + 2.0f * x + 1.0f; }
};
__device__ float quadratic_fn(float x) { return quadratic{}(x); }
__device__ float square_fn(float x) { return x * x; }
using op_pointer = float (*)(float);
__device__ op_pointer quadratic_ptr = quadratic_fn;  // read by the host with cudaMemcpyFromSymbol

__global__ void inline_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i] + 2.0f * x[i] + 1.0f;
}

template <class Op>
__global__ void functor_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = op(x[i]);
}

__global__ void switch_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int op_id) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (op_id) {
    case 0: y[i] = quadratic_fn(x[i]); break;
    case 1: y[i] = square_fn(x[i]); break;
  }
}

__global__ void pointer_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n,
                               op_pointer f) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f(x[i]);
}

// The four ways, as a host program launches each.
const char* const way_names[] = {"inline", "functor", "switch", "pointer"};
void launch(int way, const float* x, float* y, std::size_t n, op_pointer f) {
  const unsigned block = 256, grid = unsigned((n + block - 1) / block);
  switch (way) {
    case 0: inline_kernel<<<grid, block>>>(x, y, n); break;
    case 1: functor_kernel<<<grid, block>>>(x, y, n, quadratic{}); break;
    case 2: switch_kernel<<<grid, block>>>(x, y, n, 0); break;  // op id 0: quadratic, chosen at run time
    case 3: pointer_kernel<<<grid, block>>>(x, y, n, f); break;
  }
}

// Every element within a few float roundings of the reference computed in double.
bool validate(const std::vector<float>& y, const std::vector<float>& x, const char* name) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double ref = double(x[i]) * x[i] + 2.0 * x[i] + 1.0;
    if (!(std::fabs(y[i] - ref) <= 4 * 1.2e-7 * std::fabs(ref))) {  // also false for NaN
      std::printf("%-8s WRONG RESULT at %zu: %.9g, expected %.9g\n", name, i, y[i], ref);
      return false;
    }
  }
  return true;
}

// Median of `reps` event-timed launches after a warm-up, in milliseconds.
template <class Launch>
float time_ms(Launch launch, int reps = 21) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  launch();  // warm-up: the first launch also loads the module
  std::vector<float> ms(reps);
  for (float& t : ms) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&t, start, stop));
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device: nothing to run\n");
    return 2;
  }
  const std::size_t n = std::size_t(1) << 26, bytes = n * sizeof(float);
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.25f + 1.5f * float(i % 1000003) / 1000003.0f;  // positive
  float *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, bytes));
  CHECK(cudaMalloc(&dy, bytes));
  CHECK(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice));
  op_pointer f = nullptr;
  CHECK(cudaMemcpyFromSymbol(&f, quadratic_ptr, sizeof f));

  const float copy_ms = time_ms([&] { CHECK(cudaMemcpyAsync(dy, dx, bytes, cudaMemcpyDeviceToDevice)); });
  std::printf("%-8s %9s %8s %8s   (2^26 floats, an element per thread)\n",  //
              "way", "median", "GB/s", "of copy");
  std::printf("%-8s %6.3f ms %8.0f %8.2f\n", "copy", copy_ms, 2.0 * bytes / copy_ms / 1e6, 1.0);
  bool all_valid = true;
  for (int way = 0; way < 4; ++way) {
    CHECK(cudaMemset(dy, 0xff, bytes));  // NaN everywhere: an element the kernel misses fails validation
    launch(way, dx, dy, n, f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y.data(), dy, bytes, cudaMemcpyDeviceToHost));
    if (!validate(y, x, way_names[way])) {  // a wrong result is never timed
      all_valid = false;
      continue;
    }
    const float ms = time_ms([&] { launch(way, dx, dy, n, f); });
    std::printf("%-8s %6.3f ms %8.0f %8.2f\n", way_names[way], ms, 2.0 * bytes / ms / 1e6, copy_ms / ms);
  }
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  return all_valid ? 0 : 3;
}
