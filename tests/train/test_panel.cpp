// A panel (several series in one TimeSeries, data::SeriesSegment) through the split, the
// per-series scaler, the sampler and the Scorer: nothing crosses from one series to the next,
// each series is scaled by its own training rows, and the aggregate scores are what the
// per-series scores say they should be.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "attnfc/base/error.hpp"
#include "attnfc/data/panel.hpp"
#include "attnfc/data/panel_scaler.hpp"
#include "attnfc/data/window.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/scorer.hpp"

using namespace attnfc;

namespace {

// Three hourly series of different lengths and scales, one channel: level + amplitude *
// daily cycle. Series k's value at row t encodes (k, t) in its fractional part so a test
// can tell where any sample value came from.
data::TimeSeries make_panel(const std::vector<size_t>& lengths, const std::vector<double>& level) {
  data::TimeSeries s;
  s.source = "panel.csv";
  s.channels = {"y"};
  s.id_column = "id";
  s.frequency = data::Frequency::parse("1h");
  for (size_t k = 0; k < lengths.size(); ++k) {
    const size_t begin = s.rows();
    for (size_t t = 0; t < lengths[k]; ++t) {
      s.timestamps.push_back(static_cast<int64_t>(t) * 3600);
      s.values.push_back(static_cast<float>(level[k] * (2 + std::sin(2 * M_PI * t / 24.0)) +
                                            1e-3 * static_cast<double>(k)));
      s.observed.push_back(1);
    }
    s.segments.push_back({"S" + std::to_string(k), begin, s.rows()});
  }
  s.missing_per_channel = {0};
  return s;
}

train::DataConfig last_horizon() {
  train::DataConfig d;
  d.csv.path = "panel.csv";
  d.split_protocol = "last_horizon";
  return d;
}

}  // namespace

TEST_CASE("panel split: per series, shifted into the panel's rows; short series are left out") {
  // 35 rows < context 24 + 2 x horizon 8: series S1 cannot be split.
  const data::TimeSeries s = make_panel({200, 35, 150}, {1, 10, 100});
  const data::PanelSplit sp = train::make_panel_split(last_horizon(), s, 24, 8);
  REQUIRE(sp.splits.size() == 2);
  CHECK(sp.series == std::vector<size_t>{0, 2});
  REQUIRE(sp.skipped.size() == 1);
  CHECK(sp.skipped[0].find("series 'S1'") != std::string::npos);
  const data::Split& a = sp.splits[0];
  CHECK(a.test.end == 200);
  CHECK(a.test_targets().begin == 192);
  CHECK(a.val_targets().begin == 184);
  CHECK(a.train.end == 184);
  const data::Split& c = sp.splits[1];  // series 2 starts at panel row 235
  CHECK(c.train.begin == 235);
  CHECK(c.test.end == 385);
  CHECK(c.test_targets().begin == 377);
  // Every series too short: one error naming the first.
  const data::TimeSeries tiny = make_panel({30, 31}, {1, 1});
  CHECK_THROWS_WITH_AS(train::make_panel_split(last_horizon(), tiny, 24, 8),
                       doctest::Contains("none of the 2 series"), InputError);
}

TEST_CASE("panel sampler: windows over several ranges never cross from one to the next") {
  const data::TimeSeries s = make_panel({50, 40, 45}, {1, 2, 3});
  const std::vector<data::RowRange> parts = {{0, 50}, {50, 60}, {90, 135}};
  const data::WindowSampler w(s, parts, 8, 4, ChannelMode::kIndependent);
  // 50 - 12 + 1 = 39, 10 rows: none, 45 - 12 + 1 = 34.
  REQUIRE(w.num_windows() == 39 + 34);
  std::set<size_t> starts;
  for (size_t i = 0; i < w.num_windows(); ++i) {
    const data::WindowRef r = w.window(i);
    const data::RowRange& p = parts[r.part];
    CHECK(r.start_row >= p.begin);
    CHECK(r.start_row + 12 <= p.end);
    starts.insert(r.start_row);
  }
  CHECK(starts.size() == w.num_windows());
  CHECK(w.window(38).part == 0);
  CHECK(w.window(39).part == 2);
  CHECK(w.window(39).start_row == 90);
  // One range gives the single-series sampler's windows, in the same order.
  const data::WindowSampler one(s, data::RowRange{0, 50}, 8, 4, ChannelMode::kIndependent);
  const data::WindowSampler many(s, std::vector<data::RowRange>{{0, 50}}, 8, 4,
                                 ChannelMode::kIndependent);
  REQUIRE(one.num_windows() == many.num_windows());
  for (size_t i = 0; i < one.num_windows(); ++i)
    CHECK(one.window(i).start_row == many.window(i).start_row);
}

TEST_CASE("panel scaler: each series by its own training rows, round trip by id") {
  const data::TimeSeries s = make_panel({200, 200}, {1, 1000});
  const data::PanelSplit sp = train::make_panel_split(last_horizon(), s, 24, 8);
  const data::PanelScaler sc = data::PanelScaler::fit(s, sp);
  REQUIRE(sc.size() == 2);
  CHECK(sc.at(1).mean(0) == doctest::Approx(1000 * sc.at(0).mean(0)).epsilon(1e-4));
  CHECK(sc.at(1).scale(0) == doctest::Approx(1000 * sc.at(0).scale(0)).epsilon(1e-3));
  // Fit on training rows only: changing a test value of series 0 changes nothing.
  data::TimeSeries leak = s;
  leak.values[199] = 1e6f;
  CHECK(data::PanelScaler::fit(leak, sp).at(0).mean(0) == sc.at(0).mean(0));
  const data::PanelScaler back = data::PanelScaler::from_json(sc.to_json());
  REQUIRE(back.find("S1") != nullptr);
  CHECK(back.find("S1")->mean(0) == sc.at(1).mean(0));
  CHECK(back.find("S9") == nullptr);
  // series_of: series 1 alone, rows renumbered.
  const data::TimeSeries one = data::series_of(s, 1);
  CHECK(one.rows() == 200);
  CHECK(one.values[0] == s.values[200]);
  CHECK(one.segments.empty());
}

TEST_CASE("panel scorer: aggregate MSE is the window mean, MASE the mean over series") {
  const data::TimeSeries s = make_panel({300, 300}, {1, 50});
  train::DataConfig d;
  d.csv.path = "panel.csv";
  d.split_protocol = "fractions";
  d.train_frac = 0.6, d.test_frac = 0.2;
  const data::PanelSplit sp = train::make_panel_split(d, s, 48, 8);
  REQUIRE(sp.splits.size() == 2);
  const data::PanelScaler sc = data::PanelScaler::fit(s, sp);
  const train::Scorer scorer(s, sc, sp, 48, 8, 16, {"test"});
  CHECK(scorer.seasonal_period() == 24);
  nlohmann::json per;
  model::ModelConfig cfg;  // any model will do: the baselines are what is checked
  cfg.context_length = 48, cfg.patch_len = 8, cfg.horizon = 8, cfg.d_model = 8;
  cfg.n_heads = 2, cfg.n_layers = 1, cfg.ff_mult = 2, cfg.dropout = 0.0f;
  ag::ParameterSet params;
  const model::PatchTransformer net(cfg, params, 1);
  const nlohmann::json all = scorer.evaluate({&net}, {}, nullptr, nullptr, &per);
  REQUIRE(per["test"].size() == 2);
  const auto metric = [](const nlohmann::json& models, const char* unit, const char* key) {
    return models.at("repeat-last").at(unit).at(key).get<double>();
  };
  const nlohmann::json& m0 = per["test"][0]["models"];
  const nlohmann::json& m1 = per["test"][1]["models"];
  const double w0 = m0["repeat-last"]["scaled"]["windows"].get<double>();
  const double w1 = m1["repeat-last"]["scaled"]["windows"].get<double>();
  const nlohmann::json& agg = all["test"]["models"];
  CHECK(metric(agg, "original", "mse") ==
        doctest::Approx((w0 * metric(m0, "original", "mse") + w1 * metric(m1, "original", "mse")) /
                        (w0 + w1)));
  CHECK(metric(agg, "scaled", "mase") ==
        doctest::Approx((metric(m0, "scaled", "mase") + metric(m1, "scaled", "mase")) / 2));
  // Series 1 is series 0 x 50 (plus a constant): the same scaled errors, 2500x the squared
  // error in original units.
  CHECK(metric(m1, "scaled", "mse") == doctest::Approx(metric(m0, "scaled", "mse")).epsilon(1e-3));
  CHECK(metric(m1, "original", "mse") ==
        doctest::Approx(2500 * metric(m0, "original", "mse")).epsilon(1e-3));
  CHECK(all["test"]["series"] == 2);
}

TEST_CASE("panel sampler: drawn by series, a short series weighs as much as a long one") {
  const data::TimeSeries s = make_panel({1000, 112, 60}, {1, 2, 3});
  // Windows of 12 rows: 989, 101, 49; the last range is cut to 11 rows, which holds none.
  const std::vector<data::RowRange> parts = {{0, 1000}, {1000, 1112}, {1112, 1123}};
  data::WindowSampler w(s, parts, 8, 4, ChannelMode::kIndependent);
  REQUIRE(w.num_windows() == 989 + 101);
  w.draw_by_series(42);
  size_t per_part[3] = {0, 0, 0};
  for (size_t i = 0; i < w.num_windows(); ++i) {
    const data::WindowRef r = w.window(i);
    CHECK(r.start_row + 12 <= parts[r.part].end);
    ++per_part[r.part];
  }
  CHECK(per_part[2] == 0);
  // 1090 draws split evenly between the two series that have windows (binomial sd ~16.5).
  CHECK(per_part[0] > 480);
  CHECK(per_part[1] > 480);
  // The same seed gives the same draws; shuffle() gives back every window once.
  data::WindowSampler again(s, parts, 8, 4, ChannelMode::kIndependent);
  again.draw_by_series(42);
  for (size_t i = 0; i < w.num_windows(); i += 97)
    CHECK(again.window(i).start_row == w.window(i).start_row);
  w.shuffle(42);
  std::set<size_t> starts;
  for (size_t i = 0; i < w.num_windows(); ++i) starts.insert(w.window(i).start_row);
  CHECK(starts.size() == w.num_windows());
}
