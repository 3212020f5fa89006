// The whole question in one file: four ways to hand an op to a kernel, each calling it k times per
// element, checked against a float64 CPU reference and timed with CUDA events beside a
// device-to-device copy of the same bytes. The suite (strategies/, common/) does this for every
// op, workload and way, with the controls a measurement needs (an L2 flush, repetitions, a noise
// threshold); this file is the idea without them, to read first. Build and run it alone:
//
//   nvcc -std=c++20 -O3 -arch=native examples/dispatch_in_one_file.cu -o dispatch && ./dispatch
//
// (the project builds it too: build/release/examples/dispatch_in_one_file). The four ways:
//   functor  the op a type, the kernel a template over it: inlined, one instantiation per op;
//   switch   an op id passed at run time and a switch at every call: every op compiled in;
//   pointer  a __device__ function pointer read from a symbol: a call through a register;
//   virtual  an object made on the device, its virtual function called through its vtable.
// At k = 1 each element costs one call and the kernel waits on memory, so every way should be
// near the copy; at k = 256 the calls are the work, and what each way costs per call shows.
// y[i] = sum over j < k of op(x[i] + j/4096): the arguments differ so that no call can be merged
// with another, and summed because op(op(x)) overflows within a few steps.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#define CHECK(call)                                                                                      \
  do {                                                                                                   \
    const cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

constexpr float delta = 1.0f / 4096;  // a power of two: x + j*delta rounds alike on host and device

// The op, once, for host and device, in float on the GPU and in double for the reference; the
// other ways call it through their mechanism.
struct quadratic {
  template <class T>
  __host__ __device__ T operator()(T x) const {
    return x * x + T(2) * x + T(1);
  }
};
__device__ float quadratic_fn(float x) { return quadratic{}(x); }

// The skeleton every way shares: only the invoker F differs, so a difference in time is the call.
template <class F>
__global__ void map_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k, F f) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) acc += f(x[i] + float(j) * delta);
  y[i] = acc;
}

// switch: the id is a kernel argument and the switch is inside the call. The id does not change,
// so the compiler may hoist the switch out of the k loop (here it does, for id 0) and pay it once
// per thread; the empty asm hides the id's value from it, so that this way pays a switch at every
// call. Strategy 03 measures both, the switch as the compiler leaves it and hoisted by hand.
struct switch_op {
  int id;
  __device__ float operator()(float v) const {
    int op = id;
    asm volatile("" : "+r"(op));
    switch (op) {
      case 0: return quadratic{}(v);
      case 1: return v * v;
      case 2: return sinf(v);
      case 3: return v * v * v;
      default: return v;
    }
  }
};

// pointer: the address of a __device__ function, which the host can only read from a symbol.
using op_pointer = float (*)(float);
__device__ op_pointer quadratic_ptr = quadratic_fn;
struct pointer_op {
  op_pointer f;
  __device__ float operator()(float v) const { return f(v); }
};

// virtual: an object with a vtable must be constructed on the device (its vtable pointer is a
// device address), so a one-thread kernel builds it in device memory the host allocated.
struct op_base {
  __device__ virtual float apply(float v) const = 0;
};
struct quadratic_virtual : op_base {
  __device__ float apply(float v) const override { return quadratic{}(v); }
};
__global__ void make_quadratic(void* where) { new (where) quadratic_virtual; }
struct virtual_op {
  const op_base* o;
  __device__ float operator()(float v) const { return o->apply(v); }
};

struct ways {
  op_pointer f;      // read from quadratic_ptr
  const op_base* o;  // made by make_quadratic
};
const char* const way_names[] = {"functor", "switch", "pointer", "virtual"};
void launch(int way, const ways& w, const float* x, float* y, std::size_t n, int k) {
  const unsigned block = 256, grid = unsigned((n + block - 1) / block);
  switch (way) {
    case 0: map_kernel<<<grid, block>>>(x, y, n, k, quadratic{}); break;
    case 1: map_kernel<<<grid, block>>>(x, y, n, k, switch_op{0}); break;  // id 0: quadratic
    case 2: map_kernel<<<grid, block>>>(x, y, n, k, pointer_op{w.f}); break;
    case 3: map_kernel<<<grid, block>>>(x, y, n, k, virtual_op{w.o}); break;
  }
}

// The float64 reference of every element, on all the host's cores (k = 256 is 2^32 calls).
std::vector<double> reference(const std::vector<float>& x, int k) {
  std::vector<double> ref(x.size());
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < x.size(); i += workers) {
        double acc = 0;
        for (int j = 0; j < k; ++j) acc += quadratic{}(double(x[i] + float(j) * delta));  // as on the device
        ref[i] = acc;
      }
    });
  for (std::thread& t : pool) t.join();
  return ref;
}

// Every element within k + 4 float roundings of the reference (k terms summed in float).
bool validate(const std::vector<float>& y, const std::vector<double>& ref, int k, const char* name) {
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!(std::fabs(y[i] - ref[i]) <= (k + 4) * 1.2e-7 * std::fabs(ref[i]))) {  // also false for NaN
      std::printf("%-8s k = %3d WRONG RESULT at %zu: %.9g, expected %.9g\n", name, k, i, y[i], ref[i]);
      return false;
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
  // Two arrays of 2^24 floats, 128 MiB: more than any GPU's L2, so each launch reads memory.
  const std::size_t n = std::size_t(1) << 24, bytes = n * sizeof(float);
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.25f + 1.5f * float(i % 1000003) / 1000003.0f;  // positive
  float *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, bytes));
  CHECK(cudaMalloc(&dy, bytes));
  CHECK(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice));
  ways w{};
  CHECK(cudaMemcpyFromSymbol(&w.f, quadratic_ptr, sizeof w.f));
  void* object = nullptr;
  CHECK(cudaMalloc(&object, sizeof(quadratic_virtual)));
  make_quadratic<<<1, 1>>>(object);
  CHECK(cudaGetLastError());
  w.o = static_cast<const op_base*>(object);

  const float copy_ms = time_ms([&] { CHECK(cudaMemcpyAsync(dy, dx, bytes, cudaMemcpyDeviceToDevice)); });
  std::printf("%-8s %5s %11s %8s %8s %11s   (2^24 floats, an element per thread)\n",  //
              "way", "k", "median", "GB/s", "of copy", "× functor");
  std::printf("%-8s %5s %8.3f ms %8.0f %8.2f\n", "copy", "", copy_ms, 2.0 * bytes / copy_ms / 1e6, 1.0);
  bool all_valid = true;
  for (int k : {1, 256}) {
    const std::vector<double> ref = reference(x, k);
    float functor_ms = 0;
    for (int way = 0; way < 4; ++way) {
      CHECK(cudaMemset(dy, 0xff, bytes));  // NaN everywhere: an element the kernel misses fails validation
      launch(way, w, dx, dy, n, k);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(y.data(), dy, bytes, cudaMemcpyDeviceToHost));
      if (!validate(y, ref, k, way_names[way])) {  // a wrong result is never timed
        all_valid = false;
        continue;
      }
      const float ms = time_ms([&] { launch(way, w, dx, dy, n, k); });
      if (way == 0) functor_ms = ms;
      std::printf("%-8s %5d %8.3f ms %8.0f %8.2f %10.2f×\n", way_names[way], k, ms, 2.0 * bytes / ms / 1e6,
                  copy_ms / ms, functor_ms > 0 ? ms / functor_ms : NAN);
    }
  }
  CHECK(cudaFree(object));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  return all_valid ? 0 : 3;
}
