// The matmul workload: C = A (M x K) "times" B (K x N) over a semiring: plain product (+, x),
// shortest paths (min, +), most reliable paths (max, x) (skeletons/matmul.cuh).
#pragma once

#include "fixture.hpp"
#include "ops.cuh"

namespace cdl {

// naive: one thread per element of C; tiled: shared-memory tiles and register blocking, with
// every step of skeletons/matmul.cuh; tiled_step0 ... tiled_step3: the same kernel before those
// steps (the template strategy only: the report's progression).
enum class matmul_form { naive, tiled, tiled_step0, tiled_step1, tiled_step2, tiled_step3 };
inline std::string_view to_string(matmul_form f) {
  constexpr std::string_view names[] = {"naive",       "tiled",       "tiled_step0",
                                        "tiled_step1", "tiled_step2", "tiled_step3"};
  return names[int(f)];
}

struct matmul_problem {
  semiring op = semiring::plus_times;
  dtype type = dtype::f32;
  int m = 0, n = 0, k = 0;

  std::string describe() const;
  std::size_t min_bytes() const {
    return (std::size_t(m) * k + std::size_t(k) * n + std::size_t(m) * n) * size_of(type);
  }
  double ops() const { return 2.0 * m * n * k; }  // one combine and one reduce per term
};

// The float64 reference of C = A (m x k) ⊗ B (k x n), both row-major, in the semiring p.op: each
// element with the magnitude its rounding is relative to (the sum of its terms' for (+,×), its own
// for a min or a max). The fixture uses it but for the largest (+,×) problems, whose reference
// cuBLAS computes in float64 on the GPU.
template <class T>
std::vector<reference_value> matmul_reference(const matmul_problem& p, const std::vector<T>& a,
                                              const std::vector<T>& b);

struct matmul_launch {
  semiring op;
  matmul_form form;
  dtype type;
  const void* a;
  const void* b;
  void* c;
  int m, n, k;
  cudaStream_t stream;
};
using matmul_launch_fn = void (*)(const matmul_launch&);

struct matmul_inputs {
  device_buffer<std::byte> a, b;
};
using matmul_fixture = fixture<matmul_problem, matmul_launch_fn, matmul_form, matmul_inputs>;

}  // namespace cdl
