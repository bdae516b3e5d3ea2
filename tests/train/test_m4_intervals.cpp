// M4's interval scores (MSIS, coverage, ACD) and the seasonal-naive interval baseline, on
// series small enough to work out by hand.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "attnfc/train/m4.hpp"
#include "attnfc/train/m4_intervals.hpp"

namespace m4 = attnfc::train::m4;

TEST_CASE("score_interval: MSIS, coverage and ACD as M4 defines them") {
  // History 0 2 4 6 at m = 1: scale 2. Step 1 is inside [4, 6]: width 2, MSIS term 1.
  // Step 2 misses [4, 8] by 2 above: (4 + (2 / 0.05) * 2) / 2 = 42.
  const double scale = m4::mase_scale({0, 2, 4, 6}, 1);
  REQUIRE(scale == 2.0);
  const m4::IntervalScores s =
      m4::score_interval("x", 0.95, {{4, 4}}, {{6, 8}}, {{5, 10}}, {scale});
  CHECK(s.msis_avg == doctest::Approx(21.5));
  CHECK(s.msis.size() == 1);
  CHECK(s.coverage == doctest::Approx(0.5));
  CHECK(s.acd == doctest::Approx(0.45));
  // Below the lower bound is penalised alike, and a bound equal to y counts as covered.
  const m4::IntervalScores below =
      m4::score_interval("x", 0.8, {{6, 5}}, {{7, 6}}, {{5, 5}}, {1.0});
  CHECK(below.msis_avg == doctest::Approx((1 + 10 * 1 + 1) / 2.0));
  CHECK(below.coverage == doctest::Approx(0.5));
  // Averages are over every value: two series of horizons 1 and 3 weigh 1 : 3.
  const m4::IntervalScores pooled = m4::score_interval("x", 0.5, {{0}, {0, 0, 0}}, {{4}, {1, 1, 1}},
                                                       {{1}, {0, 0, 0}}, {1.0, 1.0});
  CHECK(pooled.msis_avg == doctest::Approx((4 + 3) / 4.0));
  CHECK(pooled.msis[0] == doctest::Approx(4));
}

TEST_CASE("score_interval: bounds that do not line up and levels outside (0, 1) are refused") {
  CHECK_THROWS_AS(m4::score_interval("x", 0.95, {{1}}, {{2, 3}}, {{1}}, {1.0}),
                  std::invalid_argument);
  CHECK_THROWS_AS(m4::score_interval("x", 0.95, {{1}}, {{2}}, {{1}}, {}), std::invalid_argument);
  CHECK_THROWS_AS(m4::score_interval("x", 1.0, {{1}}, {{2}}, {{1}}, {1.0}), std::invalid_argument);
}

TEST_CASE("snaive_interval: the forecast plus the quantiles of its own seasonal differences") {
  // m = 2: the lag-2 differences are 0 2 0 2 0 2, whose 25% and 75% quantiles (the ceil(n q)-th
  // smallest) are 0 and 2; step 3 is two seasons ahead, with lag-4 differences 0 4 0 4.
  const std::vector<double> x = {0, 1, 0, 3, 0, 5, 0, 7};
  const m4::Interval b = m4::snaive_interval(x, 3, 2, 0.5);
  CHECK(b.lower == std::vector<double>{0, 7, 0});
  CHECK(b.upper == std::vector<double>{2, 9, 4});
  // Shorter than a season: snaive() is Naive1 and the lag is capped at n - 1.
  const m4::Interval s = m4::snaive_interval({1, 3}, 2, 24, 0.9);
  CHECK(s.lower == std::vector<double>{5, 5});
  CHECK(s.upper == std::vector<double>{5, 5});
  CHECK_THROWS_AS(m4::snaive_interval({1}, 2, 24, 0.9), std::invalid_argument);
}

TEST_CASE("snaive_interval: the lag grows with the step, and is capped by the history") {
  // m = 1 (Naive1): step h's error is the difference at lag h. x = 0 1 3 6 10: lag 1 gives
  // 1 2 3 4, lag 2 gives 3 5 7, lag 3 gives 6 9; at level 0.5 the 25% and 75% quantiles
  // (ceil(n q)-th smallest) are 1, 3 / 3, 7 / 6, 9; the forecast is 10 every step.
  const m4::Interval b = m4::snaive_interval({0, 1, 3, 6, 10}, 3, 1, 0.5);
  CHECK(b.lower == std::vector<double>{11, 13, 16});
  CHECK(b.upper == std::vector<double>{13, 17, 19});
  // m = 2 with 3 values: step 3 would need lag 4, capped at n - 1 = 2 (the differences 2).
  const m4::Interval c = m4::snaive_interval({1, 5, 3}, 3, 2, 0.5);
  CHECK(c.lower == std::vector<double>{7, 5, 7});
  CHECK(c.upper == std::vector<double>{7, 5, 7});
  // 40 differences at level 0.95: the 2.5% quantile is the 1st smallest, not the 2nd.
  std::vector<double> x(41);
  for (int t = 0; t <= 40; ++t) x[t] = t * (t + 1) / 2.0;  // differences 1, 2, ..., 40
  CHECK(m4::snaive_interval(x, 1, 1, 0.95).lower[0] == x.back() + 1);
}
