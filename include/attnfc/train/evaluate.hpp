#pragma once
// The standard evaluation protocol: every stride-1 window whose targets lie in a split,
// nothing dropped, and the model and every baseline scored on the very same windows, in
// scaled units (what the literature reports for ETT) and in the data's original units.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/train/baselines.hpp"
#include "attnfc/train/breakdown.hpp"
#include "attnfc/train/interval_metrics.hpp"
#include "attnfc/train/metrics.hpp"

namespace attnfc::train {

// Maps [rows, channels] row-major values from scaled to original units, in place.
using Unscale = std::function<void(float* values, int64_t rows)>;

struct NamedForecaster {
  NamedForecaster(std::string name_, BatchForecaster forecast_, std::vector<float> quantiles_ = {},
                  std::shared_ptr<std::vector<float>> levels_ = nullptr)
      : name(std::move(name_)),
        forecast(std::move(forecast_)),
        quantiles(std::move(quantiles_)),
        levels(std::move(levels_)) {}
  std::string name;
  BatchForecaster forecast;
  // A quantile forecaster: its levels, and the buffer each forecast call also fills with
  // every level of every window, [count, H, Q, C] in scaled units (model_forecaster's).
  std::vector<float> quantiles;
  std::shared_ptr<std::vector<float>> levels;
  // A twin of an earlier quantile forecaster of the same list (its index): base's point
  // forecasts, and base's levels passed through adjust_levels(levels, count), with no
  // forward pass of its own (a calibrated model beside its raw self). `forecast` stays
  // empty; only evaluate_parts, which runs every forecaster on a batch before the next
  // batch, honours it.
  int base = -1;
  std::function<void(float* levels, int64_t count)> adjust_levels;
};

struct ScoredModel {
  std::string name;
  Metrics scaled, original;
  std::optional<IntervalMetrics> intervals;  // quantile forecasters, original units
  Breakdown by_scaled, by_original;          // per column and step (over all parts only)
};

// Scores every forecaster on every stride-1 window of `rows` (a split part whose first
// `context` rows are context only: data/split.hpp), in time order, each window holding
// every channel, as the data layer's sampler cuts them (base/sample.hpp: the targets that
// count are the observed ones under data.missing "mask", all others otherwise). scaled: the
// whole series in scaled units; contexts may reach back before the part's targets.
// mase_*: per-channel MASE denominators (mase_scale over the training rows) in each unit.
// batch: windows per forecaster call (speed only, not results). InputError when the part
// holds no complete window.
// stop (optional) is polled between batches: when set, ScoringInterrupted is thrown.
std::vector<ScoredModel> evaluate_windows(const data::TimeSeries& scaled, data::RowRange rows,
                                          int context, int horizon, int64_t batch,
                                          const Unscale& unscale,
                                          const std::vector<double>& mase_scaled,
                                          const std::vector<double>& mase_original,
                                          const std::vector<NamedForecaster>& forecasters,
                                          const std::atomic<bool>* stop = nullptr);

// One series' part of a panel split: the rows its windows are cut from (as for
// evaluate_windows), its MASE denominators in each unit and its map to original units.
struct EvalPart {
  data::RowRange rows;
  std::vector<double> mase_scaled, mase_original;
  Unscale unscale;  // empty: the scaled units are the original ones
};

struct PanelScores {
  std::vector<ScoredModel> all;                    // every window of every part
  std::vector<std::vector<ScoredModel>> per_part;  // per part, when asked for
  // Complete windows left out because no target column has an observed value in their
  // context (data::WindowSampler::keep_windows_with_context); not in any count above.
  int64_t unscored = 0;
};

// evaluate_windows over several parts (a panel's series), windows batched across parts in
// part order, each batch cut once and handed to every forecaster in list order. The
// aggregate metrics are means over all windows (each window weighs the same, whichever
// series it comes from), except MASE: the mean over series of each series' MASE, as M4
// reports it. Parts without a complete window are left out; InputError when no part has
// one.
PanelScores evaluate_parts(const data::TimeSeries& scaled, const std::vector<EvalPart>& parts,
                           int context, int horizon, int64_t batch,
                           const std::vector<NamedForecaster>& forecasters, bool per_part,
                           const std::atomic<bool>* stop = nullptr);

// Scoring stopped by an interrupt (Ctrl-C): nothing was written.
struct ScoringInterrupted : std::exception {
  const char* what() const noexcept override { return "scoring interrupted"; }
};

// The three baselines as forecasters over the given training rows (scaled units).
// period <= 0 infers it from the training data's autocorrelation; the period used is
// written to *period_used. NLinear is fitted on the training rows.
std::vector<NamedForecaster> baseline_forecasters(const SeriesRef& train, int context, int horizon,
                                                  int period, int* period_used);
// The same over the training rows of every series of a panel, with the period given (> 0):
// one NLinear fitted on the windows of all of them (a global linear model).
std::vector<NamedForecaster> baseline_forecasters(const std::vector<SeriesRef>& trains, int context,
                                                  int horizon, int period);

nlohmann::json to_json(const std::vector<ScoredModel>& scored);
// A fixed-width table: one row per model, MSE/MAE/RMSE/MAPE/sMAPE/MASE in both units.
// pooled_note (optional): said beside the original-unit title when those numbers pool
// columns or series of different scales.
std::string format_table(const std::vector<ScoredModel>& scored,
                         const std::string& pooled_note = "");

}  // namespace attnfc::train
