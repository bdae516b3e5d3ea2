// The one seasonal-period detector (data/seasonality.hpp): the baselines' period and
// the period `attnfc attention` compares the heads with. The baselines' own cases are in
// tests/train/test_metrics_baselines.cpp (infer_period).
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "attnfc/data/seasonality.hpp"

using namespace attnfc;

TEST_CASE("seasonal_period sees a daily cycle through a slow level drift") {
  // A random-walk-like level (a slow sine of large amplitude) plus a small daily cycle:
  // the raw autocorrelation decays too slowly to peak at 24; the differenced one does.
  std::vector<float> x(24 * 60);
  for (size_t t = 0; t < x.size(); ++t)
    x[t] = static_cast<float>(20 * std::sin(2 * std::numbers::pi * t / 1500.0) +
                              0.5 * std::sin(2 * std::numbers::pi * t / 24.0));
  std::vector<double> acf;
  CHECK(data::seasonal_period(x.data(), 24 * 60, 1, 72, &acf) == 24);
  CHECK(acf.size() == 73u);
  std::vector<float> trend(300), ramp(720);
  for (size_t t = 0; t < trend.size(); ++t) trend[t] = 0.5f * t;
  CHECK(data::seasonal_period(trend.data(), 300, 1, 50) == 0);
  // 0.01 steps are not exact in float32: the differences carry rounding noise only.
  for (size_t t = 0; t < ramp.size(); ++t) ramp[t] = static_cast<float>(5 + 0.01 * t);
  CHECK(data::seasonal_period(ramp.data(), 720, 1, 48) == 0);
  CHECK(data::seasonal_period(std::vector<float>{1, 2}.data(), 2, 1, 5) == 0);
}
