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
  r.first_launch_ms = 12.5;
  r.env.device.name = "NVIDIA H100 80GB HBM3";
  r.env.device.l2_bytes = 52428800;
  r.env.copy_bandwidth_gbs = 2990;
  r.env.git_revision = "abc123";
  return r;
}

std::filesystem::path temp_file(const char* name) {
  return std::filesystem::temp_directory_path() / ("cdl_test_" + std::to_string(::getpid()) + "_" + name);
}

// A benchmark's name and fields come from the same parts, so a reader of the fields sees what the
// name says: every workload's form of describe(), an entry with and without a variant or a form.
TEST(BenchmarkId, NameAndFieldsSayTheSame) {
  const benchmark_id map = identify("04_function_pointer.table/vec", "map op=sine type=f32 n=4 k=16");
  EXPECT_EQ(map.name, "map/04_function_pointer.table/vec/op:sine/type:f32/n:4/k:16");
  EXPECT_EQ(map.fields, nlohmann::json({{"workload", "map"},
                                        {"strategy", "04_function_pointer"},
                                        {"variant", "table"},
                                        {"form", "vec"},
                                        {"op", "sine"},
                                        {"type", "f32"},
                                        {"n", "4"},
                                        {"k", "16"}}));
  const benchmark_id image = identify("09_shared_memory/tiled", "image op=box_blur 3840x2160 r=8");
  EXPECT_EQ(image.name, "image/09_shared_memory/tiled/op:box_blur/3840x2160/r:8");
  EXPECT_EQ(image.fields["shape"], "3840x2160");
  EXPECT_FALSE(image.fields.contains("variant"));
  const benchmark_id copy = identify("cudaMemcpy", "copy bytes=1024");
  EXPECT_EQ(copy.name, "copy/cudaMemcpy/bytes:1024");
  EXPECT_FALSE(copy.fields.contains("form"));
  EXPECT_EQ(identify("empty_kernel/none", "flush").name, "flush/empty_kernel/none");
  EXPECT_EQ(identify("copy/memset", "flush bytes=64").name, "flush/copy/memset/bytes:64");
  EXPECT_EQ(identify("parts/sort", "tasks layout=random distinct=32 n=8").name,
            "tasks/parts/sort/layout:random/distinct:32/n:8");
  const benchmark_id stream =
      identify("10_tiered_dispatch.expression/vec", "tiered op=quadratic type=f32 n=1024 k=1 launches=100");
  EXPECT_EQ(stream.name,
            "tiered/10_tiered_dispatch.expression/vec/op:quadratic/type:f32/n:1024/k:1/launches:100");
  EXPECT_EQ(stream.fields["launches"], "100");
  EXPECT_EQ(identify("numba.op_switch.hoisted/scalar", "map op=sine type=f32 n=4 k=1").fields["variant"],
            "op_switch.hoisted");
}

// cdl_run --json writes cdl_bench's results format: the aggregates the report reads, each with the
// fields its name says; a record that failed validation is an error entry, never a time.
TEST(BenchmarkId, CdlRunsRecordsAreTheResultsFormat) {
  run_record r = sample_record();
  const nlohmann::json entries = benchmark_entries(r);
  ASSERT_EQ(entries.size(), 3u);
  const nlohmann::json& median = entries[0];
  EXPECT_EQ(median["run_name"], "map/04_function_pointer.table/vec/op:sine/type:f32/n:16777216/k:16");
  EXPECT_EQ(median["aggregate_name"], "median");
  EXPECT_DOUBLE_EQ(median["real_time"].get<double>(), r.timing.median_ms * 1e3);
  EXPECT_EQ(median["time_unit"], "us");
  EXPECT_EQ(median["frac_copy"], 0.97);
  // Every field of every aggregate, from the record's repetitions {1.0, 1.1, 0.9} ms, worked out:
  // the median 1.0, the least 0.9, the most 1.1; p10 and p90 by linear interpolation between the
  // sorted three, at positions 0.2 and 1.8: 0.9 + 0.2 * 0.1 and 1.0 + 0.8 * 0.1.
  const double expected_us[] = {1000, 900, 1100};
  const char* aggregates[] = {"median", "min", "max"};
  for (std::size_t i = 0; i < 3; ++i) {
    const nlohmann::json& e = entries[i];
    EXPECT_EQ(e["aggregate_name"], aggregates[i]);
    EXPECT_EQ(e["name"], "map/04_function_pointer.table/vec/op:sine/type:f32/n:16777216/k:16_" +
                             std::string(aggregates[i]));
    EXPECT_EQ(e["run_name"], median["run_name"]);
    EXPECT_EQ(e["run_type"], "aggregate");
    EXPECT_NEAR(e["real_time"].get<double>(), expected_us[i], 1e-9) << aggregates[i];
    EXPECT_EQ(e["repetitions"], 3);
    EXPECT_EQ(e["GB/s"], 2900.5);
    EXPECT_EQ(e["frac_copy"], 0.97);
    EXPECT_EQ(e["max_rel_err"], 2.5e-7);
    EXPECT_NEAR(e["p10_us"].get<double>(), 920, 1e-9);
    EXPECT_NEAR(e["p90_us"].get<double>(), 1080, 1e-9);
    EXPECT_EQ(e["first_launch_ms"], 12.5);
    EXPECT_EQ(e["label"], median["label"]);
  }
  const nlohmann::json fields = nlohmann::json::parse(median["label"].get<std::string>());
  EXPECT_EQ(fields["strategy"], "04_function_pointer");
  EXPECT_EQ(fields["variant"], "table");
  EXPECT_EQ(fields["n"], "16777216");
  const nlohmann::json doc = results_document({r}, r.env);
  EXPECT_EQ(doc["context"]["git_revision"], "abc123");
  EXPECT_EQ(nlohmann::json::parse(doc["context"]["cdl_environment"].get<std::string>())["device"]["name"],
            "NVIDIA H100 80GB HBM3");
  r.validation.passed = false;
  const nlohmann::json failed = benchmark_entries(r);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(failed[0]["error_occurred"].get<bool>());
  EXPECT_FALSE(failed[0].contains("real_time"));
  r.problem["op"] = "expression";
  r.problem["expression"] = "x * x + 1";
  const nlohmann::json users = nlohmann::json::parse(benchmark_entries(r)[0]["label"].get<std::string>());
  EXPECT_EQ(users["op"], "expression");
  EXPECT_EQ(users["expression"], "x * x + 1");
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
