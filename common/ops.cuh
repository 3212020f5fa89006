// The op catalogue: every op of every workload is written exactly once, in an X-macro list
// below, as an expression in `x` (and `y` for binary ops) of element type `T`. From that one
// definition come all the forms the strategies need:
//
//   ops::quadratic                      a __host__ __device__ functor (templates, lambdas,
//                                       the CPU reference in double precision)
//   map_op::quadratic                   an op id for run-time selection (switch, tables)
//   as_device_function<ops::quadratic, float>
//                                       a __device__ function whose address can be taken
//                                       (function pointers, device tables)
//   map_op_catalogue[id].source         the expression as text, stringified from the same
//                                       macro argument, for the run-time compilers (NVRTC)
//
// so the forms cannot drift apart. The math functions the expressions call (sin, cos, exp)
// are the overloads in this namespace: float stays float on the device (sinf, not sin), the
// host uses <cmath>, and the same text compiles under nvcc, NVRTC and the host compiler.
#pragma once

#if defined(__CUDACC__)
#define CDL_HD __host__ __device__
#else
#define CDL_HD
#endif

#if !defined(__CUDACC_RTC__)
#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#endif

// name, worst-case error of one evaluation in units of the type's epsilon, expression.
// Inputs are positive (see inputs.hpp), so no expression here suffers cancellation.
#define CDL_MAP_OPS(X)                                  \
  X(quadratic, 3, x * x + T(2) * x + T(1))              \
  X(square, 1, x * x)                                   \
  X(sine, 2, sin(x))                                    \
  X(exp_sin_cos, 8, exp(sin(x) * cos(x)))               \
  X(threshold, 1, x > T(0.5) ? T(2) * x : x / T(2))

#define CDL_ZIP_OPS(X)  \
  X(add, 1, x + y)      \
  X(multiply, 1, x * y)

namespace cdl {
namespace ops {

// Math used by op expressions. Unqualified calls inside namespace cdl::ops find these first,
// which hides ::sin(double) and keeps float arithmetic in float on the device.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define CDL_OP_MATH(fn)                                          \
  CDL_HD inline float fn(float v) { return ::fn##f(v); }         \
  CDL_HD inline double fn(double v) { return ::fn(v); }
#else
#define CDL_OP_MATH(fn)                                          \
  CDL_HD inline float fn(float v) { return std::fn(v); }         \
  CDL_HD inline double fn(double v) { return std::fn(v); }
#endif
CDL_OP_MATH(sin)
CDL_OP_MATH(cos)
CDL_OP_MATH(exp)
#undef CDL_OP_MATH

#define CDL_DEFINE_UNARY(name, ulps, expr)                    \
  struct name {                                               \
    template <class T>                                        \
    CDL_HD T operator()(T x) const {                          \
      return expr;                                            \
    }                                                         \
  };
#define CDL_DEFINE_BINARY(name, ulps, expr)                   \
  struct name {                                               \
    template <class T>                                        \
    CDL_HD T operator()(T x, T y) const {                     \
      return expr;                                            \
    }                                                         \
  };
CDL_MAP_OPS(CDL_DEFINE_UNARY)
CDL_ZIP_OPS(CDL_DEFINE_BINARY)
#undef CDL_DEFINE_UNARY
#undef CDL_DEFINE_BINARY

}  // namespace ops

#define CDL_OP_ENUMERATOR(name, ulps, expr) name,
enum class map_op : int { CDL_MAP_OPS(CDL_OP_ENUMERATOR) };
enum class zip_op : int { CDL_ZIP_OPS(CDL_OP_ENUMERATOR) };
#undef CDL_OP_ENUMERATOR

#if defined(__CUDACC__)
// A real, addressable __device__ function for each (op, T). Taking its address forces the
// compiler to emit it out of line with the calling convention, which is the point of the
// function-pointer strategies; called directly it inlines like the functor.
template <class Op, class T>
__device__ T as_device_function(T x) {
  return Op{}(x);
}
template <class Op, class T>
__device__ T as_device_function(T x, T y) {
  return Op{}(x, y);
}
#endif

#if !defined(__CUDACC_RTC__)
// What the host needs to know about an op at run time.
struct op_info {
  std::string_view name;
  int max_ulps;             // error of one evaluation, in epsilons of the element type
  std::string_view source;  // the expression exactly as written above
};

#define CDL_OP_INFO(name, ulps, expr) op_info{#name, ulps, #expr},
inline constexpr std::array map_op_catalogue{CDL_MAP_OPS(CDL_OP_INFO)};
inline constexpr std::array zip_op_catalogue{CDL_ZIP_OPS(CDL_OP_INFO)};
#undef CDL_OP_INFO

inline const op_info& info(map_op op) { return map_op_catalogue.at(static_cast<std::size_t>(op)); }
inline const op_info& info(zip_op op) { return zip_op_catalogue.at(static_cast<std::size_t>(op)); }

// Parses an op name; throws cdl-style std::invalid_argument listing the valid names.
template <class Op, std::size_t N>
Op parse_op(std::string_view text, const std::array<op_info, N>& catalogue, const char* what) {
  std::string valid;
  for (std::size_t i = 0; i < N; ++i) {
    if (catalogue[i].name == text) return static_cast<Op>(i);
    valid += (i ? ", " : "") + std::string(catalogue[i].name);
  }
  throw std::invalid_argument("unknown " + std::string(what) + " op '" + std::string(text) +
                              "' (valid: " + valid + ")");
}
inline map_op parse_map_op(std::string_view text) { return parse_op<map_op>(text, map_op_catalogue, "map"); }
inline zip_op parse_zip_op(std::string_view text) { return parse_op<zip_op>(text, zip_op_catalogue, "zip"); }

// The bridge from a run-time op id to a compile-time functor type: calls f(ops::name{}) for
// the op named by `op`. Each case is a separate instantiation of whatever f does with it,
// which is exactly the template strategy's trade: speed bought with one kernel per op.
template <class F>
decltype(auto) visit_op(map_op op, F&& f) {
  using id = map_op;
  switch (op) {
#define CDL_OP_CASE(name, ulps, expr) \
  case id::name:                      \
    return f(ops::name{});
    CDL_MAP_OPS(CDL_OP_CASE)
  }
  throw std::invalid_argument("invalid map op id " + std::to_string(static_cast<int>(op)));
}
template <class F>
decltype(auto) visit_op(zip_op op, F&& f) {
  using id = zip_op;
  switch (op) {
    CDL_ZIP_OPS(CDL_OP_CASE)
#undef CDL_OP_CASE
  }
  throw std::invalid_argument("invalid zip op id " + std::to_string(static_cast<int>(op)));
}
#endif

}  // namespace cdl
