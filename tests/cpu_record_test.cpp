// Result records: JSON round trip, atomic writes, and clear errors for bad files.
#include "common/check.hpp"
#include "common/record.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace cdl {
namespace {

run_record sample_record() {
  run_record r;
  r.strategy = "04_function_pointer";
  r.variant = "table";
  r.form = "vec";
  r.workload = "map";
  r.problem = {{"op", "sine"}, {"type", "f32"}, {"n", 1u << 24}, {"k", 16}};
  r.validation = {true, 16777216, 0, -1, 0, 0, 1.5e-7, 2.5e-7, 1.1e-5};
  r.timing = timing_stats::of({1.0, 1.1, 0.9});
  r.bytes = 134217728;
  r.bandwidth_gbs = 2900.5;
  r.fraction_of_copy = 0.97;
  r.env.device.name = "NVIDIA H100 80GB HBM3";
  r.env.device.l2_bytes = 52428800;
  r.env.copy_bandwidth_gbs = 2990;
  r.env.git_revision = "abc123";
  return r;
}

std::filesystem::path temp_file(const char* name) {
  return std::filesystem::temp_directory_path() / ("cdl_test_" + std::to_string(::getpid()) + "_" + name);
}

TEST(Record, JsonRoundTrip) {
  const run_record a = sample_record();
  const nlohmann::json j = a;
  const run_record b = j.get<run_record>();
  EXPECT_EQ(nlohmann::json(b), j);
  EXPECT_EQ(b.strategy, a.strategy);
  EXPECT_EQ(b.problem["n"], 1u << 24);
  EXPECT_EQ(b.validation.checked, a.validation.checked);
  EXPECT_DOUBLE_EQ(b.timing.median_ms, 1.0);
  EXPECT_EQ(b.env.device.name, a.env.device.name);
  EXPECT_EQ(j.at("env").at("device").at("l2_bytes"), 52428800);
}

TEST(Record, AtomicWriteThenRead) {
  const auto path = temp_file("record.json");
  write_json_atomic(path, nlohmann::json(sample_record()));
  EXPECT_EQ(read_json_file(path).get<run_record>().bandwidth_gbs, 2900.5);
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))
    EXPECT_EQ(e.path().string().find(path.string() + ".tmp"), std::string::npos)
        << "temporary file left behind";
  std::filesystem::remove(path);
}

TEST(Record, MalformedFileGivesAClearError) {
  const auto path = temp_file("bad.json");
  std::ofstream(path) << "{\"strategy\": \"00_inline\", ";  // truncated
  try {
    read_json_file(path);
    FAIL() << "malformed file accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(Record, MissingFileGivesAClearError) {
  EXPECT_THROW(read_json_file(temp_file("does_not_exist.json")), error);
}

TEST(Record, ForeignJsonIsRejectedWhenReadAsARecord) {
  EXPECT_THROW(nlohmann::json({{"benchmarks", nlohmann::json::array()}}).get<run_record>(),
               nlohmann::json::exception);
}

}  // namespace
}  // namespace cdl
