// Split-conformal calibration (train/calibration.hpp) on a series whose noise is known:
// i.i.d. Gaussian with sigma 2 around 0, forecast by intervals far too narrow (+-1). Fit on
// one part, the calibrated 80% and 95% intervals must cover within 2 points of nominal on
// another part that calibration never saw.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/evaluate.hpp"

#include "../support/hourly_series.hpp"

using namespace attnfc;
using namespace attnfc::train;

namespace {

data::TimeSeries gaussian_series(size_t rows) {
  return attnfc_test::hourly_series(rows,
                                    [](size_t t) { return 2.0f * kernels::random_normal(41, t); });
}

// Point 0 and levels (-1.5, -1, 0, 1, 1.5) for (0.025, 0.1, 0.5, 0.9, 0.975), every step:
// an uncalibrated model whose intervals are about half as wide as they should be.
NamedForecaster narrow(int H, const Calibration* cal) {
  auto levels = std::make_shared<std::vector<float>>();
  const std::vector<float> q{0.025f, 0.1f, 0.5f, 0.9f, 0.975f};
  BatchForecaster f = [levels, H, cal](const SampleBatch& s, float* out) {
    const float lv[] = {-1.5f, -1.0f, 0.0f, 1.0f, 1.5f};
    levels->resize(static_cast<size_t>(s.count * H * 5));
    for (int64_t i = 0; i < s.count * H; ++i) {
      out[i] = 0.0f;
      for (int j = 0; j < 5; ++j) (*levels)[static_cast<size_t>(i * 5 + j)] = lv[j];
    }
    if (cal) cal->apply(levels->data(), s.count, H);
  };
  return {"narrow", f, q, levels};
}

}  // namespace

TEST_CASE("conformal calibration: coverage within 2 points of nominal on unseen windows") {
  const int L = 4, H = 3;
  const data::TimeSeries s = gaussian_series(24000);
  const std::vector<EvalPart> fit{{{0, 12000}, {1.0}, {1.0}, {}}};
  const std::vector<EvalPart> test{{{12000, 24000}, {1.0}, {1.0}, {}}};
  const Calibration cal = fit_conformal(s, fit, L, H, 256, narrow(H, nullptr));
  REQUIRE(cal.pairs.size() == 2);
  // The 80% correction: 1.2816 sigma - 1 = 1.563; the 95% one: 1.96 sigma - 1.5 = 2.42.
  CHECK(cal.correction[1 * H] == doctest::Approx(1.563).epsilon(0.05));
  CHECK(cal.correction[0] == doctest::Approx(2.42).epsilon(0.05));
  const PanelScores raw = evaluate_parts(s, test, L, H, 256, {narrow(H, nullptr)}, false);
  const PanelScores calibrated = evaluate_parts(s, test, L, H, 256, {narrow(H, &cal)}, false);
  const IntervalMetrics& before = *raw.all.front().intervals;
  const IntervalMetrics& after = *calibrated.all.front().intervals;
  REQUIRE(after.intervals.size() == 2);
  CHECK(before.intervals[0].coverage < 0.45);  // +-1 of sigma 2: 38% nominal-80 coverage
  CHECK(std::fabs(after.intervals[0].coverage - 0.80) <= 0.02);
  CHECK(std::fabs(after.intervals[1].coverage - 0.95) <= 0.02);
  // Point forecasts are untouched by calibration.
  CHECK(raw.all.front().scaled.mse == calibrated.all.front().scaled.mse);
}

TEST_CASE("conformal_scaled: each side scaled about the median, coverage on unseen windows") {
  const int L = 4, H = 3;
  const data::TimeSeries s = gaussian_series(24000);
  const std::vector<EvalPart> fit{{{0, 12000}, {1.0}, {1.0}, {}}};
  const std::vector<EvalPart> test{{{12000, 24000}, {1.0}, {1.0}, {}}};
  const Calibration cal = fit_conformal(s, fit, L, H, 256, narrow(H, nullptr), "conformal_scaled");
  REQUIRE(cal.scaled);
  // Each side must grow to z sigma = 2 z: the 95% sides (1.5 wide) by 1.96 * 2 / 1.5 - 1 =
  // 1.613 of their width (the additive method's 2.42 would fail this), the 80% sides (1 wide)
  // by 1.2816 * 2 - 1 = 1.563.
  CHECK(cal.correction[0] == doctest::Approx(1.613).epsilon(0.05));
  CHECK(cal.correction[1 * H] == doctest::Approx(1.563).epsilon(0.05));
  const PanelScores calibrated = evaluate_parts(s, test, L, H, 256, {narrow(H, &cal)}, false);
  const IntervalMetrics& after = *calibrated.all.front().intervals;
  REQUIRE(after.intervals.size() == 2);
  CHECK(std::fabs(after.intervals[0].coverage - 0.80) <= 0.02);
  CHECK(std::fabs(after.intervals[1].coverage - 0.95) <= 0.02);
}

TEST_CASE("conformal_scaled: apply moves each side by its own distance from the median") {
  // One window, one step, one channel; levels (0.1, 0.5, 0.9) at (0, 1, 3): the lower side is
  // 1 wide, the upper 2. A correction of 0.5 gives (1 - 1.5 * 1, 1 + 1.5 * 2) = (-0.5, 4);
  // the additive method would give (-0.5, 3.5).
  Calibration c{{0.1f, 0.5f, 0.9f}, symmetric_pairs({0.1f, 0.5f, 0.9f}), 1, 1, {0.5f}, {10}};
  float lv[3] = {0.0f, 1.0f, 3.0f};
  c.scaled = true;
  c.apply(lv, 1, 1);
  CHECK(lv[0] == doctest::Approx(-0.5));
  CHECK(lv[1] == 1.0f);
  CHECK(lv[2] == doctest::Approx(4.0));
  float add[3] = {0.0f, 1.0f, 3.0f};
  c.scaled = false;
  c.apply(add, 1, 1);
  CHECK(add[2] == doctest::Approx(3.5));
  // A correction below -1 would cross the median; the levels stay monotone (both at it).
  float cross[3] = {0.0f, 1.0f, 3.0f};
  Calibration shrink = c;
  shrink.scaled = true;
  shrink.correction = {-1.5f};
  shrink.apply(cross, 1, 1);
  CHECK(cross[0] <= cross[1]);
  CHECK(cross[2] >= cross[1]);
}

TEST_CASE("calibration JSON keeps its method; an unknown method is refused") {
  const std::vector<float> q{0.1f, 0.5f, 0.9f};
  Calibration c{q, symmetric_pairs(q), 2, 1, {0.25f, 0.5f}, {7}};
  c.scaled = true;
  const Calibration back = Calibration::from_json(c.to_json(), "model", q, 2, 1);
  CHECK(back.scaled);
  CHECK(back.correction == c.correction);
  nlohmann::json old = c.to_json();
  old.erase("method");  // a file written before the scaled method: additive
  CHECK_FALSE(Calibration::from_json(old, "model", q, 2, 1).scaled);
  old["method"] = "isotonic";
  CHECK_THROWS_WITH_AS(Calibration::from_json(old, "model", q, 2, 1),
                       doctest::Contains("conformal_scaled"), InputError);
}
