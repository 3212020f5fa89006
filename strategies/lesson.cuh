// What every lesson (strategies/NN_<name>.cu) needs around its mechanism, in one small header so
// that each lesson is its mechanism and a short main: the op, the map kernel every way shares, the
// inputs, a float64 reference on the CPU, validation, and timing with CUDA events beside a
// device-to-device copy and the template functor. The suite (strategies/suite/, common/) measures
// the same kernels with the controls a finding needs (an L2 flush, repetitions, a noise threshold);
// a lesson is the idea without them (tests/docs/test_run_lines.py builds and runs every lesson).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    const cudaError_t check_error = (call);                                                             \
    if (check_error != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(check_error), __FILE__, \
                   __LINE__);                                                                           \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

namespace lesson {

constexpr float delta = 1.0f / 4096;  // a power of two: x + j*delta rounds alike on host and device

// The op every lesson passes, for host and device: float on the GPU, double for the reference.
struct quadratic {
  template <class T>
  __host__ __device__ T operator()(T x) const {
    return x * x + T(2) * x + T(1);
  }
};

// The suite's map skeleton in its scalar form (common/skeletons/map.cuh): y[i] = sum over j < k of
// f(x[i] + j*delta), an element per thread. Every way runs this loop; only the invoker F differs,
// so a difference in time is the call. The arguments differ so that no call merges with another,
// and they are summed because op(op(x)) overflows within a few steps.
template <class F>
__global__ void map_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k, F f) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) acc += f(x[i] + float(j) * delta);
  y[i] = acc;
}
constexpr unsigned block = 256;
__host__ __device__ inline unsigned grid(std::size_t n) { return unsigned((n + block - 1) / block); }

// The problem: 2^24 floats in and out, 128 MiB, more than any GPU's L2, so each launch reads memory.
struct problem {
  std::size_t n = std::size_t(1) << 24;
  std::vector<float> x;
  float *dx = nullptr, *dy = nullptr;
  problem() : x(n) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      std::fprintf(stderr, "no CUDA device: nothing to run\n");
      std::exit(77);  // "skipped" to ctest (the one-file example's test), as the GPU tests' programs
    }
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.25f + 1.5f * float(i % 1000003) / 1000003.0f;
    CHECK(cudaMalloc(&dx, bytes()));
    CHECK(cudaMalloc(&dy, bytes()));
    CHECK(cudaMemcpy(dx, x.data(), bytes(), cudaMemcpyHostToDevice));
  }
  ~problem() {
    cudaFree(dx);
    cudaFree(dy);
  }
  std::size_t bytes() const { return n * sizeof(float); }
};

// The float64 reference of every element, on all the host's cores (k = 256 is 2^32 calls).
inline std::vector<double> reference(const std::vector<float>& x, int k) {
  std::vector<double> ref(x.size());
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < x.size(); i += workers) {
        double acc = 0;
        for (int j = 0; j < k; ++j) acc += quadratic{}(double(x[i] + float(j) * delta));  // as on the GPU
        ref[i] = acc;
      }
    });
  for (std::thread& t : pool) t.join();
  return ref;
}

// Median of 21 event-timed launches after a warm-up (which also loads the module), in ms.
template <class Launch>
float time_ms(Launch launch) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  launch();
  std::vector<float> ms(21);
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
  std::nth_element(ms.begin(), ms.begin() + 10, ms.end());
  return ms[10];
}

// A way to run the map: its name, and a function that launches it at a given k.
using way = std::pair<const char*, std::function<void(int k)>>;

// Runs each way and the template functor at each k: each output poisoned, validated against the
// reference (every element within k + 4 float roundings; a wrong result is never timed), then
// timed. Prints time, GB/s, the fraction of copy and × the template; returns the exit status: 0
// when every result was right, 3 otherwise.
inline int compare(const problem& p, std::vector<way> ways, std::vector<int> ks = {1, 256}) {
  ways.insert(ways.begin(), {"template", [&](int k) {
                               map_kernel<<<grid(p.n), block>>>(p.dx, p.dy, p.n, k, quadratic{});
                             }});
  const float copy_ms =
      time_ms([&] { CHECK(cudaMemcpyAsync(p.dy, p.dx, p.bytes(), cudaMemcpyDeviceToDevice)); });
  std::printf("%-10s %5s %11s %8s %8s %12s   (2^24 floats, an element per thread)\n", "way", "k", "median",
              "GB/s", "of copy", "× template");
  std::printf("%-10s %5s %8.3f ms %8.0f %8.2f\n", "copy", "", copy_ms, 2.0 * p.bytes() / copy_ms / 1e6, 1.0);
  int status = 0;
  std::vector<float> y(p.n);
  for (int k : ks) {
    const std::vector<double> ref = reference(p.x, k);
    float template_ms = 0;
    for (const auto& [name, launch] : ways) {
      CHECK(cudaMemset(p.dy, 0xff, p.bytes()));  // NaN everywhere: a missed element fails validation
      launch(k);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(y.data(), p.dy, p.bytes(), cudaMemcpyDeviceToHost));
      std::size_t bad = 0;
      while (bad < p.n && std::fabs(y[bad] - ref[bad]) <= (k + 4) * 1.2e-7 * std::fabs(ref[bad])) ++bad;
      if (bad < p.n) {  // NaN fails the comparison too
        std::printf("%-10s %5d WRONG RESULT at %zu: %.9g, expected %.9g\n", name, k, bad, y[bad], ref[bad]);
        status = 3;
        continue;
      }
      const float ms = time_ms([&] { launch(k); });
      if (template_ms == 0) template_ms = ms;
      std::printf("%-10s %5d %8.3f ms %8.0f %8.2f %11.2f×\n", name, k, ms, 2.0 * p.bytes() / ms / 1e6,
                  copy_ms / ms, ms / template_ms);
    }
  }
  return status;
}

}  // namespace lesson
