// Metrics and baselines on series whose answers are known exactly.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/train/baselines.hpp"
#include "attnfc/train/evaluate.hpp"
#include "attnfc/train/metrics.hpp"

using namespace attnfc::train;

namespace {

// One sample holding the `length` values at `values` (all observed).
attnfc::SampleBatch contexts(const float* values, int length) {
  static const std::vector<uint8_t> all_observed(4096, 1);
  return {1, length, 0, 1, values, all_observed.data(), nullptr, nullptr, {}};
}

// A one-channel series of these values (hourly, all observed), for evaluate_windows.
attnfc::data::TimeSeries one_channel(const std::vector<float>& values) {
  attnfc::data::TimeSeries s;
  s.source = "test";
  s.channels = {"y"};
  s.values = values;
  s.observed.assign(values.size(), 1);
  for (size_t t = 0; t < values.size(); ++t) s.timestamps.push_back(3600 * static_cast<int64_t>(t));
  s.missing_per_channel = {0};
  return s;
}

}  // namespace

TEST_CASE("metrics of one window match hand computation") {
  // horizon 2, channels 2: errors (f - y) = {1, -2, 0, 4}
  const float f[] = {2, 0, 3, 8};
  const float y[] = {1, 2, 3, 4};
  MetricAccumulator acc(2, 2, {2.0, 4.0});
  acc.add(f, y);
  const Metrics m = acc.result();
  CHECK(m.mse == doctest::Approx((1 + 4 + 0 + 16) / 4.0));
  CHECK(m.mae == doctest::Approx((1 + 2 + 0 + 4) / 4.0));
  CHECK(m.rmse == doctest::Approx(std::sqrt(21.0 / 4.0)));
  CHECK(m.mape == doctest::Approx(100.0 * (1.0 / 1 + 2.0 / 2 + 0 + 4.0 / 4) / 4.0));
  CHECK(m.smape == doctest::Approx(100.0 * (2.0 / 3 + 4.0 / 2 + 0 + 8.0 / 12) / 4.0));
  // channel 0: |e| = {1, 0} -> MAE 0.5 / 2; channel 1: {2, 4} -> 3 / 4
  CHECK(m.mase == doctest::Approx((0.25 + 0.75) / 2.0));
  CHECK(m.windows == 1);
  CHECK(m.values == 4);
}

TEST_CASE("MAPE is undefined (NaN, JSON null) when the actual values change sign") {
  const float f[] = {1.5f, -0.5f};
  const float y[] = {1.0f, -1.0f};
  MetricAccumulator acc(2, 1);
  acc.add(f, y);
  const Metrics m = acc.result();
  CHECK(std::isnan(m.mape));
  CHECK(to_json(m)["mape"].is_null());
  CHECK(m.smape > 0);  // the other metrics are still computed
  // All negative is fine: a percentage of a quantity that keeps its sign.
  const float yn[] = {-2.0f, -4.0f}, fn[] = {-1.0f, -4.0f};
  MetricAccumulator neg(2, 1);
  neg.add(fn, yn);
  CHECK(neg.result().mape == doctest::Approx(25.0));
}

TEST_CASE("metrics average window means and skip missing actuals") {
  MetricAccumulator acc(2, 1);
  const float f1[] = {1, 1}, y1[] = {0, 0};              // window mse 1
  const float f2[] = {3, 0}, y2[] = {0, std::nanf("")};  // one observed value, mse 9
  acc.add(f1, y1);
  acc.add(f2, y2);
  const Metrics m = acc.result();
  CHECK(m.mse == doctest::Approx(5.0));  // mean of window means, not of values (11/3)
  CHECK(m.values == 3);
  CHECK(m.windows == 2);
  const float bad[] = {std::nanf(""), 0};
  CHECK_THROWS_WITH_AS(acc.add(bad, y1), doctest::Contains("non-finite forecast"),
                       std::runtime_error);
  // A cell that does not count (a past covariate, a masked target) is not read.
  const uint8_t counted[] = {0, 1};
  acc.add(bad, y1, counted);
  const Metrics after = acc.result();
  CHECK(after.values == 4);
  CHECK(after.windows == 3);
}

TEST_CASE("MASE scale is the in-sample seasonal naive MAE") {
  const float s[] = {0, 1, 0, 3, 0, 5};  // period 2: |0-0|, |3-1|, |0-0|, |5-3| -> 1
  CHECK(mase_scale(s, 6, 1, 2)[0] == doctest::Approx(1.0));
  CHECK(mase_scale(s, 6, 1, 1)[0] == doctest::Approx((1 + 1 + 3 + 3 + 5) / 5.0));
  const float flat[] = {2, 2, 2};
  CHECK(mase_scale(flat, 3, 1, 1)[0] == 1.0);  // constant: falls back to plain MAE
}

namespace {
// Sine waves plus Gaussian noise (Box-Muller on mt19937_64, which the standard pins down).
std::vector<float> seasonal_series(int rows, int period, double noise, uint64_t seed) {
  std::mt19937_64 gen(seed);
  auto normal = [&] {
    const double u1 = (static_cast<double>(gen() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = static_cast<double>(gen() >> 11) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  };
  std::vector<float> s(rows);
  for (int t = 0; t < rows; ++t)
    s[t] = static_cast<float>(std::sin(2 * M_PI * t / period) +
                              0.5 * std::cos(4 * M_PI * t / period) + noise * normal());
  return s;
}
}  // namespace

TEST_CASE("infer_period finds the season and reports none for a trend") {
  auto s = seasonal_series(600, 24, 0.2, 7);
  CHECK(infer_period({s.data(), 600, 1}, 100) == 24);
  auto s7 = seasonal_series(400, 7, 0.1, 3);
  CHECK(infer_period({s7.data(), 400, 1}, 60) == 7);
  std::vector<float> trend(300);
  for (int t = 0; t < 300; ++t) trend[t] = 0.01f * t;
  CHECK(infer_period({trend.data(), 300, 1}, 50) == 1);
}

TEST_CASE("repeat-last and seasonal-naive forecast exactly what they promise") {
  // context 6, horizon 5, 2 channels; channel 0 repeats period 3, channel 1 has a gap at the end
  const float ctx[] = {1, 10, 2, 20, 3, 30, 1, 40, 2, 50, 3, 99};
  const uint8_t obs[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
  const attnfc::SampleBatch samples{1, 6, 0, 2, ctx, obs, nullptr, nullptr, {}};
  std::vector<float> out(10);
  repeat_last(samples, 5, out.data());
  for (int h = 0; h < 5; ++h) {
    CHECK(out[h * 2] == 3);
    CHECK(out[h * 2 + 1] == 50);  // last observed value, not the missing one
  }
  seasonal_naive(samples, 5, 3, out.data());
  const float expect0[] = {1, 2, 3, 1, 2};
  for (int h = 0; h < 5; ++h) CHECK(out[h * 2] == expect0[h]);
  CHECK_THROWS_AS(seasonal_naive(samples, 5, 7, out.data()), std::invalid_argument);
}

TEST_CASE("seasonal-naive: a gap across the context's start falls back to the last observed") {
  // context 6, period 3: horizon step 1 reads step 3, and nothing at or before it is observed.
  const float ctx[] = {9, 9, 9, 9, 7, 8};
  const uint8_t obs[] = {0, 0, 0, 0, 1, 1};
  const attnfc::SampleBatch samples{1, 6, 0, 1, ctx, obs, nullptr, nullptr, {}};
  std::vector<float> out(4);
  seasonal_naive(samples, 4, 3, out.data());
  const float expect[] = {8, 7, 8, 8};  // steps 3 -> last (8), 4 -> 7, 5 -> 8, 3 -> 8
  for (int h = 0; h < 4; ++h) CHECK(out[h] == expect[h]);
}

TEST_CASE("cholesky_solve solves a known SPD system") {
  std::vector<double> A{4, 2, 0, 2, 5, 1, 0, 1, 3};
  const double x[] = {1, -2, 3};
  std::vector<double> b{4 * 1 + 2 * -2, 2 * 1 + 5 * -2 + 1 * 3, -2 + 3 * 3};
  cholesky_solve(A, 3, b, 1);
  for (int i = 0; i < 3; ++i) CHECK(b[i] == doctest::Approx(x[i]).epsilon(1e-12));
  std::vector<double> indefinite{1, 2, 2, 1}, rhs{1, 1};
  CHECK_THROWS_AS(cholesky_solve(indefinite, 2, rhs, 1), std::runtime_error);
}

TEST_CASE("NLinear is exact on a trend and on a pure season, and beats repeat-last") {
  const int L = 24, H = 12;
  std::vector<float> trend(200);
  for (int t = 0; t < 200; ++t) trend[t] = 0.5f * t - 3;
  NLinear m = NLinear::fit({trend.data(), 150, 1}, L, H);
  CHECK(m.fit_windows() == 150 - L - H + 1);
  std::vector<float> out(H);
  m.forecast(contexts(&trend[150 - L], L), out.data());
  for (int h = 0; h < H; ++h) CHECK(out[h] == doctest::Approx(trend[150 + h]).epsilon(1e-4));

  // A noiseless season of period 8 is a linear function of the context.
  auto s = seasonal_series(400, 8, 0.0, 0);
  NLinear ms = NLinear::fit({s.data(), 300, 1}, L, H);
  ms.forecast(contexts(&s[340 - L], L), out.data());
  for (int h = 0; h < H; ++h) CHECK(out[h] == doctest::Approx(s[340 + h]).epsilon(1e-3));

  // On noisy seasonal data, scored on the same held-out windows, NLinear beats repeat-last.
  auto noisy = seasonal_series(800, 12, 0.3, 11);
  int period = 0;
  auto fc = baseline_forecasters({noisy.data(), 500, 1}, L, H, 0, &period);
  CHECK(period == 12);
  const attnfc::data::TimeSeries all = one_channel(noisy);
  const attnfc::data::RowRange rows{500 - L, 800};  // targets 500..800, contexts before them
  auto mase = mase_scale(noisy.data(), 500, 1, period);
  auto scored = evaluate_windows(all, rows, L, H, 32, {}, mase, mase, fc);
  REQUIRE(scored.size() == 3);
  CHECK(scored[0].scaled.windows == 800 - H - 500 + 1);
  CHECK(scored[2].scaled.mse < 0.6 * scored[0].scaled.mse);
  CHECK(scored[1].scaled.mse < scored[0].scaled.mse);
  CHECK(scored[0].original.mse == scored[0].scaled.mse);  // no unscale given: same units
}

TEST_CASE("evaluate_windows scores in original units through the unscale callback") {
  std::vector<float> s(100);
  for (int t = 0; t < 100; ++t) s[t] = static_cast<float>(t % 5);
  auto fc = baseline_forecasters({s.data(), 60, 1}, 10, 3, 0, nullptr);
  const attnfc::data::TimeSeries all = one_channel(s);
  auto unscale = [](float* v, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i) v[i] = v[i] * 10 + 100;
  };
  auto mase = mase_scale(s.data(), 60, 1, 1);
  auto scored = evaluate_windows(all, {60 - 10, 100}, 10, 3, 7, unscale, mase, mase, fc);
  CHECK(scored[0].original.mse == doctest::Approx(100 * scored[0].scaled.mse));
  CHECK(scored[0].original.mae == doctest::Approx(10 * scored[0].scaled.mae));
  CHECK(scored[1].scaled.mse == 0);  // period 5 inferred and exact
  CHECK_THROWS_AS(evaluate_windows(all, {95 - 10, 97}, 10, 3, 7, {}, mase, mase, fc),
                  attnfc::InputError);
}

TEST_CASE("NLinear fit is identical at 1 and 2 threads") {
  auto s = seasonal_series(700, 24, 0.5, 5);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  NLinear a = NLinear::fit({s.data(), 700, 1}, 48, 24);
  omp_set_num_threads(2);
  NLinear b = NLinear::fit({s.data(), 700, 1}, 48, 24);
  omp_set_num_threads(saved);
  CHECK(a.weights() == b.weights());
  CHECK(a.bias() == b.bias());
}

TEST_CASE("infer_period finds the daily season of ETTh1 (OT alone and all 7 channels)") {
  std::ifstream f(std::string(ATTNFC_SOURCE_DIR) + "/datasets/ETTh1.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);
  std::vector<float> all, ot;
  while (all.size() < 8640 * 7 && std::getline(f, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');  // date
    for (int k = 0; k < 7; ++k) {
      std::getline(ss, cell, ',');
      all.push_back(std::stof(cell));
      if (k == 6) ot.push_back(all.back());
    }
  }
  CHECK(infer_period({ot.data(), 8640, 1}, 336) == 24);   // the raw ACF says 22
  CHECK(infer_period({all.data(), 8640, 7}, 336) == 24);  // its highest peak is at 48
}
