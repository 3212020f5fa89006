// Every registered map and zip implementation with pointers one element past an aligned
// allocation (4 bytes for float, 8 for double: never 16-byte aligned), which is what a caller
// gets from a sub-range of an array. The vec form's 16-byte loads would fault or read the wrong
// elements there: the launch must fall back to the scalar form and still write exactly the n
// elements asked for, no more (the elements on either side keep their poison).
#include "common/skeletons/elementwise.cuh"
#include "gpu_test.hpp"

#include <cstring>
#include <tuple>

namespace cdl {
namespace {

// Whole vectors of either type: only the pointers, one element off, send vec to scalar.
constexpr std::size_t misaligned_n = (std::size_t(1) << 20) + 4;

// Inputs at offset 1 of their buffers (x, and y for zip); the output z at offset 1 of n + 2
// elements of poison (all bits set: a NaN, so an unwritten element fails validation).
template <class T>
struct misaligned_buffers {
  device_buffer<T> x, y, z;
  explicit misaligned_buffers(const std::vector<std::vector<T>>& inputs)
      : x(misaligned_n + 1), y(misaligned_n + 1), z(misaligned_n + 2) {
    device_buffer<T>* in[] = {&x, &y};
    for (std::size_t i = 0; i < inputs.size(); ++i)
      CDL_CUDA_CHECK(
          cudaMemcpy(in[i]->data() + 1, inputs[i].data(), misaligned_n * sizeof(T), cudaMemcpyHostToDevice));
    CDL_CUDA_CHECK(cudaMemset(z.data(), 0xff, z.bytes()));
  }
  // Checks the two guard elements and validates the n between them.
  void expect_output(const std::vector<reference_value>& reference, double tolerance,
                     const std::string& what) {
    CDL_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<T> out = z.to_host();
    for (std::size_t guard : {std::size_t(0), misaligned_n + 1}) {
      unsigned char bytes[sizeof(T)];
      std::memcpy(bytes, &out[guard], sizeof(T));
      for (unsigned char b : bytes)
        EXPECT_EQ(b, 0xff) << what << ": element " << guard << " (outside the output) was written";
    }
    const validation_result r =
        validate<T>(std::span<const T>(out).subspan(1, misaligned_n), reference, tolerance);
    EXPECT_TRUE(r.passed) << what << ": " << r.summary();
    EXPECT_EQ(r.checked, misaligned_n);
  }
};

// Falls-back check: the launch geometry that a vec launch asks for on these buffers.
template <class T>
void expect_falls_back(const misaligned_buffers<T>& b) {
  const auto g = skeleton::elementwise_launch_geometry(map_form::vec, misaligned_n, sizeof(T),
                                                       {b.x.data() + 1, b.y.data() + 1, b.z.data() + 1});
  EXPECT_NE(g.form, map_form::vec) << "vec form chosen for pointers that are not 16-byte aligned";
}

// A parameter: the workload ("map" or "zip"), the entry's index in its list, the element type.
using misaligned_param = std::tuple<std::string, std::size_t, dtype>;
class Misaligned : public gpu_param_test<misaligned_param> {};

TEST_P(Misaligned, FallsBackAndWritesExactlyTheRange) {
  const auto& [workload, index, type] = GetParam();
  visit_dtype(type, [&]<class T>(T) {
    if (workload == "map") {
      const map_entry& entry = get_registry().map.at(index);
      const map_problem p{map_op::quadratic, type, misaligned_n, 1};
      const std::vector<T> x = uniform_inputs<T>(misaligned_n, default_seed);
      misaligned_buffers<T> b({x});
      expect_falls_back(b);
      entry.launch({p.op, type, entry.form, b.x.data() + 1, b.z.data() + 1, misaligned_n, p.k, nullptr});
      b.expect_output(map_reference<T>(p.op, x, p.k), map_tolerance(p), entry.name() + " " + p.describe());
    } else {
      const zip_problem p{zip_op::add, type, misaligned_n};
      const zip_entry& entry = get_registry().zip.at(index);
      const zip_host<T> h = make_zip_host<T>(p, default_seed);
      misaligned_buffers<T> b({h.x, h.y});
      expect_falls_back(b);
      entry.launch(
          {p.op, type, entry.form, b.x.data() + 1, b.y.data() + 1, b.z.data() + 1, misaligned_n, nullptr});
      b.expect_output(h.reference, zip_tolerance(p), entry.name() + " " + p.describe());
    }
  });
}

std::vector<misaligned_param> params() {
  std::vector<misaligned_param> v;
  for (dtype t : {dtype::f32, dtype::f64}) {
    for (std::size_t i = 0; i < get_registry().map.size(); ++i)
      if (!refused(get_registry().map[i], t, map_op::quadratic)) v.emplace_back("map", i, t);
    for (std::size_t i = 0; i < get_registry().zip.size(); ++i) v.emplace_back("zip", i, t);
  }
  return v;
}
std::string param_name(const ::testing::TestParamInfo<misaligned_param>& info) {
  const auto& [workload, i, t] = info.param;
  const std::string entry =
      workload == "map" ? get_registry().map.at(i).name() : get_registry().zip.at(i).name();
  return test_name(workload + "_" + entry + "_" + std::string(to_string(t)));
}
INSTANTIATE_TEST_SUITE_P(Registry, Misaligned, ::testing::ValuesIn(params()), param_name);

}  // namespace
}  // namespace cdl
