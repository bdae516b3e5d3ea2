// The least-squares start of the linear shortcut: the untrained model (zero Transformer
// head) must then forecast exactly what the fitted NLinear weights say, whatever each
// window's normalisation scale, and the start must refuse configurations it cannot serve.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/train/baselines.hpp"
#include "attnfc/train/linear_init.hpp"
#include "attnfc/train/run_config.hpp"

using namespace attnfc;

namespace {

data::TimeSeries make_series(int rows) {
  data::TimeSeries s;
  s.channels = {"a", "b"};
  for (int t = 0; t < rows; ++t) {
    s.timestamps.push_back(3600LL * t);
    // Two channels with different levels and spreads, so per-window sigma matters.
    s.values.push_back(static_cast<float>(2 * std::sin(0.5 * t) + 0.3 * std::sin(1.7 * t)));
    s.values.push_back(static_cast<float>(10 + 0.2 * std::cos(0.9 * t) + 0.01 * t));
  }
  s.observed.assign(s.values.size(), 1);
  return s;
}

// All rows of a gap-free series, as the trainer passes them (scaled_with_gaps).
train::SeriesRef ref(const data::TimeSeries& s) {
  return {s.values.data(), static_cast<int64_t>(s.rows()), static_cast<int>(s.num_channels())};
}

model::ModelConfig shortcut_config(int lookback) {
  model::ModelConfig c;
  c.context_length = 16;
  c.patch_len = 4;
  c.horizon = 5;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_layers = 1;
  c.ff_mult = 2;
  c.dropout = 0.0f;
  c.linear_lookback = lookback;
  return c;
}

}  // namespace

TEST_CASE("linear shortcut least-squares start: the untrained model is NLinear") {
  const data::TimeSeries series = make_series(240);
  data::Split split;
  split.train = {0, 160};
  for (int lookback : {16, 7}) {  // the whole context, and fewer steps than it
    CAPTURE(lookback);
    ag::ParameterSet params;
    model::PatchTransformer net(shortcut_config(lookback), params, 5);
    const double ridge = 0.5;
    CHECK(train::init_linear_shortcut(net, ref(series), split, ridge).windows > 0);

    // The same fit, done directly on the training rows.
    std::vector<float> rows(series.values.begin(), series.values.begin() + 160 * 2);
    const train::NLinear fit = train::NLinear::fit({rows.data(), 160, 2}, lookback, 5, ridge);
    const std::vector<double>& w = fit.weights();  // [H, K]

    // Forecast windows after the training rows, one channel at a time.
    for (int start : {170, 201}) {
      for (int c = 0; c < 2; ++c) {
        std::vector<float> ctx(16);
        for (int t = 0; t < 16; ++t) ctx[t] = series.value(start + t, c);
        const std::vector<float> got = net.forecast(ctx);
        const double last = ctx[15];
        for (int h = 0; h < 5; ++h) {
          double want = last + fit.bias()[h];
          for (int k = 0; k < lookback; ++k)
            want += w[h * lookback + k] * (ctx[16 - lookback + k] - last);
          CHECK(got[h] == doctest::Approx(want).epsilon(1e-4));
        }
      }
    }
  }
}

TEST_CASE("linear shortcut least-squares start: refused where it does not apply") {
  const data::TimeSeries series = make_series(240);
  data::Split split;
  split.train = {0, 160};
  {
    ag::ParameterSet params;
    model::ModelConfig c = shortcut_config(16);
    c.target = model::HeadTarget::kValue;
    model::PatchTransformer net(c, params, 5);
    CHECK_THROWS_WITH_AS(train::init_linear_shortcut(net, ref(series), split, 1.0),
                         doctest::Contains("model.target"), InputError);
  }
  {
    ag::ParameterSet params;
    model::PatchTransformer net(shortcut_config(0), params, 5);
    CHECK_THROWS_WITH_AS(train::init_linear_shortcut(net, ref(series), split, 1.0),
                         doctest::Contains("linear_lookback"), InputError);
  }
  {  // fewer training rows than one window needs
    ag::ParameterSet params;
    model::PatchTransformer net(shortcut_config(16), params, 5);
    data::Split tiny;
    tiny.train = {0, 12};
    CHECK_THROWS_WITH_AS(train::init_linear_shortcut(net, ref(series), tiny, 1.0),
                         doctest::Contains("train.linear_init"), InputError);
  }
}

TEST_CASE("linear shortcut keys: ranges and the target rule name their keys") {
  nlohmann::json j = {{"data", {{"path", "x.csv"}}},
                      {"model", {{"linear_lookback", 32}, {"target", "value"}}},
                      {"train", nlohmann::json::object()}};
  CHECK_THROWS_WITH_AS(train::parse_run_config(j), doctest::Contains("train.linear_init"),
                       InputError);
  j["train"]["linear_init"] = "zero";
  CHECK_NOTHROW(train::parse_run_config(j));
  j["train"]["linear_init"] = "lsq";
  CHECK_THROWS_WITH_AS(train::parse_run_config(j), doctest::Contains("least_squares"), InputError);
  j["train"]["linear_init"] = "zero";
  j["train"]["linear_lr_scale"] = -1;
  CHECK_THROWS_WITH_AS(train::parse_run_config(j), doctest::Contains("train.linear_lr_scale"),
                       InputError);
  j["train"]["linear_lr_scale"] = 0;
  j["train"]["linear_ridge"] = -0.5;
  CHECK_THROWS_WITH_AS(train::parse_run_config(j), doctest::Contains("train.linear_ridge"),
                       InputError);
}

TEST_CASE("linear shortcut ridge \"auto\": the validation-best candidate, same as given by hand") {
  const data::TimeSeries series = make_series(300);
  data::Split split;
  split.train = {0, 160};
  split.val = {160 - 16, 240};
  ag::ParameterSet pa, pb;
  model::PatchTransformer a(shortcut_config(16), pa, 5), b(shortcut_config(16), pb, 5);
  const train::LinearStart chosen = train::init_linear_shortcut(a, ref(series), split, -1.0);
  CHECK(std::isfinite(chosen.val_mse));
  bool candidate = false;
  for (double r : train::kRidgeCandidates) candidate |= r == chosen.ridge;
  CHECK(candidate);
  const train::LinearStart fixed = train::init_linear_shortcut(b, ref(series), split, chosen.ridge);
  CHECK(std::isnan(fixed.val_mse));
  const ag::Tensor wa = pa.find("linear_skip.weight"), wb = pb.find("linear_skip.weight");
  for (int64_t i = 0; i < wa.numel(); ++i) CHECK(wa.data()[i] == wb.data()[i]);
}

TEST_CASE("train.linear_ridge: a number or \"auto\"") {
  nlohmann::json j = {{"data", {{"path", "x.csv"}}},
                      {"model", {{"linear_lookback", 32}}},
                      {"train", {{"linear_ridge", "auto"}}}};
  CHECK(train::parse_run_config(j).train.linear_ridge < 0);
  CHECK(train::to_json(train::parse_run_config(j))["train"]["linear_ridge"] == "auto");
  j["train"]["linear_ridge"] = "best";
  CHECK_THROWS_WITH_AS(train::parse_run_config(j), doctest::Contains("\"auto\""), InputError);
  j["train"]["linear_ridge"] = 0.3;
  CHECK(train::parse_run_config(j).train.linear_ridge == 0.3);
}
