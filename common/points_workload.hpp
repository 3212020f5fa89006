// The points workload: out = f(in) for Point{x, y}, in array-of-structs (AoS) or
// struct-of-arrays (SoA) layout (skeletons/points.cuh).
#pragma once

#include "device_buffer.hpp"
#include "ops.cuh"
#include "types.hpp"
#include "validation.hpp"

#include <cstdint>
#include <string>
#include <vector>

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

class points_fixture {
 public:
  points_fixture(const points_problem& p, std::uint64_t seed);
  const points_problem& problem() const { return problem_; }
  void launch(points_launch_fn fn, layout l, cudaStream_t stream) const;
  validation_result run_and_validate(points_launch_fn fn, layout l, cudaStream_t stream = nullptr) const;

 private:
  points_problem problem_;
  std::vector<reference_value> reference_aos_, reference_soa_;
  device_buffer<std::byte> aos_, soa_;
  mutable device_buffer<std::byte> out_;  // scratch written by every run; inputs and reference stay const
};

}  // namespace cdl
