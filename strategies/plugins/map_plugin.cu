// A plugin of strategy 13: one map op compiled ahead of time by nvcc into a file of its own, which
// the programs load at run time. strategies/CMakeLists.txt builds it once per op of the map
// catalogue (-DCDL_PLUGIN_OP=<op>), in three ways, into build/<preset>/plugins/:
//   cdl_plugin_<op>.fatbin   (-fatbin)                 the map skeleton's kernels with the op inlined:
//                                                      loaded as it is (cudaLibraryLoadFromFile)
//   cdl_plugin_<op>.ltoir    (-ltoir -dlto, CDL_PLUGIN_OP_ONLY)  the op alone, as LTO-IR
//   cdl_map_skeleton.ltoir   (-ltoir -dlto, CDL_PLUGIN_SKELETON) the kernels with the op declared,
//                                                      once: nvJitLink links it with an op's LTO-IR
// The kernels have C names (no mangling), the contract between a plugin and its loader.
#include "common/ops.cuh"
#include "common/skeletons/map.cuh"

#if CDL_PLUGIN_SKELETON
extern "C" __device__ float cdl_plugin_op_f32(float x);
extern "C" __device__ double cdl_plugin_op_f64(double x);
struct plugin_op {  // the op, found by the link
  __device__ float operator()(float x) const { return cdl_plugin_op_f32(x); }
  __device__ double operator()(double x) const { return cdl_plugin_op_f64(x); }
};
#define CDL_PLUGIN_PREFIX cdl_lto_map_
#else
#ifndef CDL_PLUGIN_OP
#error "build with -DCDL_PLUGIN_OP=<an op of CDL_MAP_OPS in common/ops.cuh>"
#endif
using plugin_op = cdl::ops::CDL_PLUGIN_OP;
#define CDL_PLUGIN_PREFIX cdl_plugin_map_
#endif

#if CDL_PLUGIN_OP_ONLY
extern "C" __device__ float cdl_plugin_op_f32(float x) { return plugin_op{}(x); }
extern "C" __device__ double cdl_plugin_op_f64(double x) { return plugin_op{}(x); }
#else
#define CDL_CONCAT2(a, b) a##b
#define CDL_CONCAT(a, b) CDL_CONCAT2(a, b)
#define CDL_PLUGIN_KERNELS(T, type)                                                                      \
  extern "C" __global__ void __launch_bounds__(cdl::skeleton::elementwise_block)                         \
      CDL_CONCAT(CDL_PLUGIN_PREFIX, scalar_##type)(const T* x, T* y, std::size_t n, int k) {             \
    cdl::skeleton::map_scalar_body(x, y, n, k, plugin_op{});                                             \
  }                                                                                                      \
  extern "C" __global__ void __launch_bounds__(cdl::skeleton::elementwise_block) CDL_CONCAT(             \
      CDL_PLUGIN_PREFIX, vec_##type)(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k) { \
    cdl::skeleton::map_vec_body(x, y, n, k, plugin_op{});                                                \
  }
CDL_PLUGIN_KERNELS(float, f32)
CDL_PLUGIN_KERNELS(double, f64)
#endif
