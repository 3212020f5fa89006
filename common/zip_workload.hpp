// The zip workload: z = f(x, y) elementwise (skeletons/zip.cuh); ops add and multiply.
#pragma once

#include "fixture.hpp"
#include "ops.cuh"

namespace cdl {

struct zip_problem {
  zip_op op = zip_op::add;
  dtype type = dtype::f32;
  std::size_t n = 0;

  std::string describe() const;
  std::size_t min_bytes() const { return 3 * n * size_of(type); }  // x, y read; z written
};

struct zip_launch {
  zip_op op;
  dtype type;
  map_form form;
  const void* x;
  const void* y;
  void* z;
  std::size_t n;
  cudaStream_t stream;
};
using zip_launch_fn = void (*)(const zip_launch&);

// The host side of a problem, built without a GPU: the inputs (x from `seed`, y from `seed + 1`)
// and the float64 reference. The fixture uploads it; cdl_problem writes it out for the Python peers.
template <class T>
struct zip_host {
  std::vector<T> x, y;
  std::vector<reference_value> reference;
};
template <class T>
zip_host<T> make_zip_host(const zip_problem& p, std::uint64_t seed);
double zip_tolerance(const zip_problem& p);

struct zip_inputs {
  device_buffer<std::byte> x, y;
};
using zip_fixture = fixture<zip_problem, zip_launch_fn, map_form, zip_inputs>;

}  // namespace cdl
