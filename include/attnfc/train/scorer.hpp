#pragma once
// The one scoring protocol of a run: every stride-1 window whose targets lie in a split
// part, the model beside the three baselines on the very same windows, in scaled and in
// original units. Early stopping's validation metric is the same function that writes
// metrics.json (validation_mse == evaluate()["val"]["models"]["attnfc"]["scaled"]["mse"],
// bit for bit), and everything that could only fail when the run is scored (a baseline
// that cannot be fit, a part without a complete window) fails when the Scorer is built,
// before training starts.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/data/panel_scaler.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/evaluate.hpp"
#include "attnfc/train/loaded_model.hpp"

namespace attnfc::train {

class Scorer {
 public:
  // series in original units, as read; scalers.at(k) fit on split.splits[k].train (both
  // must outlive the Scorer). Fits the baselines on the training rows and checks that every
  // part in `parts` ("val", "test") holds a complete window: InputError otherwise, naming
  // the part and the config keys to change. A panel is scored over the windows of all its
  // series kept (evaluate_parts); the seasonal period is the one most series show.
  Scorer(const data::TimeSeries& series, const data::PanelScaler& scalers,
         const data::PanelSplit& split, int context, int horizon, int batch,
         const std::vector<std::string>& parts);

  // The validation metric: the model's MSE (scaled units; the mean over windows of each
  // window's mean squared error over its observed targets) on the first max_windows
  // validation windows (0 = all; a panel: the first ceil(max_windows / series) of each
  // series). NaN when no window has an observed target.
  double validation_mse(const Members& model, int64_t max_windows = 0) const;

  // The model ("attnfc"), its linear start ("linear-start": the model as it was before
  // training, the least-squares NLinear inside it; left out when empty) and the baselines,
  // on every part given at construction:
  // {"seasonal_period", "<part>": {"windows", "target_rows", "models": {...}}}; *table gets
  // the printable tables.
  // stop: as for evaluate_windows (ScoringInterrupted when it is set).
  // per_series (optional): for a panel, per part, the models' metrics on each series:
  // {"<part>": [{"id", "models"}, ...]}.
  // calibration (optional, a quantile model's): "attnfc-calibrated" is scored too, the same
  // point forecast with the calibrated intervals.
  nlohmann::json evaluate(const Members& model, const Members& linear_start,
                          std::string* table = nullptr, const std::atomic<bool>* stop = nullptr,
                          nlohmann::json* per_series = nullptr,
                          const Calibration* calibration = nullptr) const;
  // Split-conformal corrections of a quantile model's intervals from the validation windows
  // (train/calibration.hpp); the test split is never read.
  Calibration calibrate(const Members& model, const std::string& method) const;

  // evaluate() also gives each model's errors per column and per horizon step (breakdown.hpp)
  // over each part: {"<part>": {"breakdown": {"columns": [names], "<model>": {"scaled",
  // "original"}}}}, and the table a per-column table in original units. Off in training runs
  // (metrics.json stays small); `attnfc evaluate` turns it on.
  void set_breakdown(bool on) { breakdown_ = on; }
  // evaluate() scores the baselines beside the model (on unless turned off: a seed
  // ensemble's members leave them to the ensemble).
  void set_baselines(bool on) { score_baselines_ = on; }
  // evaluate() scores only these of the parts given at construction (a backtest fold: its
  // test windows; validation_mse does not depend on it).
  void set_evaluated_parts(std::vector<std::string> parts) { parts_ = std::move(parts); }
  const std::vector<std::string>& evaluated_parts() const { return parts_; }
  int seasonal_period() const { return period_; }
  // The series in scaled units (the training sampler reads it too: one copy per run).
  const data::TimeSeries& scaled() const { return scaled_; }
  int64_t validation_windows() const;
  const data::PanelSplit& split() const { return split_; }

 private:
  // The rows each series' windows of a part are cut from (its targets and the context
  // before them), with the series' MASE denominators and units.
  // part: "train", "val" or "test".
  std::vector<EvalPart> part_rows(const std::string& part) const;
  // The baselines; for a quantile model (levels q) seasonal naive and NLinear with levels.
  void add_baselines(const std::vector<float>& q, std::vector<NamedForecaster>& all) const;
  std::string describe_part(const std::string& part, int64_t windows, int64_t unscored) const;
  std::string format_scores(const std::vector<ScoredModel>& scored) const;
  nlohmann::json breakdown_json(const std::vector<ScoredModel>& scored) const;

  const data::TimeSeries* series_;
  const data::PanelScaler* scalers_;
  data::PanelSplit split_;
  int context_, horizon_, batch_;
  std::vector<std::string> parts_;
  data::TimeSeries scaled_;  // the series in scaled units
  int period_ = 1;
  bool breakdown_ = false;
  bool score_baselines_ = true;
  std::vector<NamedForecaster> baselines_;
  std::vector<std::vector<double>> mase_scaled_, mase_original_;  // per series kept
};

// series values scaled by scaler, with unobserved values set to NaN when the series'
// missing policy is "mask" (so metrics skip them).
std::vector<float> scaled_with_gaps(const data::TimeSeries& series, const data::Scaler& scaler);
// The same for a panel: each series kept scaled by its own scaler (data::scale_panel).
std::vector<float> scaled_with_gaps(const data::TimeSeries& series, const data::PanelSplit& split,
                                    const data::PanelScaler& scalers);

}  // namespace attnfc::train
