// The op catalogue: every op of every workload is written exactly once, in an X-macro list
// below, as an expression in `x` (and `y` for binary ops) of element type `T`. From that one
// definition come all the forms the strategies need:
//
//   ops::quadratic                      a __host__ __device__ functor (templates, lambdas,
//                                       the CPU reference in double precision)
//   map_op::quadratic                   an op id for run-time selection (switch, tables)
//   as_device_function<ops::quadratic, float, float>
//                                       a __device__ function whose address can be taken
//                                       (function pointers, device tables)
//   map_op_catalogue[id].source         the expression as text, stringified from the same
//                                       macro argument, for the run-time compilers (NVRTC)
//
// so the forms cannot drift apart. The math functions the expressions call (sin, cos, exp)
// are the overloads in this namespace: float stays float on the device (sinf, not sin), the
// host uses <cmath>, and the same text compiles under nvcc, NVRTC and the host compiler.
#pragma once

#include "portable.cuh"

#if !defined(__CUDACC_RTC__)
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#endif

// The op tables' text is stringified into each op's source (op_info::source) and keeps the
// spacing written here: the formatter leaves it alone.
// clang-format off
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

// Point ops: name, ulps, new x, new y (in terms of the point's x and y).
#define CDL_POINT_OPS(X)                        \
  X(scale_shift, 1, T(2) * x, y + T(1))         \
  X(rotate90, 0, -y, x)                         \
  X(shear, 1, x + T(0.5) * y, y)

// Semirings for the matrix product C[i][j] = reduce_k combine(A[i][k], B[k][j]), written as one
// fused step acc' = reduce(acc, combine(a, b)) so that every strategy passes one function.
// name, reduction sums (1: error grows with K) or selects (0), identity of the reduction, step.
#define CDL_SEMIRINGS(X)                                    \
  X(plus_times, 1, T(0), acc + a * b)                       \
  X(min_plus, 0, infinity<T>(), fmin(acc, a + b))           \
  X(max_times, 0, -infinity<T>(), fmax(acc, a * b))

// Image filters: name, weight (sum of |coefficients|, bounds the rounding error), body. The body
// sees the image `img` (reads clamp to the border), the pixel (x, y) and the radius r.
#define CDL_IMAGE_OPS(X)                                                                                 \
  X(box_blur, 1, {                                                                                       \
    T s = T(0);                                                                                          \
    for (int dy = -r; dy <= r; ++dy)                                                                     \
      for (int dx = -r; dx <= r; ++dx) s += img.at(x + dx, y + dy);                                      \
    return s / T((2 * r + 1) * (2 * r + 1));                                                             \
  })                                                                                                     \
  X(sharpen, 9, {                                                                                        \
    return T(5) * img.at(x, y) - img.at(x - 1, y) - img.at(x + 1, y) - img.at(x, y - 1) -                \
           img.at(x, y + 1);                                                                             \
  })                                                                                                     \
  X(invert, 1, { return T(1) - img.at(x, y); })                                                          \
  X(sobel, 8, {                                                                                          \
    const T gx = img.at(x + 1, y - 1) + T(2) * img.at(x + 1, y) + img.at(x + 1, y + 1) -                 \
                 (img.at(x - 1, y - 1) + T(2) * img.at(x - 1, y) + img.at(x - 1, y + 1));                \
    const T gy = img.at(x - 1, y + 1) + T(2) * img.at(x, y + 1) + img.at(x + 1, y + 1) -                 \
                 (img.at(x - 1, y - 1) + T(2) * img.at(x, y - 1) + img.at(x + 1, y - 1));                \
    return sqrt(gx * gx + gy * gy);                                                                      \
  })

// Task ops, for per-element dispatch: 32 distinct functions of (x, p1, p2), op I running
// I % 4 + 1 multiply-adds and adding its own constant, so no two compile to the same code.
#define CDL_TASK_OP_BODY                                  \
  T acc = x;                                              \
  for (int j = 0; j <= I % 4; ++j) acc = acc * p1 + p2;   \
  return acc + T(I) * T(0.125);
inline constexpr int task_op_count = 32;

namespace cdl {
namespace ops {

// clang-format on

// Math used by op expressions. Unqualified calls inside namespace cdl::ops find these first,
// which hides ::sin(double) and keeps float arithmetic in float on the device.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define CDL_OP_MATH(fn)                                  \
  CDL_HD inline float fn(float v) { return ::fn##f(v); } \
  CDL_HD inline double fn(double v) { return ::fn(v); }
#else
#define CDL_OP_MATH(fn)                                  \
  CDL_HD inline float fn(float v) { return std::fn(v); } \
  CDL_HD inline double fn(double v) { return std::fn(v); }
#endif
CDL_OP_MATH(sin)
CDL_OP_MATH(cos)
CDL_OP_MATH(exp)
CDL_OP_MATH(sqrt)
#undef CDL_OP_MATH

// The semirings' reductions. fmin and fmax are one instruction on the GPU (FMNMX), where min(a, b)
// below, b < a ? b : a, is a compare and a select (FSETP, FSEL): a third instruction in every
// step of a (min, +) or (max, x) GEMM. They differ from min and max only when an argument is NaN
// (fmin returns the other), and a reduction's running value, which starts at an infinity, never
// is; so the sums are the same.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define CDL_OP_MATH2(fn)                                             \
  CDL_HD inline float fn(float a, float b) { return ::fn##f(a, b); } \
  CDL_HD inline double fn(double a, double b) { return ::fn(a, b); }
#else
#define CDL_OP_MATH2(fn)                                             \
  CDL_HD inline float fn(float a, float b) { return std::fn(a, b); } \
  CDL_HD inline double fn(double a, double b) { return std::fn(a, b); }
#endif
CDL_OP_MATH2(fmin)
CDL_OP_MATH2(fmax)
#undef CDL_OP_MATH2

template <class T>
CDL_HD inline T min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
CDL_HD inline T max(T a, T b) {
  return a < b ? b : a;
}
template <class T>
CDL_HD inline T infinity() {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return T(__longlong_as_double(0x7ff0000000000000LL));
#else
  return T(HUGE_VAL);
#endif
}

#define CDL_DEFINE_UNARY(name, ulps, expr) \
  struct name {                            \
    template <class T>                     \
    CDL_HD T operator()(T x) const {       \
      return expr;                         \
    }                                      \
  };
#define CDL_DEFINE_BINARY(name, ulps, expr) \
  struct name {                             \
    template <class T>                      \
    CDL_HD T operator()(T x, T y) const {   \
      return expr;                          \
    }                                       \
  };
CDL_MAP_OPS(CDL_DEFINE_UNARY)
CDL_ZIP_OPS(CDL_DEFINE_BINARY)
#undef CDL_DEFINE_UNARY
#undef CDL_DEFINE_BINARY

}  // namespace ops

// The element of the points workload (array-of-structs layout: x and y side by side).
template <class T>
struct point {
  T x, y;
};

namespace ops {
#define CDL_DEFINE_POINT(name, ulps, new_x, new_y) \
  struct name {                                    \
    template <class T>                             \
    CDL_HD point<T> operator()(point<T> p) const { \
      const T x = p.x, y = p.y;                    \
      return {new_x, new_y};                       \
    }                                              \
  };
CDL_POINT_OPS(CDL_DEFINE_POINT)
#undef CDL_DEFINE_POINT

#define CDL_DEFINE_SEMIRING(name, sums_, identity_, step) \
  struct name {                                           \
    static constexpr bool sums = sums_;                   \
    template <class T>                                    \
    CDL_HD static T identity() {                          \
      return identity_;                                   \
    }                                                     \
    template <class T>                                    \
    CDL_HD T operator()(T acc, T a, T b) const {          \
      return step;                                        \
    }                                                     \
  };
CDL_SEMIRINGS(CDL_DEFINE_SEMIRING)
#undef CDL_DEFINE_SEMIRING
}  // namespace ops

// A read-only image whose reads clamp to the border (the image workload's boundary rule).
template <class T>
struct image_view {
  using value_type = T;
  const T* data;
  int width, height;
  CDL_HD T at(int x, int y) const {
    x = x < 0 ? 0 : (x >= width ? width - 1 : x);
    y = y < 0 ? 0 : (y >= height ? height - 1 : y);
    return data[std::size_t(y) * std::size_t(width) + std::size_t(x)];
  }
};

namespace ops {
#define CDL_DEFINE_IMAGE_OP(name, weight_, ...)                                         \
  struct name {                                                                         \
    static constexpr int weight = weight_;                                              \
    template <class V>                                                                  \
    CDL_HD typename V::value_type operator()(const V& img, int x, int y, int r) const { \
      using T = typename V::value_type;                                                 \
      (void)r;                                                                          \
      __VA_ARGS__                                                                       \
    }                                                                                   \
  };
CDL_IMAGE_OPS(CDL_DEFINE_IMAGE_OP)
#undef CDL_DEFINE_IMAGE_OP

template <int I>
struct task_op {
  template <class T>
  CDL_HD T operator()(T x, T p1, T p2) const {
    CDL_TASK_OP_BODY
  }
};

}  // namespace ops

#define CDL_OP_ENUMERATOR(name, ...) name,
enum class map_op : int { CDL_MAP_OPS(CDL_OP_ENUMERATOR) };
enum class zip_op : int { CDL_ZIP_OPS(CDL_OP_ENUMERATOR) };
enum class point_op : int { CDL_POINT_OPS(CDL_OP_ENUMERATOR) };
enum class semiring : int { CDL_SEMIRINGS(CDL_OP_ENUMERATOR) };
enum class image_op : int { CDL_IMAGE_OPS(CDL_OP_ENUMERATOR) };
#undef CDL_OP_ENUMERATOR

// Each family as a compile-time list of functor types, in op-id order. Strategies that are
// generic over a family (switch, function-pointer tables, virtual objects) iterate these.
template <class... Ops>
struct op_list {
  static constexpr int size = sizeof...(Ops);
};
template <int I, class List>
struct op_at;
template <int I, class First, class... Rest>
struct op_at<I, op_list<First, Rest...>> : op_at<I - 1, op_list<Rest...>> {};
template <class First, class... Rest>
struct op_at<0, op_list<First, Rest...>> {
  using type = First;
};
template <int I, class List>
using op_at_t = typename op_at<I, List>::type;

template <class Leading, class... Ops>  // drops the `void` that starts a list written by X-macro
using op_list_from = op_list<Ops...>;
#define CDL_OP_TYPE(name, ...) , ops::name
using map_ops = op_list_from<void CDL_MAP_OPS(CDL_OP_TYPE)>;
using zip_ops = op_list_from<void CDL_ZIP_OPS(CDL_OP_TYPE)>;
using point_ops = op_list_from<void CDL_POINT_OPS(CDL_OP_TYPE)>;
using semirings = op_list_from<void CDL_SEMIRINGS(CDL_OP_TYPE)>;
using image_ops = op_list_from<void CDL_IMAGE_OPS(CDL_OP_TYPE)>;
#undef CDL_OP_TYPE
#if !defined(__CUDACC_RTC__)
template <std::size_t... I>
op_list<ops::task_op<int(I)>...> make_task_ops(std::index_sequence<I...>);
using task_ops = decltype(make_task_ops(std::make_index_sequence<task_op_count>{}));
#endif

// The bridge from a run-time op id to a compile-time functor: calls f(Op{}) for the id-th op of
// List through a literal switch (up to 32 ops). On the host it is how templates are chosen at
// run time; on the device it is the switch-dispatch strategy itself. An id out of range
// returns f applied to the first op on the device (callers validate ids on the host).
// A case per possible op id, five to a line (the formatter would reflow them on each run).
// clang-format off
#define CDL_VISIT_CASE(i)                                       \
  case i:                                                       \
    if constexpr (i < List::size) return f(op_at_t<i, List>{}); \
    break;
template <class List, class F>
CDL_HD inline decltype(auto) visit(int id, F&& f) {
  switch (id) {
    CDL_VISIT_CASE(0) CDL_VISIT_CASE(1) CDL_VISIT_CASE(2) CDL_VISIT_CASE(3) CDL_VISIT_CASE(4)
    CDL_VISIT_CASE(5) CDL_VISIT_CASE(6) CDL_VISIT_CASE(7) CDL_VISIT_CASE(8) CDL_VISIT_CASE(9)
    CDL_VISIT_CASE(10) CDL_VISIT_CASE(11) CDL_VISIT_CASE(12) CDL_VISIT_CASE(13) CDL_VISIT_CASE(14)
    CDL_VISIT_CASE(15) CDL_VISIT_CASE(16) CDL_VISIT_CASE(17) CDL_VISIT_CASE(18) CDL_VISIT_CASE(19)
    CDL_VISIT_CASE(20) CDL_VISIT_CASE(21) CDL_VISIT_CASE(22) CDL_VISIT_CASE(23) CDL_VISIT_CASE(24)
    CDL_VISIT_CASE(25) CDL_VISIT_CASE(26) CDL_VISIT_CASE(27) CDL_VISIT_CASE(28) CDL_VISIT_CASE(29)
    CDL_VISIT_CASE(30) CDL_VISIT_CASE(31)
    default:
      break;
  }
  static_assert(List::size <= 32, "visit handles up to 32 ops");
  return f(op_at_t<0, List>{});
}
// clang-format on
#undef CDL_VISIT_CASE

#if defined(__CUDACC__)
// A real, addressable __device__ function for each (op, T). Taking its address forces the
// compiler to emit it out of line with the calling convention, which is the point of the
// function-pointer strategies; called directly it inlines like the functor.
template <class Op, class R, class... A>
__device__ R as_device_function([[maybe_unused]] A... a) {
  return Op{}(a...);
}
#endif

#if !defined(__CUDACC_RTC__)
// What the host needs to know about an op at run time.
struct op_info {
  std::string_view name;
  int max_ulps;             // error of one evaluation, in epsilons of the element type
  std::string_view source;  // the expression exactly as written above
};

#define CDL_OP_INFO(name, ulps, ...) op_info{#name, ulps, #__VA_ARGS__},
inline constexpr std::array map_op_catalogue{CDL_MAP_OPS(CDL_OP_INFO)};
inline constexpr std::array zip_op_catalogue{CDL_ZIP_OPS(CDL_OP_INFO)};
inline constexpr std::array point_op_catalogue{CDL_POINT_OPS(CDL_OP_INFO)};
// A semiring's source is its fused step; the identity is a value the host passes the kernel.
#define CDL_SEMIRING_INFO(name, sums, identity, step) op_info{#name, sums, #step},
inline constexpr std::array semiring_catalogue{CDL_SEMIRINGS(CDL_SEMIRING_INFO)};
#undef CDL_SEMIRING_INFO
inline constexpr std::array image_op_catalogue{CDL_IMAGE_OPS(CDL_OP_INFO)};
#undef CDL_OP_INFO

inline const op_info& info(map_op op) { return map_op_catalogue.at(static_cast<std::size_t>(op)); }
inline const op_info& info(zip_op op) { return zip_op_catalogue.at(static_cast<std::size_t>(op)); }
inline const op_info& info(point_op op) { return point_op_catalogue.at(static_cast<std::size_t>(op)); }
inline const op_info& info(semiring op) { return semiring_catalogue.at(static_cast<std::size_t>(op)); }
inline const op_info& info(image_op op) { return image_op_catalogue.at(static_cast<std::size_t>(op)); }
// The task ops' source: one template, instantiated per op id.
#define CDL_STRINGIFY_(...) #__VA_ARGS__
#define CDL_STRINGIFY(...) CDL_STRINGIFY_(__VA_ARGS__)
inline constexpr std::string_view task_op_source = CDL_STRINGIFY(CDL_TASK_OP_BODY);

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

// Host-side selection of a functor type from an op id, validated: each case is a separate
// instantiation of whatever f does with the op, which is exactly the template strategy's
// trade: speed bought with one kernel per op.
template <class List, class Id, class F>
decltype(auto) visit_checked(Id op, F&& f) {
  const int id = static_cast<int>(op);
  if (id < 0 || id >= List::size) throw std::invalid_argument("invalid op id " + std::to_string(id));
  return visit<List>(id, std::forward<F>(f));
}
// The catalogue (type list) of each op id type, for visit_op.
template <class Id>
struct catalogue_of;
template <>
struct catalogue_of<map_op> : std::type_identity<map_ops> {};
template <>
struct catalogue_of<zip_op> : std::type_identity<zip_ops> {};
template <>
struct catalogue_of<point_op> : std::type_identity<point_ops> {};
template <>
struct catalogue_of<semiring> : std::type_identity<semirings> {};
template <>
struct catalogue_of<image_op> : std::type_identity<image_ops> {};

template <class Id, class F>
decltype(auto) visit_op(Id op, F&& f) {
  return visit_checked<typename catalogue_of<Id>::type>(op, std::forward<F>(f));
}
#endif

}  // namespace cdl
