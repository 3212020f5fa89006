// The registry is the contract between strategies, tests and benchmarks; it must be buildable
// and complete without a GPU.
#include "common/check.hpp"
#include "common/device_info.hpp"
#include "common/registry.hpp"

#include <gtest/gtest.h>

#include <set>

namespace cdl {
namespace {

// 00 to 07 serve every workload; the later strategies the workloads their mechanism fits (each
// file's header says why).
TEST(Registry, EveryStrategyServesEveryWorkload) {
  const auto strategies = [](const auto& entries) {
    std::set<std::string> s;
    for (const auto& e : entries) s.insert(e.strategy);
    return s;
  };
  const std::set<std::string> want = {"00_inline",    "01_template_functor", "02_device_lambda",
                                      "03_switch",    "04_function_pointer", "05_virtual",
                                      "06_nvrtc_jit", "07_jit_lto"};
  // 12's variant holds an op, not an id: every workload but tasks, whose records hold an id.
  std::set<std::string> uniform = want;
  uniform.insert("12_variant_visit");
  // 08's language and 16's interpreter of it, 10's two tiers, 13's plugins and 17's patched
  // kernels are the map's
  std::set<std::string> map_only = uniform;
  map_only.insert({"08_expression_jit", "10_tiered_dispatch", "13_precompiled_plugin", "14_graph_switch",
                   "15_device_launch", "16_interpreter", "17_copy_and_patch"});
  // 14's nodes and 15's device launches choose kernels: the map's op, and the tasks' op groups.
  std::set<std::string> tasks = want;
  tasks.insert({"14_graph_switch", "15_device_launch"});
  EXPECT_EQ(strategies(get_registry().map), map_only);
  EXPECT_EQ(strategies(get_registry().zip), uniform);
  EXPECT_EQ(strategies(get_registry().points), uniform);
  EXPECT_EQ(strategies(get_registry().image), uniform);
  EXPECT_EQ(strategies(get_registry().tasks), tasks);
  EXPECT_EQ(strategies(get_registry().matmul), uniform);
  // The objects workload: 11's forms of the virtual call, and 12's objects by value.
  EXPECT_EQ(strategies(get_registry().objects),
            (std::set<std::string>{"11_type_from_address", "12_variant_visit"}));
  for (const tasks_entry& e :
       get_registry().tasks)  // templates, lambdas, nodes and device launches group by op
    EXPECT_EQ(e.form != tasks_form::per_element,
              e.strategy == "01_template_functor" || e.strategy == "02_device_lambda" ||
                  e.strategy == "14_graph_switch" || e.strategy == "15_device_launch");
  EXPECT_EQ(get_registry().points.front().name(), "00_inline/aos");
}

TEST(Registry, ListsTheFirstSliceInBothForms) {
  std::set<std::string> names;
  for (const map_entry& e : get_registry().map) {
    EXPECT_NE(e.launch, nullptr) << e.name();
    EXPECT_TRUE(names.insert(e.name()).second) << "duplicate entry " << e.name();
  }
  for (const char* want :
       {"00_inline/scalar", "00_inline/vec", "01_template_functor/scalar", "01_template_functor/vec",
        "04_function_pointer.symbol/scalar", "04_function_pointer.symbol/vec",
        "04_function_pointer.table/scalar", "04_function_pointer.table/vec"})
    EXPECT_TRUE(names.count(want)) << want << " is not registered";
}

TEST(Registry, IsInReadingOrder) {
  const auto& map = get_registry().map;
  for (std::size_t i = 1; i < map.size(); ++i) EXPECT_LE(map[i - 1].strategy, map[i].strategy);
}

TEST(Registry, FindsEntriesByNameAndRejectsUnknownOnes) {
  EXPECT_EQ(find_map_entry("01_template_functor/vec").form, map_form::vec);
  try {
    find_map_entry("99_magic/vec");
    FAIL() << "unknown strategy accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("00_inline/scalar"), std::string::npos)
        << "message should list entries";
  }
}

// The routes a user's op takes, each registered by its strategy, in reading order; each refuses with
// its reason what it cannot run, with no GPU.
TEST(Registry, TheRoutesOfAUsersOpAreRegisteredByTheirStrategies) {
  std::vector<std::string> names;
  for (const op_route& r : get_registry().routes) names.push_back(r.name());
  EXPECT_EQ(names, (std::vector<std::string>{"06_nvrtc_jit", "06_nvrtc_jit.fast_compile", "07_jit_lto",
                                             "08_expression_jit", "08_expression_jit.baseline",
                                             "16_interpreter", "17_copy_and_patch"}));
  for (const op_route& r : get_registry().routes) {
    EXPECT_EQ(r.language, r.strategy >= "08") << r.name();
    EXPECT_NE(r.launch, nullptr) << r.name();
    EXPECT_NE(r.prepare, nullptr) << r.name();
  }
  const jit::op_text plain{"user", "x * x + 2 * x + 1"};
  for (const op_route& r : get_registry().routes) {  // 17 asks the GPU whether its stencils are its
    if (r.strategy != "17_copy_and_patch" || gpu_available()) {
      EXPECT_EQ(r.refusal(plain, dtype::f32, map_form::vec), "") << r.name();
    }
  }
  std::string many = "x";  // more instructions than the interpreter holds
  for (int i = 0; i < 70; ++i) many = "sin(" + many + ")";
  EXPECT_NE(find_route("16_interpreter").refusal({"user", many}, dtype::f32, map_form::vec), "");
  EXPECT_NE(find_route("17_copy_and_patch").refusal(plain, dtype::f64, map_form::vec).find("16_interpreter"),
            std::string::npos);
  try {
    find_route("99_magic");
    FAIL() << "an unknown route found";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("17_copy_and_patch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cdl
