// The quantile start (train/quantile_start.hpp): the empirical quantile rule on hand-worked
// values, the head bias that spaces the levels, and the point of it: on a series whose noise
// is known (i.i.d. Gaussian), the untrained model's 80% and 95% intervals must cover within
// 2 points of nominal on windows the start never saw, where the zero head's do not.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/window.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/quantile_start.hpp"
#include "attnfc/train/run_config.hpp"

#include "../support/hourly_series.hpp"

using namespace attnfc;
using namespace attnfc::train;

namespace {

const std::vector<float> kStartLevels{0.025f, 0.1f, 0.5f, 0.9f, 0.975f};

model::ModelConfig start_config() {
  model::ModelConfig c;
  c.context_length = 16;
  c.patch_len = 4;
  c.horizon = 3;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_layers = 1;
  c.ff_mult = 2;
  c.dropout = 0.0f;
  c.quantiles = kStartLevels;
  return c;
}

data::TimeSeries start_series(size_t rows) {
  return attnfc_test::hourly_series(
      rows, [](size_t t) { return 5.0f + 2.0f * kernels::random_normal(97, t); });
}

// Two-sided coverage of the intervals (level j, level Q-1-j), j = 0 (95%) and 1 (80%), of
// `net`'s forecasts from every stride-1 window of rows [begin, end).
std::vector<double> coverage(const model::PatchTransformer& net, const data::TimeSeries& s,
                             size_t begin, size_t end) {
  const int64_t L = net.config().context_length, H = net.config().horizon, Q = 5;
  std::vector<float> ctx;
  int64_t count = 0;
  for (size_t t = begin; t + L + H <= end; ++t, ++count)
    ctx.insert(ctx.end(), s.values.begin() + static_cast<int64_t>(t),
               s.values.begin() + static_cast<int64_t>(t) + L);
  std::vector<float> levels;
  net.forecast(ctx.data(), nullptr, count, L, 0, {}, &levels);
  std::vector<double> inside(2, 0.0);
  for (int64_t w = 0; w < count; ++w)
    for (int64_t k = 0; k < H; ++k) {
      const float y = s.values[begin + static_cast<size_t>(w + L + k)];
      for (int j = 0; j < 2; ++j) {
        const float lo = levels[static_cast<size_t>((w * H + k) * Q + j)];
        const float hi = levels[static_cast<size_t>((w * H + k) * Q + Q - 1 - j)];
        inside[static_cast<size_t>(j)] += lo <= y && y <= hi;
      }
    }
  for (double& c : inside) c /= static_cast<double>(count * H);
  return inside;
}

}  // namespace

TEST_CASE("quantile start: the empirical quantile and the level gaps, by hand") {
  const std::vector<double> sorted{0, 1, 2, 3, 4};
  CHECK(empirical_quantile(sorted, 0.5) == 2.0);
  CHECK(empirical_quantile(sorted, 0.1) == doctest::Approx(0.4));
  CHECK(empirical_quantile(sorted, 0.975) == doctest::Approx(3.9));
  CHECK(std::isnan(empirical_quantile({}, 0.5)));
  // Qe(0.025, 0.1, 0.5, 0.9, 0.975) = 0.1, 0.4, 2, 3.6, 3.9.
  const std::vector<double> g = level_gaps(sorted, kStartLevels, 2);
  REQUIRE(g.size() == 5);
  CHECK(g[0] == doctest::Approx(0.3));
  CHECK(g[1] == doctest::Approx(1.6));
  CHECK(g[2] == 0.0);
  CHECK(g[3] == doctest::Approx(1.6));
  CHECK(g[4] == doctest::Approx(0.3));
  // Ties cannot be represented by levels that never cross: the smallest gap instead.
  for (double x : level_gaps({1, 1, 1, 1}, kStartLevels, 2))
    if (x != 0.0) CHECK(x == kMinLevelGap);
  // No errors at all (a past covariate): the zero head's gaps.
  CHECK(level_gaps({}, kStartLevels, 2) == std::vector<double>{0.5, 0.5, 0.0, 0.5, 0.5});
}

TEST_CASE("quantile start: the head bias spaces the levels by the gaps, the median stays") {
  const model::ModelConfig c = start_config();
  ag::ParameterSet params;
  model::PatchTransformer net(c, params, 3);
  std::vector<float> ctx(16);
  for (size_t t = 0; t < ctx.size(); ++t) ctx[t] = static_cast<float>(std::sin(0.9 * t) + 0.1 * t);
  std::vector<float> before, after;
  const std::vector<float> p0 = net.forecast(ctx.data(), nullptr, 1, 16, 0, {}, &before);
  // Steps 0..2, levels 0..4: gaps chosen unequal per step and level.
  std::vector<double> gaps;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 5; ++j) gaps.push_back(j == 2 ? 0.0 : 0.2 * (k + 1) + 0.05 * j);
  net.set_level_gaps(gaps);
  const std::vector<float> p1 = net.forecast(ctx.data(), nullptr, 1, 16, 0, {}, &after);
  CHECK(p0 == p1);  // the point forecast is untouched
  // The zero head puts neighbours sigma / 2 apart, so sigma = 2 (level 3 - level 2) before.
  for (int k = 0; k < 3; ++k) {
    const float* b = &before[static_cast<size_t>(k * 5)];
    const float* a = &after[static_cast<size_t>(k * 5)];
    const double sigma = 2.0 * (b[3] - b[2]);
    for (int j = 0; j < 5; ++j) {
      if (j == 2) continue;
      const double got = j > 2 ? a[j] - a[j - 1] : a[j + 1] - a[j];
      CHECK(got == doctest::Approx(sigma * gaps[static_cast<size_t>(k * 5 + j)]).epsilon(1e-4));
    }
  }
  CHECK_THROWS_AS(net.set_level_gaps(std::vector<double>(5, 0.5)), std::invalid_argument);
  gaps[0] = 0.0;
  CHECK_THROWS_AS(net.set_level_gaps(gaps), std::invalid_argument);
  gaps[0] = NAN;
  CHECK_THROWS_AS(net.set_level_gaps(gaps), std::invalid_argument);
}

TEST_CASE("quantile start: the median's errors are in sigma units and NaN where not counted") {
  const model::ModelConfig c = start_config();
  ag::ParameterSet params;
  model::PatchTransformer net(c, params, 3);
  SampleBuffers s(2, 16, 3, 1);
  for (size_t t = 0; t < 16; ++t) {
    s.context_values[t] = static_cast<float>(std::sin(0.9 * t));
    s.context_values[16 + t] = 3.0f * s.context_values[t];  // the same window, scaled by 3
  }
  std::fill(s.context_observed.begin(), s.context_observed.end(), 1);
  std::fill(s.target_observed.begin(), s.target_observed.end(), 1);
  for (size_t k = 0; k < 3; ++k) {
    s.target_values[k] = 0.5f + static_cast<float>(k);
    s.target_values[3 + k] = 3.0f * s.target_values[k];
  }
  s.target_observed[4] = 0;
  const std::vector<float> e = net.median_errors(s.view(2));
  REQUIRE(e.size() == 6);
  CHECK(std::isfinite(e[0]));
  CHECK(e[1] > e[0]);                                  // targets rise, the naive median stays
  CHECK(e[3] == doctest::Approx(e[0]).epsilon(1e-5));  // scale-free
  CHECK(std::isnan(e[4]));
  CHECK(e[5] == doctest::Approx(e[2]).epsilon(1e-5));
}

TEST_CASE("quantile start: coverage within 2 points of nominal on unseen Gaussian windows") {
  const data::TimeSeries s = start_series(24000);
  const model::ModelConfig c = start_config();
  ag::ParameterSet params;
  model::PatchTransformer net(c, params, 5);
  const std::vector<double> zero = coverage(net, s, 12000, 24000);
  data::WindowSampler windows(s, data::RowRange{0, 12000}, 16, 3, c.channel_mode);
  SampleBuffers buffers(64, 16, 3, 1);
  const QuantileStart qs = init_quantile_levels(net, windows, buffers, 1, 8192);
  CHECK(qs.windows == 8192);
  CHECK(qs.first_width > 0);
  const std::vector<double> fitted = coverage(net, s, 12000, 24000);
  CAPTURE(zero[0]);
  CAPTURE(zero[1]);
  CHECK(std::fabs(zero[1] - 0.80) > 0.1);  // levels sigma / 2 apart: far from nominal
  CHECK(std::fabs(fitted[1] - 0.80) <= 0.02);
  CHECK(std::fabs(fitted[0] - 0.95) <= 0.02);
  // The same seed draws the same windows: the same gaps, bit for bit.
  ag::ParameterSet params2;
  model::PatchTransformer again(c, params2, 5);
  data::WindowSampler windows2(s, data::RowRange{0, 12000}, 16, 3, c.channel_mode);
  init_quantile_levels(again, windows2, buffers, 1, 8192);
  CHECK(coverage(again, s, 12000, 24000) == fitted);
}

TEST_CASE("quantile start: train.quantile_init takes residuals or zero, named when wrong") {
  nlohmann::json j = {{"data", {{"path", "x.csv"}}},
                      {"model", nlohmann::json::object()},
                      {"train", nlohmann::json::object()}};
  CHECK(parse_run_config(j).train.quantile_init == "residuals");
  j["train"]["quantile_init"] = "zero";
  CHECK(parse_run_config(j).train.quantile_init == "zero");
  CHECK(to_json(parse_run_config(j))["train"]["quantile_init"] == "zero");
  j["train"]["quantile_init"] = "median";
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("train.quantile_init"), InputError);
}
