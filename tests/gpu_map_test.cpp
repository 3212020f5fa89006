// Every registered map implementation, validated element by element against the float64 CPU
// reference, for every op and element type, at sizes that hit the edges of the launch
// geometry: 0, 1, one vector, a warp minus/plus one, nine vectors (a part of a block), a
// prime-ish size (no whole vectors: the vec form falls back to scalar) and whole vectors beside
// it, and 2^24. The op-length sweep's entries too: every polynomial length, both types (float
// alone for an entry that runs no float64), every k not a multiple of the interpreter's steps a pass.
#include "common/polynomial.hpp"
#include "gpu_test.hpp"

#include <algorithm>
#include <utility>

namespace cdl {

void PrintTo(map_op op, std::ostream* os) { *os << info(op).name; }

namespace {

class MapStrategy : public gpu_param_test<entry_type_op<map_op>> {};

TEST_P(MapStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(4), std::size_t(31), std::size_t(32), std::size_t(33),
        std::size_t(36), std::size_t(1000003), std::size_t(1000004), std::size_t(1) << 24})
    for (int k : {1, 16})
      expect_matches_reference<map_fixture>(get_registry().map.at(index), map_problem{op, type, n, k},
                                            default_seed + n, n);
}
// In the order of type and op, then entry, dealt to the shards in runs: a shard's tests of one type
// and op run one after another, and their problems' inputs and references are made or read once
// (map_fixture keeps them), not once a test.
std::vector<entry_type_op<map_op>> by_type_and_op(std::vector<entry_type_op<map_op>> v) {
  std::ranges::stable_sort(
      v, {}, [](const entry_type_op<map_op>& p) { return std::pair(std::get<1>(p), std::get<2>(p)); });
  return dealt_in_runs(v);
}
INSTANTIATE_TEST_SUITE_P(Registry, MapStrategy,
                         ::testing::ValuesIn(by_type_and_op(every_entry_type_op<map_op>(get_registry().map,
                                                                                        map_op_catalogue))),
                         [](const auto& info) { return entry_type_op_name(get_registry().map, info.param); });

// What an entry refuses (17: the ops its stencils do not hold, float64) it refuses when launched,
// with the reason its refusal gives, at every size.
class MapRefusal : public gpu_test {};
TEST_F(MapRefusal, ARefusedProblemIsRefusedWhenLaunchedWithItsReason) {
  int refusals = 0;
  for (const map_entry& e : get_registry().map)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t op = 0; op < map_op_catalogue.size(); ++op) {
        const map_launch a = unlaunched(map_op(op), t, e.form);
        const std::string why = e.refusal(a);
        if (why.empty()) continue;
        ++refusals;
        try {
          e.launch(a);
          ADD_FAILURE() << e.name() << " ran what it refuses: " << why;
        } catch (const error& thrown) {
          EXPECT_EQ(std::string(thrown.what()), why) << e.name();
        }
      }
  EXPECT_GT(refusals, 0) << "no entry refuses a problem: 17 holds every op and type?";
}

class OpLength : public gpu_param_test<std::size_t> {};

TEST_P(OpLength, EveryPolynomialMatchesItsDefinitionAtEdgeSizes) {
  const length_entry& entry = get_registry().op_length.at(GetParam());
  for (int steps : op_lengths)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1000003), std::size_t(1000004)})
        for (int k : {1, 3, 5}) {
          if (t == dtype::f64 && !entry.float64) continue;
          const map_fixture f(
              {map_op::quadratic, t, n, k}, default_seed + n,
              custom_map_op{[steps](double x) { return polynomial_value(steps, x); }, steps + 2});
          const validation_result r =
              f.run_and_validate([&](const map_launch& a) { entry.launch(a, steps); }, entry.form);
          EXPECT_TRUE(r.passed) << entry.name() << " steps " << steps << " " << f.problem().describe() << ": "
                                << r.summary();
        }
}
INSTANTIATE_TEST_SUITE_P(Registry, OpLength,
                         ::testing::Range(std::size_t(0), get_registry().op_length.size()),
                         [](const auto& info) {
                           return test_name(get_registry().op_length.at(info.param).name());
                         });

}  // namespace
}  // namespace cdl
