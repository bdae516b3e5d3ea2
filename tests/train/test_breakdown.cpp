// Errors per column and per horizon step (train/breakdown.hpp), by hand-worked windows,
// and their agreement with the pooled metrics.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attnfc/train/breakdown.hpp"
#include "attnfc/train/metrics.hpp"

using namespace attnfc::train;

TEST_CASE("breakdown: per column and per step means of window means, missing targets left out") {
  // H = 2 steps, C = 2 columns, row-major [H, C].
  BreakdownAccumulator acc(2, 2);
  const float f1[] = {1, 10, 2, 20}, y1[] = {0, 10, 0, 16};  // errors 1 0 / 2 4
  const float f2[] = {0, 0, 0, 0}, y2[] = {3, NAN, 1, 2};    // errors 3 - / 1 2
  acc.add(f1, y1, nullptr);
  acc.add(f2, y2, nullptr);
  const Breakdown b = acc.result();
  // Column 0: window means of squared errors (1 + 4) / 2 = 2.5 and (9 + 1) / 2 = 5.
  CHECK(b.columns.mse[0] == doctest::Approx((2.5 + 5.0) / 2));
  CHECK(b.columns.mae[0] == doctest::Approx((1.5 + 2.0) / 2));
  // Column 1: (0 + 16) / 2 = 8, and window 2 has only step 2: 4.
  CHECK(b.columns.mse[1] == doctest::Approx((8.0 + 4.0) / 2));
  CHECK(b.columns.windows == std::vector<int64_t>{2, 2});
  // Step 1: (1 + 0) / 2 and window 2's column 0 alone: 9. Step 2: (4 + 16) / 2 and (1 + 4) / 2.
  CHECK(b.steps.mse[0] == doctest::Approx((0.5 + 9.0) / 2));
  CHECK(b.steps.mse[1] == doctest::Approx((10.0 + 2.5) / 2));
  CHECK(b.steps.mae[1] == doctest::Approx((3.0 + 1.5) / 2));
}

TEST_CASE(
    "breakdown: a column that never counts (a covariate) has no windows; one column agrees "
    "with the pooled MSE") {
  BreakdownAccumulator acc(3, 2);
  MetricAccumulator pooled(3, 1);
  const uint8_t counted[] = {1, 0, 1, 0, 1, 0};
  for (int w = 0; w < 5; ++w) {
    std::vector<float> f(6), y(6), f1(3), y1(3);
    for (int i = 0; i < 6; ++i) {
      f[i] = static_cast<float>(std::sin(w + i));
      y[i] = static_cast<float>(std::cos(w * i));
    }
    for (int h = 0; h < 3; ++h) f1[h] = f[h * 2], y1[h] = y[h * 2];
    acc.add(f.data(), y.data(), counted);
    pooled.add(f1.data(), y1.data());
  }
  const Breakdown b = acc.result();
  CHECK(b.columns.windows == std::vector<int64_t>{5, 0});
  CHECK(b.columns.mse[1] == 0.0);
  CHECK(b.columns.mse[0] == doctest::Approx(pooled.result().mse).epsilon(1e-12));
  CHECK(b.columns.mae[0] == doctest::Approx(pooled.result().mae).epsilon(1e-12));
  const std::string table = format_column_table({"attnfc"}, {b}, {"OT", "cov"});
  CHECK(table.find("OT") != std::string::npos);
  CHECK(table.find("cov") == std::string::npos);  // not scored, not shown
}
