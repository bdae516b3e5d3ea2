// The quantile scores (train/interval_metrics.hpp) on values worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/train/interval_metrics.hpp"

using namespace attnfc::train;

TEST_CASE("interval metrics: pinball, wQL, coverage, ACD and MSIS by hand") {
  // Levels 0.1, 0.5, 0.9 forecast as -1, 0, 1 in two windows (H = 1, C = 1), scale 2.
  IntervalAccumulator acc({0.1f, 0.5f, 0.9f}, 1, 1, {2.0});
  const float lv[] = {-1, 0, 1};
  const float y0[] = {0}, y1[] = {3}, y2[] = {100};
  const uint8_t skip[] = {0};
  acc.add(lv, y0, nullptr);  // inside: interval score 2
  acc.add(lv, y1, nullptr);  // above by 2: 2 + (2 / 0.2) * 2 = 22
  acc.add(lv, y2, skip);     // not counted
  const IntervalMetrics m = acc.result();
  CHECK(m.values == 2);
  REQUIRE(m.pinball.size() == 3);
  CHECK(m.pinball[0] == doctest::Approx(0.25));  // (0.1 * 1 + 0.1 * 4) / 2
  CHECK(m.pinball[1] == doctest::Approx(0.75));  // (0 + 0.5 * 3) / 2
  CHECK(m.pinball[2] == doctest::Approx(0.95));  // (0.1 * 1 + 0.9 * 2) / 2
  // mean over levels of 2 * sum pinball / sum |y| = (1.0 / 3 + 3.0 / 3 + 3.8 / 3) / 3
  CHECK(m.wql == doctest::Approx((1.0 + 3.0 + 3.8) / 9.0));
  REQUIRE(m.intervals.size() == 1);
  CHECK(m.intervals[0].nominal == 0.8);
  CHECK(m.intervals[0].coverage == doctest::Approx(0.5));
  CHECK(m.intervals[0].acd == doctest::Approx(0.3));
  CHECK(m.intervals[0].msis == doctest::Approx((2.0 / 2 + 22.0 / 2) / 2));  // 6
  const nlohmann::json j = to_json(m);
  CHECK(j["pinball"].contains("0.1"));
  CHECK(j["intervals"][0]["coverage"].get<double>() == doctest::Approx(0.5));
}

TEST_CASE("interval metrics: pairs are found among unpaired levels, narrowest first") {
  IntervalAccumulator acc({0.025f, 0.1f, 0.3f, 0.5f, 0.9f, 0.975f}, 1, 1, {1.0});
  const float lv[] = {-2, -1, -0.5f, 0, 1, 2};
  const float y[] = {1.5f};
  acc.add(lv, y, nullptr);
  const IntervalMetrics m = acc.result();
  REQUIRE(m.intervals.size() == 2);  // 0.3 has no 0.7: no interval
  CHECK(m.intervals[0].nominal == 0.8);
  CHECK(m.intervals[0].coverage == 0.0);
  CHECK(m.intervals[1].nominal == 0.95);
  CHECK(m.intervals[1].coverage == 1.0);
}
