#pragma once
// Forecast accuracy over windows, the way the long-horizon literature scores it:
// every stride-1 window of a split, none dropped, each window's errors averaged
// over its horizon and channels, then the window means averaged (in window order,
// in double, so the result is the same bit for bit on every run and thread count).
//
//   MSE, MAE      mean squared / absolute error
//   RMSE          sqrt(MSE) of the whole split (not a mean of per-window RMSEs)
//   MAPE          100 * mean |e| / |y|, over targets with |y| > 1e-8 (zero targets are skipped).
//                 NaN (printed "n/a", JSON null) when the actual values change sign: a
//                 percentage of a quantity that crosses zero (z-scored data, temperatures
//                 in Celsius, ETTh1's OT) explodes near the crossing and means nothing.
//   sMAPE         100 * mean 2|e| / (|y| + |yhat|), 0 where both are 0
//   MASE          per channel MAE / (in-sample seasonal-naive MAE of the training data),
//                 then averaged over channels (Hyndman & Koehler 2006)
// A NaN actual value is a missing observation and is skipped; a NaN forecast is an error.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnfc::train {

struct Metrics {
  double mse = 0, mae = 0, rmse = 0, mape = 0, smape = 0, mase = 0;
  int64_t windows = 0;  // windows that contributed
  int64_t values = 0;   // observed target values that contributed
};

nlohmann::json to_json(const Metrics& m);
// The names in the order tables print them.
const std::vector<std::string>& metric_names();
double metric_value(const Metrics& m, const std::string& name);

// In-sample seasonal-naive MAE per channel: mean_t |y[t] - y[t - period]| over rows
// [0, rows) of a row-major [rows, channels] series (NaNs skipped). The MASE denominator.
// A constant channel (scale 0) gets scale 1 so MASE stays finite: it is then the MAE.
std::vector<double> mase_scale(const float* series, int64_t rows, int channels, int period);

// Accumulates windows one at a time. Not thread-safe: feed it in window order.
class MetricAccumulator {
 public:
  // scale: one MASE denominator per channel (from mase_scale); empty = MASE reported as 0.
  MetricAccumulator(int horizon, int channels, std::vector<double> scale = {});
  // forecast and actual are row-major [horizon, channels].
  // Throws std::runtime_error when the forecast holds a NaN or infinity.
  // counted: [H, C] 0/1 (base/sample.hpp target_observed), nullptr = all; an actual that
  // does not count (or is NaN) is left out.
  void add(const float* forecast, const float* actual, const uint8_t* counted = nullptr);
  // The windows after this call belong to another series of a panel, whose MASE
  // denominators are `scale`. MASE becomes the mean over series of each series' MASE (as the
  // M4 competition averages it); the other metrics stay means over all windows.
  void next_series(std::vector<double> scale);
  Metrics result() const;

 private:
  int horizon_, channels_;
  std::vector<double> scale_;
  // Sums of per-window means, in window order.
  double sum_se_ = 0, sum_ae_ = 0, sum_ape_ = 0, sum_sape_ = 0;
  int64_t ape_windows_ = 0;
  bool seen_positive_ = false, seen_negative_ = false;  // among observed actual values
  std::vector<double> sum_ae_channel_;
  std::vector<int64_t> windows_channel_;
  int64_t windows_ = 0, values_ = 0;
  double mase_sum_ = 0;  // MASE of the series before the current one, summed
  int64_t mase_series_ = 0;
  // The current series' MASE; false when none of its windows counted.
  bool series_mase(double& out) const;
};

}  // namespace attnfc::train
