// Every registered zip and points implementation, validated element by element against the
// float64 CPU reference, for every op, element type, form and layout, at edge sizes.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "gpu_test.hpp"

#include <tuple>

namespace cdl {

void PrintTo(dtype t, std::ostream* os) { *os << to_string(t); }
void PrintTo(zip_op op, std::ostream* os) { *os << info(op).name; }
void PrintTo(point_op op, std::ostream* os) { *os << info(op).name; }
template <class Op>
std::string param_label(std::size_t index, const std::string& entry, dtype t, Op op) {
  std::string name = entry + "_" + std::string(to_string(t)) + "_" + std::string(info(op).name);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name + "_" + std::to_string(index);
}

namespace {

const std::size_t edge_sizes[] = {0, 1, 31, 33, 1000003, (std::size_t(1) << 20) + 3};

using zip_param = std::tuple<std::size_t, dtype, zip_op>;
class ZipStrategy : public gpu_param_test<zip_param> {};

TEST_P(ZipStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  const zip_entry& entry = get_registry().zip.at(index);
  for (std::size_t n : edge_sizes) {
    const zip_problem p{op, type, n};
    const validation_result r = zip_fixture(p, default_seed + n).run_and_validate(entry.launch, entry.form);
    EXPECT_TRUE(r.passed) << entry.name() << " " << p.describe() << ": " << r.summary();
    EXPECT_EQ(r.checked, n);
  }
}

std::vector<zip_param> zip_params() {
  std::vector<zip_param> v;
  for (std::size_t i = 0; i < get_registry().zip.size(); ++i)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t op = 0; op < zip_op_catalogue.size(); ++op)
        v.emplace_back(i, t, static_cast<zip_op>(op));
  return v;
}
std::string zip_name(const ::testing::TestParamInfo<zip_param>& info) {
  const auto [i, t, op] = info.param;
  return param_label(i, get_registry().zip.at(i).name(), t, op);
}
INSTANTIATE_TEST_SUITE_P(Registry, ZipStrategy, ::testing::ValuesIn(zip_params()), zip_name);

using points_param = std::tuple<std::size_t, dtype, point_op>;
class PointsStrategy : public gpu_param_test<points_param> {};

TEST_P(PointsStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  const points_entry& entry = get_registry().points.at(index);
  for (std::size_t n : edge_sizes) {
    const points_problem p{op, type, n};
    const validation_result r =
        points_fixture(p, default_seed + n).run_and_validate(entry.launch, entry.form);
    EXPECT_TRUE(r.passed) << entry.name() << " " << p.describe() << ": " << r.summary();
    EXPECT_EQ(r.checked, 2 * n);
  }
}

std::vector<points_param> points_params() {
  std::vector<points_param> v;
  for (std::size_t i = 0; i < get_registry().points.size(); ++i)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t op = 0; op < point_op_catalogue.size(); ++op)
        v.emplace_back(i, t, static_cast<point_op>(op));
  return v;
}
std::string points_name(const ::testing::TestParamInfo<points_param>& info) {
  const auto [i, t, op] = info.param;
  return param_label(i, get_registry().points.at(i).name(), t, op);
}
INSTANTIATE_TEST_SUITE_P(Registry, PointsStrategy, ::testing::ValuesIn(points_params()), points_name);

}  // namespace
}  // namespace cdl
