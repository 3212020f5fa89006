// The map workload: y = f(x) elementwise, f applied k times per element (skeletons/map.cuh).
// Everything a strategy-independent caller needs: the problem, the launch arguments a
// strategy receives, the float64 CPU reference, and a fixture that holds the inputs on the device,
// the output buffer and the reference so that tests, benchmarks and demos run a strategy the same way.
#pragma once

#include "fixture.hpp"
#include "ops.cuh"

#include <functional>
#include <memory>
#include <span>

namespace cdl {

struct map_problem {
  map_op op = map_op::quadratic;
  dtype type = dtype::f32;
  std::size_t n = 0;
  int k = 1;  // intensity: evaluations of the op per element

  std::string describe() const;
  // Bytes the kernel must move at the least: x read once, y written once.
  std::size_t min_bytes() const { return 2 * n * size_of(type); }
};

// What a strategy's launch function receives. x and y point to n elements of `type`.
struct map_launch {
  map_op op;
  dtype type;
  map_form form;
  const void* x;
  void* y;
  std::size_t n;
  int k;
  cudaStream_t stream;
};

using map_launch_fn = void (*)(const map_launch&);

// A launch with no buffers: what a registry entry's refusal reads (the op and its type), asked
// with no GPU, before anything is allocated.
inline map_launch unlaunched(map_op op, dtype t, map_form form) {
  return {op, t, form, nullptr, nullptr, 0, 1, nullptr};
}

// float64 reference of map_apply for inputs of type T (arguments rounded as the device does).
template <class T>
std::vector<reference_value> map_reference(map_op op, std::span<const T> x, int k);

// An op outside the catalogue (a user's expression, compiled at run time): its float64 form for
// the reference and the error one evaluation may have, in epsilons of the element type.
struct custom_map_op {
  std::function<double(double)> reference;  // called from several threads at once
  int max_ulps;
  // Where given, each term's value and the scale its float error is relative to, in one
  // evaluation, in place of reference and the term's own magnitude (an op whose terms cancel):
  // language_op's is the program's value and magnitude.
  std::function<reference_value(double)> bounded = {};
};
namespace expr {
struct program;
}
// A program of the expression language (expression.hpp) as a custom op: its float64 value, and its magnitude
// (expr::evaluate_bounded) as each term's scale. `p` is read while the fixture is made.
custom_map_op language_op(const expr::program& p, int max_ulps = 16);

// Relative tolerance for a map problem: op accuracy (default: the catalogue's), k summed terms,
// element type.
double map_tolerance(const map_problem& p, int max_ulps);
inline double map_tolerance(const map_problem& p) { return map_tolerance(p, info(p.op).max_ulps); }

// A run-time compiled kernel launches through a closure, hence std::function.
using map_launcher = std::function<void(const map_launch&)>;

class map_fixture : public workload_fixture<map_fixture, map_problem, const map_launcher&, map_form> {
 public:
  map_fixture(const map_problem& p, std::uint64_t seed);
  // The same problem for an op outside the catalogue (p.op is then not used).
  map_fixture(const map_problem& p, std::uint64_t seed, const custom_map_op& op);
  void launch(const map_launcher& fn, map_form form, cudaStream_t stream) const;
  const std::vector<reference_value>& reference_for(map_form) const { return *kept_reference_; }

 private:
  template <class Reference>
  map_fixture(const map_problem& p, std::uint64_t seed, Reference reference, double tolerance);

  device_buffer<std::byte> x_;
  std::shared_ptr<const std::vector<reference_value>> kept_reference_;  // shared with later fixtures
};

}  // namespace cdl
