// Every registered zip and points implementation, validated element by element against the
// float64 CPU reference, for every op, element type, form and layout, at edge sizes.
#include "gpu_test.hpp"

namespace cdl {

void PrintTo(zip_op op, std::ostream* os) { *os << info(op).name; }
void PrintTo(point_op op, std::ostream* os) { *os << info(op).name; }

namespace {

// Partial blocks and warps; sizes of whole vectors (4, 36: nine of them, 2^20 + 4) and sizes
// without (1, 31, 33, 1000003), where the vec form falls back to scalar.
const std::size_t edge_sizes[] = {0, 1, 4, 31, 33, 36, 1000003, (std::size_t(1) << 20) + 4};

class ZipStrategy : public gpu_param_test<entry_type_op<zip_op>> {};

TEST_P(ZipStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  for (std::size_t n : edge_sizes)
    expect_matches_reference<zip_fixture>(get_registry().zip.at(index), zip_problem{op, type, n},
                                          default_seed + n, n);
}
INSTANTIATE_TEST_SUITE_P(Registry, ZipStrategy,
                         ::testing::ValuesIn(every_entry_type_op<zip_op>(get_registry().zip,
                                                                         zip_op_catalogue)),
                         [](const auto& info) { return entry_type_op_name(get_registry().zip, info.param); });

class PointsStrategy : public gpu_param_test<entry_type_op<point_op>> {};

TEST_P(PointsStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  for (std::size_t n : edge_sizes)  // two coordinates a point
    expect_matches_reference<points_fixture>(get_registry().points.at(index), points_problem{op, type, n},
                                             default_seed + n, 2 * n);
}
INSTANTIATE_TEST_SUITE_P(
    Registry, PointsStrategy,
    ::testing::ValuesIn(every_entry_type_op<point_op>(get_registry().points, point_op_catalogue)),
    [](const auto& info) { return entry_type_op_name(get_registry().points, info.param); });

}  // namespace
}  // namespace cdl
