// What the GPU tests share: a base fixture that skips, with the reason, on a machine without a
// GPU (so a CPU-only machine reports the tests as skipped rather than passed), and the pieces of
// the parameterised tests over the registry (tests/gpu_*_test.cpp): their parameters, their names
// and the check that runs one entry on one problem.
#pragma once

#include "common/device_info.hpp"
#include "common/inputs.hpp"
#include "common/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

namespace cdl {

class gpu_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu_available(&why)) GTEST_SKIP() << why;
  }
};

template <class Param>
class gpu_param_test : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu_available(&why)) GTEST_SKIP() << why;
  }
};

// Readable parameters in test listings (gtest finds PrintTo by argument-dependent lookup; each
// test file defines it for its op types).
inline void PrintTo(dtype t, std::ostream* os) { *os << to_string(t); }

// A test name from readable parts: gtest allows letters, digits and '_' only.
inline std::string test_name(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Whether an entry refuses a problem (its op and type: a map entry's refusal, with no GPU).
inline bool refused(const map_entry& e, dtype t, map_op op) {
  return !e.refusal(unlaunched(op, t, e.form)).empty();
}
template <class Entry, class Op>
bool refused(const Entry&, dtype, Op) {
  return false;
}

// The parameters of a test over a registry list: every entry (by index) in each element type
// with each op of the workload's catalogue, but what it refuses, and their names
// ("<entry>_<type>_<op>").
template <class Op>
using entry_type_op = std::tuple<std::size_t, dtype, Op>;
template <class Op, class Entries, class Catalogue>
std::vector<entry_type_op<Op>> every_entry_type_op(const Entries& entries, const Catalogue& catalogue) {
  std::vector<entry_type_op<Op>> v;
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t op = 0; op < catalogue.size(); ++op)
        if (!refused(entries[i], t, static_cast<Op>(op))) v.emplace_back(i, t, static_cast<Op>(op));
  return v;
}
template <class Entries, class Op>
std::string entry_type_op_name(const Entries& entries, const entry_type_op<Op>& p) {
  const auto& [i, t, op] = p;
  return test_name(entries.at(i).name() + "_" + std::string(to_string(t)) + "_" + std::string(info(op).name));
}

// A parameter list laid out so that, in a sharded run, each shard's share of it is one contiguous
// run of `v`. GoogleTest deals a sharded run's tests out in turn (its i-th test to shard i mod
// GTEST_TOTAL_SHARDS, tests/CMakeLists.txt's shards), which would give every shard a few tests of
// each problem; in runs, the inputs and references a fixture keeps (map_workload.cpp) are made or
// read about once a shard rather than once a test. The same tests run, in another order.
template <class T>
std::vector<T> dealt_in_runs(const std::vector<T>& v) {
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  const std::size_t shards = total ? std::strtoull(total, nullptr, 10) : 0;
  if (shards < 2 || v.size() <= shards) return v;
  // Run c is v[begin(c), begin(c + 1)); the first v.size() % shards runs are one longer, so that
  // position r * shards + c holds run c's r-th test and goes to one shard for every r.
  const std::size_t base = v.size() / shards, longer = v.size() % shards;
  const auto begin = [&](std::size_t c) { return c * base + std::min(c, longer); };
  std::vector<T> out;
  out.reserve(v.size());
  for (std::size_t r = 0; r <= base; ++r)
    for (std::size_t c = 0; c < shards && begin(c) + r < begin(c + 1); ++c) out.push_back(v[begin(c) + r]);
  return out;
}

// Runs `entry` on a new Fixture of `p` (inputs from `seed`) and expects each of the `values`
// outputs to match the float64 reference.
template <class Fixture, class Entry, class Problem>
void expect_matches_reference(const Entry& entry, const Problem& p, std::uint64_t seed, std::size_t values) {
  const validation_result r = Fixture(p, seed).run_and_validate(entry.launch, entry.form);
  EXPECT_TRUE(r.passed) << entry.name() << " " << p.describe() << ": " << r.summary();
  EXPECT_EQ(r.checked, values);
}

}  // namespace cdl
