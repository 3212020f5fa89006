// 11 - Type from address (COAL): a virtual call per element, the class found from where the object
//      lives instead of from the vtable pointer it carries.
//
// Idea.    Each element has an object of one of several classes and calls a virtual method on it:
//          a load of the object's vtable pointer, a load of the vtable entry, a call through a
//          register. COAL (Zhang, Alawneh and Rogers, ASPLOS 2021) allocates each class's objects in
//          an address range of its own, so the class follows from the object's address, compared
//          with the ranges' bounds, and the method can be called directly, inlined behind a switch,
//          with no load from the object before it.
// Cost.    An arena per class, sized in advance; the inlined form needs the closed set of classes.
//          The knob is the objects' layout: sorted by class, a warp takes one branch; mixed, it
//          takes them in turn, and the vtable-pointer load COAL saves was also the warp's fetch of
//          its objects. The report's objects section gives every form at each layout.
// Use it   where the measurement says so (the report's verdict): objects of a closed set of classes
//          allocated by class, and a layout where a warp's objects share a class.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/11_type_from_address.cu -o 11
// See it.  cuobjdump -sass 11: virtual_kernel loads the pointer, the vtable pointer and the entry,
//          then CALL.REL.NOINC; coal_kernel compares the address with the bound, then a branch to
//          each class's inlined arithmetic, and no CALL.
// Suite.   strategies/suite/11_type_from_address.cu: the paper's forms (the search, the table, the
//          prefetch, TypePointer) on the objects workload of 32 classes.
#include <new>

#include "strategies/lesson.cuh"

struct shape {
  __device__ virtual float apply(float v) const = 0;
};
struct quadratic_shape final : shape {
  __device__ float apply(float v) const override { return lesson::quadratic{}(v); }
};
struct square_shape final : shape {
  __device__ float apply(float v) const override { return v * v; }
};

// Element i's object: of class `square` where is_square(i), built in its class's arena.
__global__ void make_objects(quadratic_shape* quadratics, square_shape* squares, const shape** objects,
                             std::size_t n, bool mixed) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const bool square = mixed ? (i * 2654435761u >> 7) % 2 : i >= n / 2;  // a hash of i, or halves
  objects[i] = square ? static_cast<const shape*>(new (squares + i) square_shape)
                      : static_cast<const shape*>(new (quadratics + i) quadratic_shape);
}

__global__ void virtual_kernel(const float* x, float* y, std::size_t n, const shape* const* objects) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = objects[i]->apply(x[i]);
}

// The class from the address: the square arena follows the quadratic one, so one bound tells them
// apart, and each class's method is called directly (qualified), so it is inlined.
__global__ void coal_kernel(const float* x, float* y, std::size_t n, const shape* const* objects,
                            const char* squares_begin) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const shape* o = objects[i];
  y[i] = reinterpret_cast<const char*>(o) < squares_begin
             ? static_cast<const quadratic_shape*>(o)->quadratic_shape::apply(x[i])
             : static_cast<const square_shape*>(o)->square_shape::apply(x[i]);
}

int main() {
  lesson::problem p;
  char* arenas = nullptr;  // one allocation: the quadratic arena, then the square arena
  const shape** objects = nullptr;
  CHECK(cudaMalloc(&arenas, p.n * (sizeof(quadratic_shape) + sizeof(square_shape))));
  CHECK(cudaMalloc(&objects, p.n * sizeof(shape*)));
  auto* quadratics = reinterpret_cast<quadratic_shape*>(arenas);
  auto* squares = reinterpret_cast<square_shape*>(arenas + p.n * sizeof(quadratic_shape));
  std::vector<float> y(p.n);
  std::vector<const shape*> host_objects(p.n);
  std::printf("%-8s %-7s %11s %12s   (2^24 floats, an object per element, two classes)\n", "form", "layout",
              "median", "× virtual");
  int status = 0;
  for (bool mixed : {false, true}) {
    const char* layout = mixed ? "mixed" : "sorted";
    make_objects<<<lesson::grid(p.n), lesson::block>>>(quadratics, squares, objects, p.n, mixed);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host_objects.data(), objects, p.n * sizeof(shape*), cudaMemcpyDeviceToHost));
    float virtual_ms = 0;
    for (int form = 0; form < 2; ++form) {
      auto run = [&] {
        if (form == 0)
          virtual_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, objects);
        else
          coal_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, objects,
                                                            reinterpret_cast<const char*>(squares));
      };
      CHECK(cudaMemset(p.dy, 0xff, p.bytes()));  // NaN: a missed element fails validation
      run();
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(y.data(), p.dy, p.bytes(), cudaMemcpyDeviceToHost));
      const char* name = form == 0 ? "virtual" : "coal";
      bool right = true;
      for (std::size_t i = 0; i < p.n && right; ++i) {  // the class from where the object was built
        const double v = p.x[i];
        const bool square =
            reinterpret_cast<const char*>(host_objects[i]) >= reinterpret_cast<const char*>(squares);
        const double ref = square ? v * v : lesson::quadratic{}(v);
        if (!(std::fabs(y[i] - ref) <= 4 * 1.2e-7 * std::fabs(ref))) {
          std::printf("%-8s %-7s WRONG RESULT at %zu: %.9g, expected %.9g\n", name, layout, i, y[i], ref);
          status = 3;
          right = false;
        }
      }
      if (!right) continue;  // a wrong result is never timed
      const float ms = lesson::time_ms(run);
      if (form == 0) virtual_ms = ms;
      std::printf("%-8s %-7s %8.3f ms %11.2f×\n", name, layout, ms, ms / virtual_ms);
    }
  }
  CHECK(cudaFree(objects));
  CHECK(cudaFree(arenas));
  return status;
}
