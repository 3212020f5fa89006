// Strategy 16's kernels' bodies (suite/16_interpreter.cu wraps them as its kernels, and
// suite/interpreter_f32.cu float's under C names that a program with no C++ build of its own loads
// from a file, declared below): the map skeleton with the interpreter's loop (run_steps, in
// interpreter_loop.cuh) running common/bytecode.hpp's steps in place of the op.
#pragma once

#include "common/skeletons/map.cuh"
#include "strategies/suite/interpreter_loop.cuh"

#include <cstddef>

namespace cdl::interpreter {

static_assert((bytecode::max_constants & (bytecode::max_constants - 1)) == 0, "a number's index is masked");

// The program as the kernel's argument: in the constant bank, where a warp reads each step once for
// all of its threads, and sent with the launch (no copy of its own). __grid_constant__ lets the kernel
// index it without a copy in local memory.
template <class T>
struct kernel_program {
  bytecode::step code[bytecode::max_steps];
  T constants[bytecode::max_constants];  // in the element type, converted once on the host
  int length;
};

// map_apply (skeletons/map.cuh) for E values, S steps of the k loop at a time: lane s * E + e is
// element e at step j + s. The sums are added in map_apply's order, so the result is what it
// computes with the op compiled.
template <int E, int S, int Slots, class T>
__device__ __forceinline__ void map_apply_interpreted(const kernel_program<T>& p, const T (&x)[E],
                                                      T (&sum)[E], int k) {
  constexpr int L = E * S;
  T v[L], acc[L] = {}, slot[Slots > 0 ? Slots : 1][L] = {};
  const int length = p.length < 0 ? 0 : p.length > bytecode::max_steps ? bytecode::max_steps : p.length;
#pragma unroll
  for (int e = 0; e < E; ++e) sum[e] = T(0);
#pragma unroll 1
  for (int j = 0; j < k; j += S) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const T offset = T(j + s) * T(map_delta);
#pragma unroll
      for (int e = 0; e < E; ++e) v[s * E + e] = x[e] + offset;
    }
    run_steps<T, L, Slots>(p.code, length, p.constants, v, acc, slot);
#pragma unroll
    for (int s = 0; s < S; ++s)
      if (j + s < k)
#pragma unroll
        for (int e = 0; e < E; ++e) sum[e] += acc[s * E + e];
  }
}

// The map skeleton's two forms (an element a thread; 16-byte vectors, whole vectors only), with
// the interpreter in place of the op. A kernel takes p as a __grid_constant__ parameter.
template <int S, int Slots, class T>
__device__ __forceinline__ void interpreter_scalar_body(const T* __restrict__ x, T* __restrict__ y,
                                                        std::size_t n, int k, const kernel_program<T>& p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T e[1] = {x[i]};
  T acc[1];
  map_apply_interpreted<1, S, Slots>(p, e, acc, k);
  y[i] = acc[0];
}
// V 16-byte vectors a thread, block-strided as the skeleton loads them, every load issued before
// any value is used: where k is small, two or (a long program) four, so that a step's dispatch is
// paid once for eight or sixteen floats (suite/16_interpreter.cu chooses).
template <int V, int S, int Slots, class T>
__device__ __forceinline__ void interpreter_vec_body(const T* __restrict__ x, T* __restrict__ y,
                                                     std::size_t n, int k, const kernel_program<T>& p) {
  using Vec = typename skeleton::vec16<T>::type;
  constexpr int lanes = sizeof(Vec) / sizeof(T);
  const std::size_t nvec = n / lanes, first = std::size_t(blockIdx.x) * blockDim.x * V + threadIdx.x;
  if (first >= nvec) return;
  T e[V * lanes], sum[V * lanes];
#pragma unroll
  for (int u = 0; u < V; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    Vec v{};  // past the end: zeros, computed on and never stored
    if (i < nvec) v = reinterpret_cast<const Vec*>(x)[i];
    skeleton::to_lanes(v, e + u * lanes);
  }
  map_apply_interpreted<V * lanes, S, Slots>(p, e, sum, k);
#pragma unroll
  for (int u = 0; u < V; ++u) {
    const std::size_t i = first + std::size_t(u) * blockDim.x;
    if (i < nvec) reinterpret_cast<Vec*>(y)[i] = skeleton::from_lanes(sum + u * lanes);
  }
}

// Lanes a thread computes at once where k has the steps: sixteen floats or eight doubles, a step's
// dispatch paid once for all of them. More lanes take more registers (fewer warps fit an SM) and
// copy each op's code once more (change the lesson's count to see both). Where k is smaller, a pass
// runs one step of it.
template <class T>
constexpr int most_lanes = sizeof(T) == 4 ? 16 : 8;

}  // namespace cdl::interpreter

// The float kernels under C names (no mangling), defined in interpreter_f32.cu: the contract with a
// program that has no compiler at run time and no C++ build of its own. The build copies that
// object's fatbin out as plugins/cdl_interpreter.fatbin (strategies/CMakeLists.txt), which the
// Python peers load with PyCUDA and launch by these names, a user's op run as data (the program
// `cdl_run --steps` writes):
//   cdl_interpreter_scalar_f32_<S>_<slots>      an element a thread, S steps of the k loop a pass
//   cdl_interpreter_vec_f32_<V>_<S>_<slots>     V 16-byte vectors a thread, S steps a pass
// each taking cdl::interpreter::kernel_program<float> last, by value. The forms are those
// suite/16_interpreter.cu launches for float (most_lanes<float> steps a pass where k has them; on
// four vectors a thread for a long program that saves nothing); float64's are its templates.
// clang-format off
#define CDL_INTERPRETER_F32_FORMS(SCALAR, VEC) \
  SCALAR(1, 0) SCALAR(1, 2) SCALAR(1, 4) SCALAR(16, 0) SCALAR(16, 2) SCALAR(16, 4) \
  VEC(2, 1, 0) VEC(2, 1, 2) VEC(2, 1, 4) VEC(4, 1, 0) VEC(1, 4, 0) VEC(1, 4, 2) VEC(1, 4, 4)
// clang-format on
#define CDL_INTERPRETER_F32_SCALAR(S, SLOTS)                                        \
  extern "C" __global__ void __launch_bounds__(cdl::skeleton::elementwise_block)    \
      cdl_interpreter_scalar_f32_##S##_##SLOTS(                                     \
          const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k, \
          const __grid_constant__ cdl::interpreter::kernel_program<float> p)
#define CDL_INTERPRETER_F32_VEC(V, S, SLOTS)                                        \
  extern "C" __global__ void __launch_bounds__(cdl::skeleton::elementwise_block)    \
      cdl_interpreter_vec_f32_##V##_##S##_##SLOTS(                                  \
          const float* __restrict__ x, float* __restrict__ y, std::size_t n, int k, \
          const __grid_constant__ cdl::interpreter::kernel_program<float> p)
#define CDL_INTERPRETER_F32_DECLARE_SCALAR(S, SLOTS) CDL_INTERPRETER_F32_SCALAR(S, SLOTS);
#define CDL_INTERPRETER_F32_DECLARE_VEC(V, S, SLOTS) CDL_INTERPRETER_F32_VEC(V, S, SLOTS);
CDL_INTERPRETER_F32_FORMS(CDL_INTERPRETER_F32_DECLARE_SCALAR, CDL_INTERPRETER_F32_DECLARE_VEC)
