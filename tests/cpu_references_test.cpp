// Every workload's float64 reference, the yardstick of every GPU result, against values worked out
// here from each op's definition (not from the functors in common/ops.cuh the references call), on
// small problems: the map over k steps, zip, each image filter at several radii and at the border,
// the task ops, the point ops in both layouts and each semiring's product.
#include "common/image_workload.hpp"
#include "common/map_workload.hpp"
#include "common/matmul_workload.hpp"
#include "common/points_workload.hpp"
#include "common/tasks_workload.hpp"
#include "common/zip_workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace cdl {
namespace {

constexpr double close = 1e-12;  // the references are float64 sums of few terms: a few roundings

TEST(References, TheMapSumsEachOpOverKStepsOfX) {
  const std::vector<float> x = {0.3f, -1.25f, 2.0f};
  const double d = 1.0 / 4096;  // the map's step (skeletons/map.cuh): a power of two, exact in float
  auto by_hand = [](map_op op, double v) {
    switch (op) {
      case map_op::quadratic: return v * v + 2 * v + 1;
      case map_op::square: return v * v;
      case map_op::sine: return std::sin(v);
      case map_op::exp_sin_cos: return std::exp(std::sin(v) * std::cos(v));
      case map_op::threshold: return v > 0.5 ? 2 * v : v / 2;
    }
    return double(NAN);
  };
  for (const map_op op :
       {map_op::quadratic, map_op::square, map_op::sine, map_op::exp_sin_cos, map_op::threshold})
    for (const int k : {1, 3}) {
      const std::vector<reference_value> r = map_reference<float>(op, x, k);
      for (std::size_t i = 0; i < x.size(); ++i) {
        double want = 0;
        for (int j = 0; j < k; ++j) want += by_hand(op, double(float(x[i] + float(j) * float(d))));
        EXPECT_NEAR(r[i].value, want, close * (1 + std::fabs(want))) << info(op).name << " k = " << k;
      }
    }
}

TEST(References, ZipAddsAndMultipliesItsTwoInputs) {
  for (const zip_op op : {zip_op::add, zip_op::multiply}) {
    const zip_host<float> h = make_zip_host<float>({op, dtype::f32, 5}, 7);
    for (std::size_t i = 0; i < 5; ++i) {
      const double x = h.x[i], y = h.y[i], want = op == zip_op::add ? x + y : x * y;
      EXPECT_NEAR(h.reference[i].value, want, close) << info(op).name << " at " << i;
    }
  }
}

// The image's pixel at (x, y), its reads clamped to the border, as the workload defines them.
double pixel(const std::vector<float>& in, int w, int h, int x, int y) {
  return in[std::size_t(std::clamp(y, 0, h - 1)) * std::size_t(w) + std::size_t(std::clamp(x, 0, w - 1))];
}

TEST(References, EachImageFilterAtEveryPixelTheBorderAndRadiusIncluded) {
  const int w = 5, h = 4;
  for (const int r : {0, 1, 2}) {
    const image_host img = make_image_host({image_op::box_blur, w, h, r}, 11);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        double sum = 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) sum += pixel(img.in, w, h, x + dx, y + dy);
        EXPECT_NEAR(img.reference[std::size_t(y * w + x)].value, sum / ((2 * r + 1) * (2 * r + 1)), close)
            << "box blur r = " << r << " at " << x << ", " << y;
      }
  }
  const image_host sharpen = make_image_host({image_op::sharpen, w, h, 1}, 11),
                   invert = make_image_host({image_op::invert, w, h, 1}, 11),
                   sobel = make_image_host({image_op::sobel, w, h, 1}, 11);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto at = [&](int dx, int dy) { return pixel(sharpen.in, w, h, x + dx, y + dy); };
      const std::size_t i = std::size_t(y * w + x);
      EXPECT_NEAR(sharpen.reference[i].value, 5 * at(0, 0) - at(-1, 0) - at(1, 0) - at(0, -1) - at(0, 1),
                  close);
      EXPECT_NEAR(invert.reference[i].value, 1 - at(0, 0), close);
      const double gx = at(1, -1) + 2 * at(1, 0) + at(1, 1) - at(-1, -1) - 2 * at(-1, 0) - at(-1, 1),
                   gy = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - at(-1, -1) - 2 * at(0, -1) - at(1, -1);
      EXPECT_NEAR(sobel.reference[i].value, std::sqrt(gx * gx + gy * gy), close) << x << ", " << y;
    }
}

TEST(References, TaskOpIMultipliesAndAddsIMod4PlusOneTimesThenAddsIEighths) {
  const tasks_host h = make_tasks_host({task_layout::random, 32, 64}, 5);
  std::vector<bool> seen(32);
  for (std::size_t i = 0; i < 64; ++i) {
    const task& t = h.tasks[i];
    double acc = h.x[i];
    for (int j = 0; j <= t.op % 4; ++j) acc = acc * t.p1 + t.p2;
    EXPECT_NEAR(h.reference[i].value, acc + t.op / 8.0, close) << "op " << t.op;
    seen[std::size_t(t.op)] = true;
  }
  EXPECT_GT(std::count(seen.begin(), seen.end(), true), 16);  // many ops among 64 at random
}

TEST(References, PointOpsInTheArrayOfStructsLayout) {
  for (const point_op op : {point_op::scale_shift, point_op::rotate90, point_op::shear}) {
    const points_host<float> h = make_points_host<float>({op, dtype::f32, 4}, 3);
    for (std::size_t i = 0; i < 4; ++i) {
      const double x = h.aos[2 * i], y = h.aos[2 * i + 1];
      EXPECT_EQ(h.soa[i], h.aos[2 * i]);
      EXPECT_EQ(h.soa[4 + i], h.aos[2 * i + 1]);
      const double want[3][2] = {{2 * x, y + 1}, {-y, x}, {x + 0.5 * y, y}};
      EXPECT_NEAR(h.reference[2 * i].value, want[int(op)][0], close) << info(op).name;
      EXPECT_NEAR(h.reference[2 * i + 1].value, want[int(op)][1], close) << info(op).name;
    }
  }
}

TEST(References, EachSemiringsProductOfTwoSmallMatrices) {
  // A (2 x 3), B (3 x 2), row-major
  const std::vector<float> a = {1, -2, 3, 0.5f, 4, -1}, b = {2, 1, -1, 0, 3, 5};
  const matmul_problem p{semiring::plus_times, dtype::f32, 2, 2, 3};
  auto row = [](double x0, double x1, double x2, double y0, double y1, double y2, int s) {
    const double t[] = {s == 0   ? x0 * y0
                        : s == 1 ? x0 + y0
                                 : x0 * y0,
                        s == 0   ? x1 * y1
                        : s == 1 ? x1 + y1
                                 : x1 * y1,
                        s == 0   ? x2 * y2
                        : s == 1 ? x2 + y2
                                 : x2 * y2};
    return s == 0 ? t[0] + t[1] + t[2] : s == 1 ? std::min({t[0], t[1], t[2]}) : std::max({t[0], t[1], t[2]});
  };
  // C[i][j] = reduce over k of combine(A[i][k], B[k][j]): (+,×), (min,+), (max,×)
  double plus_times[4], min_plus[4], max_times[4];
  double* by_semiring[] = {plus_times, min_plus, max_times};
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        by_semiring[s][i * 2 + j] =
            row(a[std::size_t(3 * i)], a[std::size_t(3 * i + 1)], a[std::size_t(3 * i + 2)],
                b[std::size_t(j)], b[std::size_t(2 + j)], b[std::size_t(4 + j)], s);
  EXPECT_EQ(plus_times[0], 13);  // 1 * 2 + -2 * -1 + 3 * 3, worked out
  EXPECT_EQ(min_plus[1], -2);    // min(1 + 1, -2 + 0, 3 + 5)
  EXPECT_EQ(max_times[2], 1);    // max(0.5 * 2, 4 * -1, -1 * 3)
  const double* want[] = {plus_times, min_plus, max_times};
  for (const semiring s : {semiring::plus_times, semiring::min_plus, semiring::max_times}) {
    matmul_problem q = p;
    q.op = s;
    const std::vector<reference_value> r = matmul_reference(q, a, b);
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(r[i].value, want[int(s)][i], close) << info(s).name << " " << i;
  }
}

}  // namespace
}  // namespace cdl
