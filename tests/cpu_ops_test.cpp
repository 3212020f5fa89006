// The op catalogue and the CPU reference: the definitions every other test trusts.
#include "common/map_workload.hpp"
#include "common/skeletons/map.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace cdl {
namespace {

TEST(Ops, FunctorsComputeTheirFormulas) {
  EXPECT_DOUBLE_EQ(ops::quadratic{}(0.5), 2.25);
  EXPECT_DOUBLE_EQ(ops::square{}(3.0), 9.0);
  EXPECT_DOUBLE_EQ(ops::sine{}(0.5), std::sin(0.5));
  EXPECT_DOUBLE_EQ(ops::exp_sin_cos{}(0.7), std::exp(std::sin(0.7) * std::cos(0.7)));
  EXPECT_DOUBLE_EQ(ops::threshold{}(0.7), 1.4);
  EXPECT_DOUBLE_EQ(ops::threshold{}(0.3), 0.15);
  EXPECT_DOUBLE_EQ(ops::add{}(1.5, 2.0), 3.5);
  EXPECT_DOUBLE_EQ(ops::multiply{}(1.5, 2.0), 3.0);
}

TEST(Ops, FloatStaysFloat) {
  // The catalogue's math overloads keep float arithmetic in float (no silent promotion).
  static_assert(std::is_same_v<decltype(ops::sine{}(1.0f)), float>);
  static_assert(std::is_same_v<decltype(ops::exp_sin_cos{}(1.0f)), float>);
  EXPECT_NEAR(ops::exp_sin_cos{}(0.9f), std::exp(std::sin(0.9) * std::cos(0.9)), 1e-6);
}

TEST(Ops, SourceTextIsTheDefinition) {
  // The JIT strategies compile this text; it must be the expression the functor runs.
  EXPECT_EQ(info(map_op::quadratic).source, "x * x + T(2) * x + T(1)");
  EXPECT_EQ(info(map_op::sine).source, "sin(x)");
  EXPECT_EQ(info(zip_op::multiply).source, "x * y");
  EXPECT_EQ(map_op_catalogue.size(), 5u);
  EXPECT_EQ(zip_op_catalogue.size(), 2u);
}

TEST(Ops, ParseNamesAndRejectUnknownOnes) {
  EXPECT_EQ(parse_map_op("threshold"), map_op::threshold);
  EXPECT_EQ(parse_zip_op("add"), zip_op::add);
  try {
    parse_map_op("cube");
    FAIL() << "unknown op accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("quadratic"), std::string::npos) << "message should list valid ops";
  }
}

TEST(Ops, VisitOpSelectsTheFunctorForAnId) {
  for (std::size_t i = 0; i < map_op_catalogue.size(); ++i) {
    const auto op = static_cast<map_op>(i);
    const double via_visit = visit_op(op, [](auto f) { return f(0.8); });
    double direct = 0;
    switch (op) {
      case map_op::quadratic: direct = ops::quadratic{}(0.8); break;
      case map_op::square: direct = ops::square{}(0.8); break;
      case map_op::sine: direct = ops::sine{}(0.8); break;
      case map_op::exp_sin_cos: direct = ops::exp_sin_cos{}(0.8); break;
      case map_op::threshold: direct = ops::threshold{}(0.8); break;
    }
    EXPECT_EQ(via_visit, direct) << info(op).name;
  }
}

TEST(MapReference, SumsKEvaluationsAtShiftedArguments) {
  const std::vector<float> x = {0.3f, 1.1f};
  const auto ref = map_reference<float>(map_op::quadratic, x, 3);
  for (std::size_t i = 0; i < x.size(); ++i) {
    double want = 0;
    for (int j = 0; j < 3; ++j) want += ops::quadratic{}(double(x[i] + float(j) / 4096.0f));
    EXPECT_DOUBLE_EQ(ref[i].value, want);
    EXPECT_DOUBLE_EQ(ref[i].scale, want);  // all terms positive
  }
}

TEST(MapReference, ArgumentsAreExactlyTheDevicesArguments) {
  // j * delta is exact and x + j*delta rounds once, so host and device agree bit for bit,
  // which keeps the discontinuous threshold op on the same side of 0.5 in both.
  const float x = 0.49990f;
  for (int j = 0; j < 256; ++j) {
    const float a = map_arg(x, j);
    const double exact = double(x) + double(j) / 4096.0;
    EXPECT_EQ(a, float(exact)) << j;
  }
}

TEST(MapReference, KOneIsTheOpItself) {
  const std::vector<double> x = {0.25, 0.5, 1.0, 1.7};
  const auto ref = map_reference<double>(map_op::threshold, x, 1);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(ref[i].value, ops::threshold{}(x[i]));
}

TEST(MapProblem, CountsTheBytesAKernelMustMove) {
  EXPECT_EQ((map_problem{map_op::square, dtype::f32, 1000, 7}.min_bytes()), 8000u);
  EXPECT_EQ((map_problem{map_op::square, dtype::f64, 1000, 1}.min_bytes()), 16000u);
}

}  // namespace
}  // namespace cdl

namespace cdl {
namespace {

TEST(Semirings, StepsAndIdentities) {
  EXPECT_DOUBLE_EQ(ops::plus_times{}(1.0, 2.0, 3.0), 7.0);
  EXPECT_DOUBLE_EQ(ops::min_plus{}(5.0, 1.0, 2.0), 3.0);
  EXPECT_DOUBLE_EQ(ops::min_plus{}(2.0, 1.0, 2.0), 2.0);
  EXPECT_DOUBLE_EQ(ops::max_times{}(1.0, 2.0, 3.0), 6.0);
  EXPECT_EQ(ops::plus_times::identity<double>(), 0.0);
  EXPECT_TRUE(std::isinf(ops::min_plus::identity<float>()) && ops::min_plus::identity<float>() > 0);
  EXPECT_TRUE(std::isinf(ops::max_times::identity<double>()) && ops::max_times::identity<double>() < 0);
}

TEST(ImageOps, ClampAtTheBorderAndComputeTheirFilters) {
  const std::vector<double> px = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // 3 x 3
  const image_view<double> img{px.data(), 3, 3};
  EXPECT_DOUBLE_EQ(img.at(-5, -5), 1);
  EXPECT_DOUBLE_EQ(img.at(7, 1), 6);
  EXPECT_DOUBLE_EQ(ops::box_blur{}(img, 1, 1, 1), 5);
  EXPECT_DOUBLE_EQ(ops::box_blur{}(img, 1, 1, 0), 5);
  EXPECT_DOUBLE_EQ(ops::invert{}(img, 0, 0, 1), 0);
  EXPECT_DOUBLE_EQ(ops::sharpen{}(img, 1, 1, 1), 5 * 5 - 4 - 6 - 2 - 8);
  // A linear ramp: gx = 8 (columns step 1), gy = 24 (rows step 3).
  EXPECT_DOUBLE_EQ(ops::sobel{}(img, 1, 1, 1), std::sqrt(8.0 * 8.0 + 24.0 * 24.0));
}

TEST(TaskOps, AreDistinctAndMatchTheirSource) {
  EXPECT_EQ(task_ops::size, 32);
  EXPECT_DOUBLE_EQ(ops::task_op<5>{}(1.0, 0.5, 0.25), 1.25);  // two multiply-adds, + 5/8
  std::set<double> values;
  for (int i = 0; i < task_op_count; ++i)
    values.insert(visit<task_ops>(i, [](auto op) { return op(0.9, 0.7, 0.2); }));
  EXPECT_EQ(values.size(), std::size_t(task_op_count));
  EXPECT_NE(task_op_source.find("acc * p1 + p2"), std::string_view::npos);
}

}  // namespace
}  // namespace cdl
