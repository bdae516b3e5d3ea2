#pragma once
// What `attnfc plot` shows, gathered apart from how it is drawn (plot_page.cpp): windows
// of the split with the model's and the baselines' forecasts and errors (scored by the
// same code as `attnfc evaluate`, so the numbers agree), the split's metrics, the real
// forecast after the last row (as `attnfc predict` makes it), the training curves with
// epoch 0 and the kept epoch, and the attention maps of one window.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/progress.hpp"

namespace attnfc::cli {

struct PlotOptions;

// One forecaster's forecast, named as evaluate names it ("attnfc", "linear-start",
// "repeat-last", "seasonal-naive(24)", "nlinear").
struct ForecastLine {
  std::string name;
  std::vector<float> values;  // [H, C], original units
};

// A forecaster's point errors as evaluate computes them: the mean over windows of each
// window's mean over its observed target values, in scaled units (the model's: the
// training rows' z-score) and in the data's original units.
struct PointScores {
  std::string name;
  double mse_scaled = NAN, mae_scaled = NAN, mse_original = NAN, mae_original = NAN;
};

// One window of the split: the forecasts made at its origin and their errors on it.
struct ForecastWindow {
  long index = 0;                   // in the split, 0-based
  size_t origin = 0;                // the row of its first forecast step
  std::vector<ForecastLine> lines;  // the model's first
  std::vector<float> levels;        // a quantile model's [H, Q, C], original units
  std::vector<PointScores> scores;  // in the order of `lines`
};

// The forecast after the last row of the input, as predict makes it.
struct FutureForecast {
  std::string unavailable;      // why there is none; "" when there is one
  std::vector<int64_t> stamps;  // the H forecast times
  std::vector<ForecastLine> lines;
  std::vector<float> levels;  // as ForecastWindow::levels
};

// One training log's curves, with what the run folder says about epoch 0 and the kept
// epoch (metrics.json beside the log; the model file's own epoch when there is none).
struct TrainingCurve {
  std::string suffix;  // ", member 2" for an ensemble's member, else ""
  std::string log_path;
  std::vector<train::EpochRecord> records;
  int kept_epoch = -1;      // -1: not recorded
  double epoch0_val = NAN;  // the validation MSE before training; NaN: not recorded
  std::string epoch0_what;  // "linear start" or "initial model"
  std::string note;         // what could not be read, said on the page
};

// The attention maps of one window: per layer [heads, n, n], row = query patch.
struct AttentionView {
  std::vector<std::vector<float>> maps;
  int n = 0, heads = 0, patch_len = 0, stride = 0;  // stride: steps between patch starts
  int context() const { return (n - 1) * stride + patch_len; }
  std::string about;  // which channel, window and member
};

struct PlotData {
  int context = 0, horizon = 0;
  size_t targets = 0;            // the channels forecast: the first ones (the rest are covariates)
  int history = 0;               // steps drawn before each window's origin
  std::vector<float> quantiles;  // a quantile model's levels, else empty
  std::vector<std::pair<int, int>> pairs;  // their symmetric pairs, widest first
  int kept_epoch = -1;                     // the model file's epoch (-1: unknown)
  bool has_linear_start = false;           // linear_start.safetensors was scored
  int seasonal_period = 1;                 // seasonal-naive's, as evaluate infers it
  std::string split;                       // "test" or "val"
  data::RowRange split_targets;            // the split's target rows
  long split_windows = 0;                  // its complete windows
  std::vector<ForecastWindow> windows;     // in time order
  size_t selected = 0;                     // the window shown first (--window)
  std::vector<PointScores> split_scores;   // over every window of the split
  // A quantile model's intervals as drawn (calibrated when the model is) over the split:
  // their name in evaluate's tables and (nominal, observed) coverage per interval.
  std::string intervals_of;
  std::vector<std::pair<double, double>> coverage;
  FutureForecast future;
  std::vector<TrainingCurve> curves;
  AttentionView attention;  // of the selected window
};

// Everything the page shows (plot_data.cpp). InputError for options the data cannot meet
// (--window beyond the split, --history before the first row) and for a forecast that is
// not finite in original units (naming the column and the step).
PlotData gather_plot_data(const PlotOptions& a, const train::LoadedModel& lm,
                          const data::TimeSeries& series);

// The training logs of the run (or --log) and what metrics.json says of them
// (plot_history.cpp).
std::vector<TrainingCurve> gather_curves(const PlotOptions& a, const train::LoadedModel& lm);

// The attention maps at the window whose first forecast row is `origin`, from the series'
// scaled values (`scaled`, as the model reads them).
AttentionView gather_attention(const train::LoadedModel& lm, const data::TimeSeries& scaled,
                               size_t origin, long window_index);

}  // namespace attnfc::cli
