// The demo's numbers: checked against closed forms, not against themselves.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "attention_probe.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/softmax.hpp"

using namespace attnfc;
using cli::ProbeSeries;

TEST_CASE("period-4 sine, L = 8: causal weights equal the closed form and rows sum to one") {
  const auto r = cli::series_attention(ProbeSeries::Sine, 4.0, 8);
  REQUIRE(r.length == 8);
  REQUIRE(r.weights.size() == 64u);
  CHECK(r.max_row_sum_error < 1e-6);
  // Q = K = V = (sin 2 pi t/4, cos 2 pi t/4): q_i . k_j = cos(pi (i - j) / 2), divided by sqrt(2).
  for (int i = 0; i < 8; ++i) {
    double z = 0;
    for (int j = 0; j <= i; ++j)
      z += std::exp(std::cos(std::numbers::pi * (i - j) / 2) / std::sqrt(2.0));
    for (int j = 0; j < 8; ++j) {
      const float w = r.weights[i * 8 + j];
      if (j > i) {
        CHECK(w == 0.0f);  // the causal mask gives exactly zero weight to the future
      } else {
        const double expect =
            std::exp(std::cos(std::numbers::pi * (i - j) / 2) / std::sqrt(2.0)) / z;
        CHECK(w == doctest::Approx(expect).epsilon(1e-6));
      }
    }
  }
  CHECK(r.weights[0] == doctest::Approx(1.0));  // the first query sees only itself
  // Same phase (lag 4) is preferred over any other earlier position.
  CHECK(r.dominant_lag == 4);
  CHECK(r.lag_lift[4] > 1.0);
  CHECK(r.lag_lift[2] < 1.0);  // opposite phase
  // Lift = mass / uniform mass: at lag 7 only query 7 (8 keys) contributes.
  CHECK(r.lag_lift[7] == doctest::Approx(r.weights[7 * 8 + 0] * 8).epsilon(1e-6));
  // output = weights . V
  for (int i = 0; i < 8; ++i)
    for (int c = 0; c < 2; ++c) {
      double o = 0;
      for (int j = 0; j <= i; ++j) o += r.weights[i * 8 + j] * r.embedding[j * 2 + c];
      CHECK(r.output[i * 2 + c] == doctest::Approx(o).epsilon(1e-5));
    }
}

TEST_CASE("the dominant lag follows the period") {
  CHECK(cli::series_attention(ProbeSeries::Sine, 6.0, 18).dominant_lag == 6);
  CHECK(cli::series_attention(ProbeSeries::Sine, 5.0, 16).dominant_lag == 5);
}

TEST_CASE("on a rising trend every query attends most to the most recent key") {
  const auto r = cli::series_attention(ProbeSeries::Trend, 4.0, 8);
  for (int i = 1; i < 8; ++i)
    for (int j = 1; j <= i; ++j) CHECK(r.weights[i * 8 + j] > r.weights[i * 8 + j - 1]);
  CHECK(r.dominant_lag == 1);
}

TEST_CASE("noise is seeded and the unscaled head is sharper") {
  const auto a = cli::series_attention(ProbeSeries::Noise, 4.0, 8, true, 7);
  const auto b = cli::series_attention(ProbeSeries::Noise, 4.0, 8, true, 7);
  const auto c = cli::series_attention(ProbeSeries::Noise, 4.0, 8, true, 8);
  CHECK(a.weights == b.weights);
  CHECK(a.weights != c.weights);
  const auto s = cli::series_attention(ProbeSeries::Sine, 4.0, 8, true);
  const auto u = cli::series_attention(ProbeSeries::Sine, 4.0, 8, false);
  CHECK(u.max_row_sum_error < 1e-6);
  for (int i = 1; i < 8; ++i) CHECK(u.weights[i * 8 + i] > s.weights[i * 8 + i]);
}

TEST_CASE("bad demo settings are input errors") {
  CHECK_THROWS_AS(cli::series_attention(ProbeSeries::Sine, 1.0, 8), InputError);
  CHECK_THROWS_AS(cli::series_attention(ProbeSeries::Sine, NAN, 8), InputError);
  CHECK_THROWS_AS(cli::series_attention(ProbeSeries::Sine, 4.0, 0), InputError);
  CHECK_THROWS_AS(cli::parse_probe_series("square"), InputError);
  CHECK(cli::parse_probe_series("trend") == ProbeSeries::Trend);
  CHECK_THROWS_AS(cli::probe_width(0), InputError);
  CHECK_THROWS_AS(cli::probe_width(8, 1, 64), InputError);
}

TEST_CASE("softmax_jacobian_norm matches the Jacobian built column by column") {
  const std::vector<float> logits = {0.3f, -1.2f, 2.0f, 0.0f, 0.7f};
  const int n = 5;
  std::vector<float> p(n);
  kernels::softmax_forward(logits.data(), p.data(), 1, n);
  double frob2 = 0;
  for (int j = 0; j < n; ++j) {
    std::vector<float> unit(n, 0.0f), col(n, 0.0f);
    unit[j] = 1.0f;
    kernels::softmax_backward(p.data(), unit.data(), col.data(), 1, n);  // J e_j (J symmetric)
    for (float v : col) frob2 += static_cast<double>(v) * v;
  }
  CHECK(cli::softmax_jacobian_norm(p.data(), n) == doctest::Approx(std::sqrt(frob2)).epsilon(1e-5));
  const std::vector<float> uniform(4, 0.25f), one_hot = {0, 1, 0, 0};
  CHECK(cli::softmax_jacobian_norm(uniform.data(), 4) == doctest::Approx(std::sqrt(3.0) / 4));
  CHECK(cli::softmax_jacobian_norm(one_hot.data(), 4) == 0.0);
}

TEST_CASE("without the sqrt(d_k) divisor the softmax saturates as the width grows") {
  const auto w1 = cli::probe_width(1);
  CHECK(w1.scaled.score_variance == doctest::Approx(w1.unscaled.score_variance));
  const auto w = cli::probe_width(256);
  CHECK(w.max_entropy == doctest::Approx(std::log(64.0)));
  // q.k of unit-variance vectors has variance D; the divisor brings it back to ~1.
  CHECK(w.scaled.score_variance > 0.7);
  CHECK(w.scaled.score_variance < 1.3);
  CHECK(w.unscaled.score_variance > 0.7 * 256);
  CHECK(w.unscaled.score_variance < 1.3 * 256);
  CHECK(w.unscaled.score_variance == doctest::Approx(256 * w.scaled.score_variance).epsilon(1e-4));
  // Scaled: a soft average over many keys. Unscaled: close to one-hot, with a vanishing gradient.
  CHECK(w.scaled.entropy > 0.6 * w.max_entropy);
  CHECK(w.unscaled.entropy < 0.25 * w.scaled.entropy);
  CHECK(w.unscaled.max_weight > 0.8);
  CHECK(w.unscaled.saturated_rows > 0.3);
  CHECK(w.scaled.saturated_rows == 0.0);
  // The mean Jacobian norm first grows (peaked rows have the steepest softmax), then
  // vanishes as rows turn one-hot.
  const auto wide = cli::probe_width(4096);
  CHECK(wide.unscaled.softmax_grad_norm < 0.5 * wide.scaled.softmax_grad_norm);
  CHECK(wide.unscaled.softmax_grad_norm < w.unscaled.softmax_grad_norm);
  CHECK(wide.scaled.score_variance == doctest::Approx(1.0).epsilon(0.1));
  // Growing the width hurts only the unscaled form.
  const auto w16 = cli::probe_width(16);
  CHECK(w16.unscaled.entropy > w.unscaled.entropy);
  CHECK(std::abs(w16.scaled.entropy - w.scaled.entropy) < 0.3);
  const auto again = cli::probe_width(256);
  CHECK(again.unscaled.entropy == w.unscaled.entropy);
}

TEST_CASE("causal_lag_profile: identity, previous-token and uniform heads") {
  const int n = 6;
  std::vector<float> eye(n * n, 0.0f), prev(n * n, 0.0f), uniform(n * n, 0.0f);
  for (int i = 0; i < n; ++i) {
    eye[i * n + i] = 1.0f;
    prev[i * n + (i > 0 ? i - 1 : 0)] = 1.0f;
    for (int j = 0; j <= i; ++j) uniform[i * n + j] = 1.0f / (i + 1);
  }
  const auto e = cli::causal_lag_profile(eye.data(), n);
  CHECK(e.mass[0] == doctest::Approx(1.0));
  CHECK(e.dominant_lag == 0);  // never looks back
  const auto p = cli::causal_lag_profile(prev.data(), n);
  CHECK(p.dominant_lag == 1);
  CHECK(p.mass[1] == doctest::Approx(1.0));
  const auto u = cli::causal_lag_profile(uniform.data(), n);
  for (int l = 0; l < n; ++l) CHECK(u.lift[l] == doctest::Approx(1.0));
  CHECK(u.lift_period == 0);
}

TEST_CASE("lift_period finds a head's periodic lag preference even at an offset") {
  // Each query looks at lags 4, 10, 16, 22 (period 6, first peak at 4, not 6).
  const int n = 30;
  std::vector<float> w(n * n, 0.0f);
  for (int i = 0; i < n; ++i) {
    std::vector<int> keys = {i};
    for (int lag = 4; lag <= i; lag += 6) keys.push_back(i - lag);
    for (int j : keys) w[i * n + j] = 1.0f / keys.size();
  }
  const auto p = cli::causal_lag_profile(w.data(), n);
  CHECK(p.dominant_lag % 6 == 4);
  CHECK(p.lift[4] > 1.0);
  CHECK(p.lift[6] == 0.0);
  CHECK(p.lift_period == 6);
}

TEST_CASE("autocorrelation finds the seasonal period and ignores a trend") {
  std::vector<float> seasonal(24 * 20), trend(200), gappy;
  for (size_t t = 0; t < seasonal.size(); ++t)
    seasonal[t] = static_cast<float>(std::sin(2 * std::numbers::pi * t / 24.0) +
                                     0.3 * std::sin(2 * std::numbers::pi * t / 6.0));
  for (size_t t = 0; t < trend.size(); ++t) trend[t] = 0.1f * t;
  const auto acf = cli::autocorrelation(seasonal, 60);
  REQUIRE(acf.size() == 61u);
  CHECK(acf[0] == doctest::Approx(1.0));
  CHECK(acf[24] > 0.9);
  CHECK(acf[12] < -0.5);
  CHECK(cli::autocorrelation_peak(acf) == 24);
  CHECK(cli::autocorrelation_peak(cli::autocorrelation(trend, 50)) == 0);
  // Missing values are skipped, not propagated.
  gappy = seasonal;
  for (size_t t = 5; t < gappy.size(); t += 17) gappy[t] = NAN;
  const auto g = cli::autocorrelation(gappy, 60);
  for (double v : g) CHECK(std::isfinite(v));
  CHECK(cli::autocorrelation_peak(g) == 24);
  // Degenerate inputs.
  CHECK(cli::autocorrelation(std::vector<float>(10, 3.0f), 5) == std::vector<double>(6, 0.0));
  CHECK(cli::autocorrelation(std::vector<float>{}, 5).size() == 1u);
  CHECK(cli::autocorrelation(std::vector<float>{1, 2, 3}, 10).size() == 3u);
  CHECK(cli::autocorrelation_peak(acf, 0.99) == 0);
}

TEST_CASE("the raw autocorrelation of a drifting daily cycle misses the day") {
  // Why data::seasonal_period differences first (tests/data/test_seasonality.cpp).
  std::vector<float> x(24 * 60);
  for (size_t t = 0; t < x.size(); ++t)
    x[t] = static_cast<float>(20 * std::sin(2 * std::numbers::pi * t / 1500.0) +
                              0.5 * std::sin(2 * std::numbers::pi * t / 24.0));
  CHECK(cli::autocorrelation_peak(cli::autocorrelation(x, 72)) != 24);
}
