// evaluate_parts' twins (train/evaluate.hpp): a forecaster that reuses an earlier one's
// forecasts of each batch and adjusts its levels must score exactly what a forecaster
// computing the same adjusted levels on its own does, over panel parts, batches that cut
// across parts, and per part.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "attnfc/kernels/random.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/evaluate.hpp"

#include "../support/hourly_series.hpp"

using namespace attnfc;
using namespace attnfc::train;

namespace {

data::TimeSeries walk(size_t rows) {
  float level = 0;
  return attnfc_test::hourly_series(
      rows, [&level](size_t t) { return level += kernels::random_normal(7, t); });
}

const std::vector<float> kLevels{0.025f, 0.1f, 0.5f, 0.9f, 0.975f};

// Repeat-last with levels at +-0.5 and +-1 times the window's last step size, so every
// window's levels differ (a twin fed another batch's levels would score differently);
// `cal` applied when given.
NamedForecaster repeat_last(const char* name, int H, const Calibration* cal) {
  auto levels = std::make_shared<std::vector<float>>();
  BatchForecaster f = [levels, H, cal](const SampleBatch& s, float* out) {
    levels->resize(static_cast<size_t>(s.count * H * 5));
    for (int64_t b = 0; b < s.count; ++b) {
      const float* x = s.context_values + (b + 1) * s.context;
      const float last = x[-1], step = std::fabs(x[-1] - x[-2]) + 0.1f;
      const float spread[] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f};
      for (int h = 0; h < H; ++h) {
        out[b * H + h] = last;
        for (int j = 0; j < 5; ++j)
          (*levels)[static_cast<size_t>((b * H + h) * 5 + j)] = last + spread[j] * step;
      }
    }
    if (cal) cal->apply(levels->data(), s.count, H);
  };
  return {name, f, kLevels, levels};
}

NamedForecaster twin_of(int base, const Calibration& cal, int H) {
  NamedForecaster t{"twin", nullptr, kLevels, std::make_shared<std::vector<float>>()};
  t.base = base;
  t.adjust_levels = [&cal, H](float* lv, int64_t count) { cal.apply(lv, count, H); };
  return t;
}

void check_same(const ScoredModel& a, const ScoredModel& b) {
  CHECK(a.scaled.mse == b.scaled.mse);
  CHECK(a.original.mase == b.original.mase);
  REQUIRE(a.intervals);
  REQUIRE(b.intervals);
  CHECK(a.intervals->wql == b.intervals->wql);
  CHECK(a.intervals->pinball == b.intervals->pinball);
  REQUIRE(a.intervals->intervals.size() == b.intervals->intervals.size());
  for (size_t k = 0; k < a.intervals->intervals.size(); ++k) {
    CHECK(a.intervals->intervals[k].coverage == b.intervals->intervals[k].coverage);
    CHECK(a.intervals->intervals[k].msis == b.intervals->intervals[k].msis);
  }
}

}  // namespace

TEST_CASE("a twin scores as the forecaster it stands for, per part and over all") {
  const int L = 6, H = 4;
  const data::TimeSeries s = walk(400);
  // Three parts of different lengths; batches of 7 windows cut across them.
  const std::vector<EvalPart> parts{
      {{0, 60}, {1.0}, {1.0}, {}}, {{60, 190}, {2.0}, {2.0}, {}}, {{190, 400}, {0.5}, {0.5}, {}}};
  const Calibration cal = fit_conformal(s, parts, L, H, 7, repeat_last("raw", H, nullptr));
  const PanelScores alone = evaluate_parts(
      s, parts, L, H, 7, {repeat_last("raw", H, nullptr), repeat_last("cal", H, &cal)}, true);
  const PanelScores twin =
      evaluate_parts(s, parts, L, H, 7, {repeat_last("raw", H, nullptr), twin_of(0, cal, H)}, true);
  REQUIRE(twin.all.size() == 2);
  CHECK(twin.all[1].name == "twin");
  check_same(alone.all[0], twin.all[0]);
  check_same(alone.all[1], twin.all[1]);
  // The correction changed something, so the twin cannot pass by echoing its base.
  CHECK(twin.all[1].intervals->intervals[1].coverage !=
        twin.all[0].intervals->intervals[1].coverage);
  REQUIRE(twin.per_part.size() == 3);
  for (size_t p = 0; p < 3; ++p) {
    REQUIRE(twin.per_part[p].size() == 2);
    CHECK(twin.per_part[p][1].name == "twin");
    CHECK(twin.per_part[p][1].scaled.mse == alone.per_part[p][1].scaled.mse);
  }
}

TEST_CASE("a twin of a later, missing or point forecaster is a logic error") {
  const int L = 6, H = 4;
  const data::TimeSeries s = walk(100);
  const std::vector<EvalPart> parts{{{0, 100}, {1.0}, {1.0}, {}}};
  const Calibration cal = fit_conformal(s, parts, L, H, 7, repeat_last("raw", H, nullptr));
  CHECK_THROWS_AS(evaluate_parts(s, parts, L, H, 7, {twin_of(0, cal, H)}, false), std::logic_error);
  CHECK_THROWS_AS(evaluate_parts(s, parts, L, H, 7,
                                 {repeat_last("raw", H, nullptr), twin_of(1, cal, H)}, false),
                  std::logic_error);
  NamedForecaster point{"point", [](const SampleBatch&, float*) {}};
  CHECK_THROWS_AS(evaluate_parts(s, parts, L, H, 7, {point, twin_of(0, cal, H)}, false),
                  std::logic_error);
}
