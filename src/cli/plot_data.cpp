// Gathering what plot shows (plot_data.hpp): the windows, their forecasts and errors, the
// split's metrics. The forecasters are the ones evaluate scores, built the same way (the
// model, its linear start, the baselines fitted on the training rows with the seasonal
// period the Scorer infers) and scored by the same function, so the page and
// `attnfc evaluate` give the same numbers.
#include "plot_data.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"
#include "plot_forecasters.hpp"

namespace attnfc::cli {

namespace {

namespace fs = std::filesystem;

// `count` windows spread evenly over the split's `total` (its first and last among them),
// and `chosen`; in order, each once.
std::vector<long> shown_windows(long total, long chosen, int count) {
  std::vector<long> out{chosen};
  for (int k = 0; count > 1 && k < count; ++k)
    out.push_back(std::lround(static_cast<double>(k) * (total - 1) / (count - 1)));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

PointScores point_scores(const train::ScoredModel& m) {
  return {m.name, m.scaled.mse, m.scaled.mae, m.original.mse, m.original.mae};
}

// The split's metrics from Scorer::evaluate's JSON, for the forecasters drawn.
std::vector<PointScores> split_scores(const nlohmann::json& models,
                                      const std::vector<std::string>& names) {
  std::vector<PointScores> out;
  const auto get = [](const nlohmann::json& m, const char* unit, const char* key) {
    const nlohmann::json& v = m.at(unit).at(key);
    return v.is_number() ? v.get<double>() : NAN;
  };
  for (const std::string& name : names) {
    if (!models.contains(name)) continue;
    const nlohmann::json& m = models.at(name);
    out.push_back({name, get(m, "scaled", "mse"), get(m, "scaled", "mae"),
                   get(m, "original", "mse"), get(m, "original", "mae")});
  }
  return out;
}

// The coverage of the drawn intervals over the split (evaluate's "intervals" entry of the
// calibrated model when there is one, else of the model's own).
void read_coverage(const nlohmann::json& models, PlotData& d) {
  for (const char* name : {"attnfc-calibrated", "attnfc"}) {
    if (!models.contains(name) || !models.at(name).contains("intervals")) continue;
    d.intervals_of = name;
    for (const nlohmann::json& i : models.at(name).at("intervals").at("intervals"))
      d.coverage.emplace_back(i.at("nominal").get<double>(), i.at("coverage").get<double>());
    return;
  }
}

// One window: every forecaster's forecast at its origin (original units, checked finite)
// and its errors there, from evaluate_windows over exactly that window.
ForecastWindow score_window(PlotForecasters& f, const data::TimeSeries& scaled,
                            const data::Scaler& scaler, int L, int H, long index, size_t origin) {
  ForecastWindow w{index, origin, {}, {}, {}};
  const train::Unscale unscale = [&scaler](float* v, int64_t rows) {
    scaler.inverse_transform(v, static_cast<size_t>(rows));
  };
  const std::vector<train::ScoredModel> scored =
      train::evaluate_windows(scaled, {origin - L, origin + H}, L, H, 1, unscale, {}, {}, f.all);
  for (size_t k = 0; k < scored.size(); ++k) {
    w.lines.push_back({scored[k].name, *f.last[k]});
    w.scores.push_back(point_scores(scored[k]));
  }
  w.levels = f.model_levels_original(scaler, H);
  return w;
}

// --window against the split; InputError naming the option otherwise.
void check_window(const PlotOptions& a, long windows) {
  if (a.window < -1 || a.window >= windows)
    throw InputError("--window: found " + std::to_string(a.window) + ", expected 0.." +
                     std::to_string(windows - 1) + " (or -1 for the last window of the " + a.split +
                     " split)");
}

// The windows to draw: `shown` without those no forecaster can read; the chosen one must be
// readable (InputError naming --window otherwise).
std::vector<long> readable_windows(const std::vector<long>& shown, long chosen,
                                   const data::TimeSeries& series, size_t first_target, int L) {
  std::vector<long> out;
  for (const long w : shown) {
    const long c = series.unobserved_target(first_target + static_cast<size_t>(w) - L, L);
    if (c < 0) {
      out.push_back(w);
    } else if (w == chosen) {
      throw InputError("--window: window " + std::to_string(w) + " cannot be forecast: column '" +
                       series.channels[static_cast<size_t>(c)] + "' is missing in all of its " +
                       std::to_string(L) + " context rows; expected a window with a value there");
    }
  }
  return out;
}

// --history against the rows before the earliest window shown.
void check_history(int history, size_t first_origin) {
  if (static_cast<size_t>(history) > first_origin)
    throw InputError("--history: found " + std::to_string(history) + ", expected 1.." +
                     std::to_string(first_origin) +
                     " (the earliest window shown starts that many rows after the first row)");
}

}  // namespace

PlotData gather_plot_data(const PlotOptions& a, const train::LoadedModel& lm,
                          const data::TimeSeries& series) {
  PlotData d;
  const int L = d.context = lm.context(), H = d.horizon = lm.horizon();
  d.targets = series.target_channels > 0 ? series.target_channels : series.num_channels();
  d.quantiles = lm.config().quantiles;
  if (d.quantiles.size() > 1) d.pairs = train::symmetric_pairs(d.quantiles);
  d.kept_epoch = lm.epoch;
  d.split = a.split;
  train::DataConfig dc = lm.run.data;
  dc.csv.path = a.input;
  const data::Split split = train::make_split(dc, series, static_cast<size_t>(L), H);
  data::validate_split(split, L, H, a.input);
  d.split_targets = a.split == "val" ? split.val_targets() : split.test_targets();
  d.split_windows = static_cast<long>(d.split_targets.size()) - H + 1;
  check_window(a, d.split_windows);
  const long chosen = a.window < 0 ? d.split_windows - 1 : a.window;
  const std::vector<long> shown = readable_windows(
      shown_windows(d.split_windows, chosen, a.windows), chosen, series, d.split_targets.begin, L);
  d.history = a.history ? *a.history : std::min(L, 2 * H);
  check_history(d.history, d.split_targets.begin + static_cast<size_t>(shown.front()));

  const data::Scaler scaler = lm.scaler_of(series, split.train, "plot");
  const data::PanelSplit panel{{split}, {0}, {}};
  const data::PanelScaler scalers({series.series_segments().front().id}, {scaler});
  const train::Scorer scorer(series, scalers, panel, L, H, 256, {a.split});
  d.seasonal_period = scorer.seasonal_period();
  const train::LoadedModel start = lm.linear_start_beside();
  d.has_linear_start = !start.networks.empty();
  PlotForecasters f(lm, start, series, scaler, split.train, d.seasonal_period, a);
  for (const long w : shown) {
    d.windows.push_back(score_window(f, scorer.scaled(), scaler, L, H, w,
                                     d.split_targets.begin + static_cast<size_t>(w)));
    if (w == chosen) d.selected = d.windows.size() - 1;
  }
  const nlohmann::json all = scorer.evaluate(lm.members(), start.members(), nullptr, nullptr,
                                             nullptr, lm.calibration.get());
  d.split_scores = split_scores(all.at(a.split).at("models"), f.names());
  read_coverage(all.at(a.split).at("models"), d);
  d.future = forecast_future(f, lm, series, scorer.scaled(), scaler);
  d.curves = gather_curves(a, lm);
  d.attention = gather_attention(lm, scorer.scaled(), d.windows[d.selected].origin, chosen);
  return d;
}

}  // namespace attnfc::cli
