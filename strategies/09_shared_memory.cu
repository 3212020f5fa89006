// 09 - Shared memory: a block loads what its threads share once, then each reads it from there.
//
// Idea.    Shared memory is a per-SM scratchpad a block's threads fill together and read at close to
//          register latency. It pays when different threads need the same data: in a box blur of
//          radius r every pixel is read (2r+1)^2 times, so a block loads its tile and an r-pixel
//          halo once, waits at a barrier, and each thread sums its window from shared memory.
// Cost.    A barrier per tile, the halo loaded again by neighbouring blocks, shared memory that
//          limits the blocks an SM holds, and code to write; for an elementwise op, where no thread
//          reads another's data, only the cost (the suite's `staged` form measures the articles'
//          advice to stage anyway). The report's blur figure gives both forms at each radius.
// Use it   when threads of a block read each other's inputs: stencils, tiled matrix products.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/09_shared_memory.cu -o 09_shared_memory
// See it.  cuobjdump -sass 09_shared_memory: the tiled kernel's STS, BAR.SYNC and LDS, where the
//          direct kernel has one LDG per window element (served by L1 and L2).
// Suite.   strategies/suite/09_shared_memory.cu: the tiled image and GEMM forms and `staged` for
//          every strategy, from common/skeletons/.
#include "strategies/lesson.cuh"

constexpr int width = 3840, height = 2160, tile = 32;

__device__ __host__ inline int clamp(int v, int high) { return v < 0 ? 0 : (v > high ? high : v); }

// Each thread reads its (2r+1)^2 window from global memory (borders clamped).
__global__ void direct_blur(const float* __restrict__ in, float* __restrict__ out, int r) {
  const int x = int(blockIdx.x) * tile + int(threadIdx.x), y = int(blockIdx.y) * tile + int(threadIdx.y);
  if (x >= width || y >= height) return;
  float sum = 0.0f;
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) sum += in[clamp(y + dy, height - 1) * width + clamp(x + dx, width - 1)];
  out[y * width + x] = sum / float((2 * r + 1) * (2 * r + 1));
}

// The block loads its tile and halo into shared memory once; each thread sums its window there.
__global__ void tiled_blur(const float* __restrict__ in, float* __restrict__ out, int r) {
  extern __shared__ float s[];  // (tile + 2r)^2 floats, sized at launch
  const int side = tile + 2 * r, x0 = int(blockIdx.x) * tile - r, y0 = int(blockIdx.y) * tile - r;
  for (int i = int(threadIdx.y) * tile + int(threadIdx.x); i < side * side; i += tile * tile)
    s[i] = in[clamp(y0 + i / side, height - 1) * width + clamp(x0 + i % side, width - 1)];
  __syncthreads();  // every pixel of the tile is in before any thread reads its neighbours'
  const int x = x0 + r + int(threadIdx.x), y = y0 + r + int(threadIdx.y);
  if (x >= width || y >= height) return;
  float sum = 0.0f;
  for (int dy = 0; dy <= 2 * r; ++dy)
    for (int dx = 0; dx <= 2 * r; ++dx) sum += s[(int(threadIdx.y) + dy) * side + int(threadIdx.x) + dx];
  out[y * width + x] = sum / float((2 * r + 1) * (2 * r + 1));
}

int main() {
  lesson::problem p;  // its first 3840 x 2160 floats are the image
  const dim3 grid((width + tile - 1) / tile, (height + tile - 1) / tile), block(tile, tile);
  const std::size_t pixels = std::size_t(width) * height, bytes = 2 * pixels * sizeof(float);
  std::vector<float> out(pixels);
  std::printf("%-8s %3s %11s %8s %12s   (a 3840 x 2160 float image, box blur of radius r)\n", "form", "r",
              "median", "GB/s", "× direct");
  int status = 0;
  for (int r : {1, 4, 8}) {
    std::vector<double> ref(pixels);  // the float64 blur of the same pixels
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        double sum = 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx)
            sum += p.x[clamp(y + dy, height - 1) * width + clamp(x + dx, width - 1)];
        ref[std::size_t(y) * width + x] = sum / ((2 * r + 1) * (2 * r + 1));
      }
    const std::size_t shared = std::size_t(tile + 2 * r) * (tile + 2 * r) * sizeof(float);
    float direct_ms = 0;
    for (int form = 0; form < 2; ++form) {
      auto run = [&] {
        if (form == 0)
          direct_blur<<<grid, block>>>(p.dx, p.dy, r);
        else
          tiled_blur<<<grid, block, shared>>>(p.dx, p.dy, r);
      };
      CHECK(cudaMemset(p.dy, 0xff, pixels * sizeof(float)));  // NaN: a missed pixel fails validation
      run();
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(out.data(), p.dy, pixels * sizeof(float), cudaMemcpyDeviceToHost));
      const char* name = form == 0 ? "direct" : "tiled";
      std::size_t bad = 0;  // (2r+1)^2 terms summed in float, then divided
      while (bad < pixels &&
             std::fabs(out[bad] - ref[bad]) <= ((2 * r + 1) * (2 * r + 1) + 2) * 1.2e-7 * ref[bad])
        ++bad;
      if (bad < pixels) {
        std::printf("%-8s %3d WRONG RESULT at %zu: %.9g, expected %.9g\n", name, r, bad, out[bad], ref[bad]);
        status = 3;
        continue;
      }
      const float ms = lesson::time_ms(run);
      if (form == 0) direct_ms = ms;
      std::printf("%-8s %3d %8.3f ms %8.0f %11.2f×\n", name, r, ms, bytes / ms / 1e6, ms / direct_ms);
    }
  }
  return status;
}
