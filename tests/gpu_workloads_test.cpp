// Every registered image, tasks and matmul implementation, validated element by element
// against its float64 CPU reference at the edge sizes: images 1x1, 17x3, 100x70, 1920x1080 (and
// a single row and column; none a multiple of the 32 x 32 tile in both sides) at radii 0, 1, 4
// and the tiled form's maximum; task arrays of 0, 1, 31, 33 and 2^20 + 3 elements in every
// layout with 1, 2, 7 and 32 distinct ops; matrices 1, 33, 257, exact 128 x 128 x 8 tiles and
// non-square shapes with partial tiles in every dimension. cuBLAS, the matmul peer, too.
#include "common/cublas_peer.hpp"
#include "common/inputs.hpp"
#include "common/library_peers.hpp"
#include "gpu_test.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace cdl {
namespace {

class ImageStrategy : public gpu_param_test<std::tuple<std::size_t, image_op>> {};

TEST_P(ImageStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, op] = GetParam();
  const image_entry& entry = get_registry().image.at(index);
  const int sizes[][2] = {{1, 1}, {17, 3}, {1, 40}, {40, 1}, {100, 70}, {1920, 1080}};
  for (const auto& [w, h] : sizes)
    for (int r : {0, 1, 4, image_max_radius}) {
      if (op != image_op::box_blur && r != 1) continue;         // the radius only matters to the blur
      if (r == image_max_radius && w * h > 100 * 70) continue;  // its reference takes minutes at 1080p
      expect_matches_reference<image_fixture>(entry, image_problem{op, w, h, r}, default_seed + w,
                                              std::size_t(w) * h);
    }
}

std::vector<std::tuple<std::size_t, image_op>> image_params() {
  std::vector<std::tuple<std::size_t, image_op>> v;
  for (std::size_t i = 0; i < get_registry().image.size(); ++i)
    for (std::size_t op = 0; op < image_op_catalogue.size(); ++op)
      v.emplace_back(i, static_cast<image_op>(op));
  return v;
}
std::string image_name(const ::testing::TestParamInfo<std::tuple<std::size_t, image_op>>& info) {
  const auto [i, op] = info.param;
  return test_name(get_registry().image.at(i).name() + "_" + std::string(cdl::info(op).name));
}
INSTANTIATE_TEST_SUITE_P(Registry, ImageStrategy, ::testing::ValuesIn(image_params()), image_name);

// The tasks problem's sizes (none, one, a warp's either side, a large odd one) and op counts, each
// checked with the workload's fixture (the objects' problem is made from the tasks').
template <class Fixture, class Entry>
void expect_every_size_matches(const Entry& entry, task_layout layout) {
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33), (std::size_t(1) << 20) + 3})
    for (int distinct : {1, 2, 7, 32}) {
      typename Fixture::problem_type p;
      static_cast<tasks_problem&>(p) = {layout, distinct, n};
      expect_matches_reference<Fixture>(entry, p, default_seed + n, n);
    }
}

class TasksStrategy : public gpu_param_test<std::tuple<std::size_t, task_layout>> {};

TEST_P(TasksStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, layout] = GetParam();
  expect_every_size_matches<tasks_fixture>(get_registry().tasks.at(index), layout);
}

// The grouping kept across launches (tasks_workload.hpp: made once, or the data moved into op order
// once): every launch's results in element order, twice on the same kept state, at every size, layout
// and op count. The fixture launches a function pointer: the state is a static here.
std::unique_ptr<tasks_in_op_order> kept_order;
void keep(const tasks_launch& a) { kept_order = std::make_unique<tasks_in_op_order>(a); }
void grouped_reused(const tasks_launch& a) { run_task_groups(a, kept_order->groups()); }
void in_op_order(const tasks_launch& a) { kept_order->run(a); }

class KeptGrouping : public gpu_test {};

TEST_F(KeptGrouping, MatchesTheReferenceOnEveryLaunchAtEdgeSizes) {
  for (task_layout layout :
       {task_layout::uniform, task_layout::sorted, task_layout::warp, task_layout::random})
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(33), (std::size_t(1) << 20) + 3})
      for (int distinct : {1, 7, 32}) {
        const tasks_fixture f({layout, distinct, n}, default_seed + n);
        f.launch(keep, tasks_form::grouped, nullptr);
        for (int launch = 0; launch < 2; ++launch)
          for (tasks_launch_fn fn : {grouped_reused, in_op_order}) {
            const validation_result r = f.run_and_validate(fn, tasks_form::grouped);
            EXPECT_TRUE(r.passed) << f.problem().describe() << " launch " << launch << ": " << r.summary();
          }
        kept_order.reset();
      }
}

// Every entry of the registry's list `entries` (tasks or objects) in every layout, and each test's name.
using layout_param = std::tuple<std::size_t, task_layout>;
template <auto entries>
std::vector<layout_param> layout_params() {
  std::vector<layout_param> v;
  for (std::size_t i = 0; i < (get_registry().*entries).size(); ++i)
    for (task_layout l : {task_layout::uniform, task_layout::sorted, task_layout::warp, task_layout::random})
      v.emplace_back(i, l);
  return v;
}
template <auto entries>
std::string layout_name(const ::testing::TestParamInfo<layout_param>& info) {
  const auto [i, l] = info.param;
  return test_name((get_registry().*entries).at(i).name() + "_" + std::string(to_string(l)));
}
INSTANTIATE_TEST_SUITE_P(Registry, TasksStrategy, ::testing::ValuesIn(layout_params<&registry::tasks>()),
                         layout_name<&registry::tasks>);

// The objects workload (11): every form on the tasks problem's records made into objects, with a
// class per op; the by-class forms also at sizes where some classes' arenas are empty.
class ObjectsStrategy : public gpu_param_test<std::tuple<std::size_t, task_layout>> {};

TEST_P(ObjectsStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, layout] = GetParam();
  expect_every_size_matches<objects_fixture>(get_registry().objects.at(index), layout);
}

INSTANTIATE_TEST_SUITE_P(Registry, ObjectsStrategy, ::testing::ValuesIn(layout_params<&registry::objects>()),
                         layout_name<&registry::objects>);

class MatmulStrategy : public gpu_param_test<entry_type_op<semiring>> {};

TEST_P(MatmulStrategy, MatchesTheReferenceAtEdgeSizes) {
  const auto [index, type, op] = GetParam();
  const matmul_entry& entry = get_registry().matmul.at(index);
  const int shapes[][3] = {{1, 1, 1},      {17, 33, 65},  {33, 33, 33}, {257, 257, 257},
                           {256, 128, 64}, {70, 130, 45}, {1, 300, 17}, {129, 257, 9}};
  for (const auto& [m, n, k] : shapes)
    expect_matches_reference<matmul_fixture>(entry, matmul_problem{op, type, m, n, k}, default_seed + m,
                                             std::size_t(m) * n);
}

INSTANTIATE_TEST_SUITE_P(
    Registry, MatmulStrategy,
    ::testing::ValuesIn(every_entry_type_op<semiring>(get_registry().matmul, semiring_catalogue)),
    [](const auto& info) { return entry_type_op_name(get_registry().matmul, info.param); });

class Peers : public gpu_test {};

// Past 2048^3 the plain product's reference comes from cuBLAS DGEMM (matmul_workload.cpp): it must
// be the CPU's float64 reference, value and error scale, on a problem where both can be computed.
TEST_F(Peers, CublasReferenceIsTheCpuReference) {
  const matmul_problem p{semiring::plus_times, dtype::f32, 300, 500, 200};
  const matmul_fixture cpu(p, default_seed);
  const std::vector<float> a = uniform_inputs<float>(std::size_t(p.m) * p.k, default_seed),
                           b = uniform_inputs<float>(std::size_t(p.k) * p.n, default_seed + 1);
  const std::vector<reference_value> gpu = cublas_reference(
      std::vector<double>(a.begin(), a.end()), std::vector<double>(b.begin(), b.end()), p.m, p.n, p.k);
  const std::vector<reference_value>& want = cpu.reference_for(matmul_form::tiled);
  ASSERT_EQ(gpu.size(), want.size());
  double worst = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i)
    worst = std::max({worst, std::fabs(gpu[i].value - want[i].value) / want[i].scale,
                      std::fabs(gpu[i].scale - want[i].scale) / want[i].scale});
  EXPECT_LT(worst, 1e-13);
}

TEST_F(Peers, CublasMatchesTheReferenceForThePlainProduct) {
  for (dtype t : {dtype::f32, dtype::f64})
    for (int size : {1, 257, 1024}) {
      const matmul_problem p{semiring::plus_times, t, size, size + 3, size};
      const validation_result v =
          matmul_fixture(p, default_seed).run_and_validate(cublas_matmul, matmul_form::naive);
      EXPECT_TRUE(v.passed) << p.describe() << ": " << v.summary();
    }
  EXPECT_THROW(matmul_fixture({semiring::min_plus, dtype::f32, 8, 8, 8}, default_seed)
                   .run_and_validate(cublas_matmul, matmul_form::naive),
               error);
}

TEST_F(Peers, CubAndThrustMatchTheReferenceForEveryElementwiseOp) {
  for (dtype t : {dtype::f32, dtype::f64})
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000003)}) {
      for (std::size_t op = 0; op < map_op_catalogue.size(); ++op)
        for (int k : {1, 3}) {
          const map_fixture f({map_op(op), t, n, k}, default_seed);
          for (map_launch_fn fn : {cub_transform_map, thrust_transform_map}) {
            const validation_result v = f.run_and_validate(fn, map_form::scalar);
            EXPECT_TRUE(v.passed) << f.problem().describe() << ": " << v.summary();
          }
        }
      for (std::size_t op = 0; op < zip_op_catalogue.size(); ++op) {
        const zip_fixture f({zip_op(op), t, n}, default_seed);
        for (zip_launch_fn fn : {cub_transform_zip, thrust_transform_zip}) {
          const validation_result v = f.run_and_validate(fn, map_form::scalar);
          EXPECT_TRUE(v.passed) << f.problem().describe() << ": " << v.summary();
        }
      }
    }
}

class ImageTiled : public gpu_test {};

// Every tiled entry refuses the radius with the skeleton's own message (not a failure of some
// other call), before its kernel runs.
TEST_F(ImageTiled, ARadiusBeyondTheMaximumIsRefused) {
  const image_fixture f({image_op::box_blur, 64, 64, image_max_radius + 1}, default_seed);
  int tiled = 0;
  for (const image_entry& e : get_registry().image) {
    if (e.form != image_form::tiled) continue;
    ++tiled;
    try {
      f.run_and_validate(e.launch, e.form);
      ADD_FAILURE() << e.name() << " took radius " << image_max_radius + 1;
    } catch (const cuda_error& err) {
      ADD_FAILURE() << e.name() << ": a CUDA call failed instead of the refusal: " << err.what();
    } catch (const error& err) {
      EXPECT_NE(std::string(err.what())
                    .find("the tiled form takes radii up to " + std::to_string(image_max_radius)),
                std::string::npos)
          << e.name() << ": " << err.what();
    }
  }
  EXPECT_GE(tiled, 5) << "the registry's tiled image entries";
}

}  // namespace
}  // namespace cdl
