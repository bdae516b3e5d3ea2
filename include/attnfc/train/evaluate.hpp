#pragma once
// The standard evaluation protocol: every stride-1 window whose targets lie in a split,
// nothing dropped, and the model and every baseline scored on the very same windows, in
// scaled units (what the literature reports for ETT) and in the data's original units.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/train/baselines.hpp"
#include "attnfc/train/metrics.hpp"

namespace attnfc::train {

// Maps [rows, channels] row-major values from scaled to original units, in place.
using Unscale = std::function<void(float* values, int64_t rows)>;

struct NamedForecaster {
  std::string name;
  BatchForecaster forecast;
};

struct ScoredModel {
  std::string name;
  Metrics scaled, original;
};

struct WindowProtocol {
  int context = 0, horizon = 0;
  // Target rows of every window lie in [target_begin, target_end); windows start at every
  // row t in [max(target_begin, context), target_end - horizon].
  int64_t target_begin = 0, target_end = 0;
  int64_t batch = 64;  // windows per forecaster call
  int64_t windows() const;
};

// series: the whole scaled series (contexts may reach back before target_begin).
// mase_*: per-channel MASE denominators (mase_scale over the training rows) in each unit.
// Throws InputError when the split holds no complete window.
std::vector<ScoredModel> evaluate_windows(const SeriesRef& series, const Unscale& unscale,
                                          const WindowProtocol& protocol,
                                          const std::vector<double>& mase_scaled,
                                          const std::vector<double>& mase_original,
                                          const std::vector<NamedForecaster>& forecasters);

// The three baselines as forecasters over the given training rows (scaled units).
// period <= 0 infers it from the training data's autocorrelation; the period used is
// written to *period_used. NLinear is fitted on the training rows.
std::vector<NamedForecaster> baseline_forecasters(const SeriesRef& train, int context, int horizon,
                                                  int period, int* period_used);

nlohmann::json to_json(const std::vector<ScoredModel>& scored);
// A fixed-width table: one row per model, MSE/MAE/RMSE/MAPE/sMAPE/MASE in both units.
std::string format_table(const std::vector<ScoredModel>& scored);

}  // namespace attnfc::train
