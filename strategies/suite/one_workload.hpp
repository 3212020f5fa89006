// One workload per compilation, for the strategies whose calls go through a pointer (04, 05).
//
// ptxas gives a call through a pointer the registers of the largest function that call might
// reach, and in whole-program compilation it counts every function whose address the module
// takes. Compiled as one file, 04's tables for every workload share one module, and the map
// kernel's call is sized for the image filters' and GEMM steps' functions: more registers, fewer
// blocks per SM, fewer loads in flight, and a memory-bound scalar map well below the copy
// bandwidth, set by what else was in the file, not by the call. (The report's resource table
// gives both builds' registers and occupancy; its map table, their fractions of copy.)
//
// So strategies/CMakeLists.txt compiles each of these files once per workload, from the one
// source, each time defining CDL_WORKLOAD (the workload this object serves) and
// CDL_REGISTER_PART (the name of its registration function), and once more with every workload
// in one module (CDL_WORKLOAD_crowded): the file as it would be written without this care,
// registered as the variant `crowded` of the map only, and measured beside the others.
#pragma once

#define CDL_WORKLOAD_map 1
#define CDL_WORKLOAD_zip 2
#define CDL_WORKLOAD_points 3
#define CDL_WORKLOAD_image 4
#define CDL_WORKLOAD_tasks 5
#define CDL_WORKLOAD_matmul 6
#define CDL_WORKLOAD_crowded 7

#if defined(__CUDACC__)  // a strategy file; registry.cpp includes this only for the list below
#if !defined(CDL_WORKLOAD) || !defined(CDL_REGISTER_PART)
#error "built once per workload: strategies/CMakeLists.txt defines CDL_WORKLOAD and CDL_REGISTER_PART"
#endif
// True when this compilation builds workload w's launches.
#define CDL_SERVES(w) (CDL_WORKLOAD == CDL_WORKLOAD_##w || CDL_WORKLOAD == CDL_WORKLOAD_crowded)
#define CDL_CROWDED (CDL_WORKLOAD == CDL_WORKLOAD_crowded)

#include "common/registry.hpp"

namespace cdl::signatures {
// The op's signature in each workload, as 04's tables and 05's objects hold it.
template <class T>
using unary = T(T);
template <class T>
using binary = T(T, T);
template <class T>
using point_fn = point<T>(point<T>);
template <class T>
using ternary = T(T, T, T);
template <class T>
using image_fn = T(image_view<T>, int, int, int);
}  // namespace cdl::signatures
#endif

// The parts, each with its registration function register_<strategy>_<part>, which registry.cpp
// calls in turn (the same list as strategies/CMakeLists.txt's).
// clang-format off
#define CDL_SPLIT_PARTS(X, strategy) \
  X(strategy, map) X(strategy, zip) X(strategy, points) X(strategy, image) X(strategy, tasks) \
  X(strategy, matmul) X(strategy, crowded)
// clang-format on
