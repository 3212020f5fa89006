// Every registered map implementation, validated element by element against the float64 CPU
// reference, for every op and element type, at sizes that hit the edges of the launch
// geometry: 0, 1, a warp minus/plus one, a prime-ish size with a vector tail, and 2^24.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "gpu_test.hpp"

#include <tuple>

namespace cdl {
namespace {

using map_param = std::tuple<std::size_t, dtype, map_op>;  // entry index, type, op

}  // namespace

// Readable parameters in test listings (gtest finds these by argument-dependent lookup).
void PrintTo(dtype t, std::ostream* os);  // gpu_elementwise_test.cu
void PrintTo(map_op op, std::ostream* os) { *os << info(op).name; }

namespace {

class MapStrategy : public gpu_param_test<map_param> {};

TEST_P(MapStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  const map_entry& entry = get_registry().map.at(index);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33),
                        std::size_t(1000003), (std::size_t(1) << 20) + 3, std::size_t(1) << 24}) {
    for (int k : {1, 16}) {
      const map_problem p{op, type, n, k};
      const map_fixture fixture(p, default_seed + n);
      const validation_result r = fixture.run_and_validate(entry.launch, entry.form);
      EXPECT_TRUE(r.passed) << entry.name() << " " << p.describe() << ": " << r.summary();
      EXPECT_EQ(r.checked, n);
    }
  }
}

std::vector<map_param> all_map_params() {
  std::vector<map_param> params;
  for (std::size_t i = 0; i < get_registry().map.size(); ++i)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t op = 0; op < map_op_catalogue.size(); ++op)
        params.emplace_back(i, t, static_cast<map_op>(op));
  return params;
}

std::string param_name(const ::testing::TestParamInfo<map_param>& info) {
  const auto [index, type, op] = info.param;
  std::string name = get_registry().map.at(index).name() + "_" + std::string(to_string(type)) + "_" +
                     std::string(cdl::info(op).name);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, MapStrategy, ::testing::ValuesIn(all_map_params()), param_name);

}  // namespace
}  // namespace cdl
