// The points workload: out = f(in) for Point{x, y}, in array-of-structs (AoS) or
// struct-of-arrays (SoA) layout (skeletons/points.cuh).
#pragma once

#include "fixture.hpp"
#include "ops.cuh"

namespace cdl {

enum class layout { aos, soa };
inline std::string_view to_string(layout l) { return l == layout::aos ? "aos" : "soa"; }

struct points_problem {
  point_op op = point_op::scale_shift;
  dtype type = dtype::f32;
  std::size_t n = 0;  // points

  std::string describe() const;
  std::size_t min_bytes() const { return 4 * n * size_of(type); }  // two coordinates in, two out
};

// What the fixture uploads, made on the host: the points in both layouts, from `seed` (xs) and
// `seed + 1` (ys), and the float64 reference in the array-of-structs layout (x, y side by side).
template <class T>
struct points_host {
  std::vector<T> aos, soa;
  std::vector<reference_value> reference;
};
template <class T>
points_host<T> make_points_host(const points_problem& p, std::uint64_t seed);

struct points_launch {
  point_op op;
  dtype type;
  bool soa;        // layout::soa
  const void* in;  // n points: interleaved x, y (aos) or n xs then n ys (soa)
  void* out;
  std::size_t n;
  cudaStream_t stream;
};
using points_launch_fn = void (*)(const points_launch&);

class points_fixture : public workload_fixture<points_fixture, points_problem, points_launch_fn, layout> {
 public:
  points_fixture(const points_problem& p, std::uint64_t seed);
  void launch(points_launch_fn fn, layout l, cudaStream_t stream) const;
  // The output is in the input's layout; reference_ holds the aos one.
  const std::vector<reference_value>& reference_for(layout l) const {
    return l == layout::aos ? reference_ : reference_soa_;
  }

 private:
  std::vector<reference_value> reference_soa_;
  device_buffer<std::byte> aos_, soa_;
};

}  // namespace cdl
