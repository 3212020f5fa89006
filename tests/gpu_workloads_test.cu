// Every registered image, tasks and matmul implementation, validated element by element
// against its float64 CPU reference at the edge sizes: images 1x1, 17x3, 1920x1080 (and a
// single row and column); task arrays of 0, 1, 31, 33 and 2^20 + 3 elements in every layout
// with 1, 2, 7 and 32 distinct ops; matrices 1, 33, 257 and a non-square shape.
#include "common/inputs.hpp"
#include "common/registry.hpp"
#include "gpu_test.hpp"

#include <tuple>

namespace cdl {
namespace {

std::string sanitize(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class ImageStrategy : public gpu_param_test<std::tuple<std::size_t, image_op>> {};

TEST_P(ImageStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, op] = GetParam();
  const image_entry& entry = get_registry().image.at(index);
  const int sizes[][2] = {{1, 1}, {17, 3}, {1, 40}, {40, 1}, {1920, 1080}};
  for (const auto& [w, h] : sizes)
    for (int r : {0, 1, 4}) {
      if (op != image_op::box_blur && r != 1) continue;  // the radius only matters to the blur
      const image_problem p{op, w, h, r};
      const validation_result v = image_fixture(p, default_seed + w).run_and_validate(entry.launch, entry.form);
      EXPECT_TRUE(v.passed) << entry.name() << " " << p.describe() << ": " << v.summary();
      EXPECT_EQ(v.checked, std::size_t(w) * h);
    }
}

std::vector<std::tuple<std::size_t, image_op>> image_params() {
  std::vector<std::tuple<std::size_t, image_op>> v;
  for (std::size_t i = 0; i < get_registry().image.size(); ++i)
    for (std::size_t op = 0; op < image_op_catalogue.size(); ++op) v.emplace_back(i, static_cast<image_op>(op));
  return v;
}
std::string image_name(const ::testing::TestParamInfo<std::tuple<std::size_t, image_op>>& info) {
  const auto [i, op] = info.param;
  return sanitize(get_registry().image.at(i).name() + "_" + std::string(cdl::info(op).name));
}
INSTANTIATE_TEST_SUITE_P(Registry, ImageStrategy, ::testing::ValuesIn(image_params()), image_name);

class TasksStrategy : public gpu_param_test<std::tuple<std::size_t, task_layout>> {};

TEST_P(TasksStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, layout] = GetParam();
  const tasks_entry& entry = get_registry().tasks.at(index);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33), (std::size_t(1) << 20) + 3})
    for (int distinct : {1, 2, 7, 32}) {
      const tasks_problem p{layout, distinct, n};
      const validation_result v = tasks_fixture(p, default_seed + n).run_and_validate(entry.launch, entry.form);
      EXPECT_TRUE(v.passed) << entry.name() << " " << p.describe() << ": " << v.summary();
      EXPECT_EQ(v.checked, n);
    }
}

std::vector<std::tuple<std::size_t, task_layout>> tasks_params() {
  std::vector<std::tuple<std::size_t, task_layout>> v;
  for (std::size_t i = 0; i < get_registry().tasks.size(); ++i)
    for (task_layout l : {task_layout::uniform, task_layout::sorted, task_layout::warp, task_layout::random})
      v.emplace_back(i, l);
  return v;
}
std::string tasks_name(const ::testing::TestParamInfo<std::tuple<std::size_t, task_layout>>& info) {
  const auto [i, l] = info.param;
  return sanitize(get_registry().tasks.at(i).name() + "_" + std::string(to_string(l)));
}
INSTANTIATE_TEST_SUITE_P(Registry, TasksStrategy, ::testing::ValuesIn(tasks_params()), tasks_name);

class MatmulStrategy : public gpu_param_test<std::tuple<std::size_t, dtype, semiring>> {};

TEST_P(MatmulStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  const matmul_entry& entry = get_registry().matmul.at(index);
  const int shapes[][3] = {{1, 1, 1}, {33, 33, 33}, {257, 257, 257}, {70, 130, 45}, {1, 300, 17}};
  for (const auto& [m, n, k] : shapes) {
    const matmul_problem p{op, type, m, n, k};
    const validation_result v = matmul_fixture(p, default_seed + m).run_and_validate(entry.launch, entry.form);
    EXPECT_TRUE(v.passed) << entry.name() << " " << p.describe() << ": " << v.summary();
    EXPECT_EQ(v.checked, std::size_t(m) * n);
  }
}

std::vector<std::tuple<std::size_t, dtype, semiring>> matmul_params() {
  std::vector<std::tuple<std::size_t, dtype, semiring>> v;
  for (std::size_t i = 0; i < get_registry().matmul.size(); ++i)
    for (dtype t : {dtype::f32, dtype::f64})
      for (std::size_t op = 0; op < semiring_catalogue.size(); ++op) v.emplace_back(i, t, static_cast<semiring>(op));
  return v;
}
std::string matmul_name(const ::testing::TestParamInfo<std::tuple<std::size_t, dtype, semiring>>& info) {
  const auto [i, t, op] = info.param;
  return sanitize(get_registry().matmul.at(i).name() + "_" + std::string(to_string(t)) + "_" +
                  std::string(cdl::info(op).name));
}
INSTANTIATE_TEST_SUITE_P(Registry, MatmulStrategy, ::testing::ValuesIn(matmul_params()), matmul_name);

}  // namespace
}  // namespace cdl
