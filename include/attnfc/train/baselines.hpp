#pragma once
// Honest baselines, scored on exactly the windows the model is scored on.
//   repeat-last     every future value equals the last observed one
//   seasonal-naive  y[T+h] = y[T+h - m*ceil(h/m)], period m given or inferred from the
//                   autocorrelation of the training data (an unobserved value: the last
//                   observed one before it; none before it: the context's last observed)
//   NLinear         Zeng et al. (AAAI 2023): subtract the context's last value, apply one
//                   linear map [H x L] shared by all channels, add the last value back. Fit
//                   by least squares on every training window (normal equations in double,
//                   a small ridge on the weights, Cholesky), so it is the exact optimum, not
//                   what a few epochs of SGD happen to reach.
// Forecasters read samples (base/sample.hpp: contexts with uint8 observed flags). Fitting
// reads the training rows as a row-major [rows, channels] float array, NaN where missing.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnfc/base/sample.hpp"

namespace attnfc::train {

// Forecasts a batch of samples: contexts [count, L, C] and their observed flags (targets
// are not read) -> out [count, H, C], row-major.
using BatchForecaster = std::function<void(const SampleBatch& samples, float* out)>;

struct SeriesRef {
  const float* data = nullptr;  // row-major [rows, channels]
  int64_t rows = 0;
  int channels = 0;
  float at(int64_t t, int c) const { return data[t * channels + c]; }
};

// data::seasonal_period of the rows (the one detector), or 1 when there is no season:
// then seasonal-naive is repeat-last.
int infer_period(const SeriesRef& train, int max_lag, double min_acf = 0.1);

// Fills out [batch, H, C] with each window's last context value.
void repeat_last(const SampleBatch& samples, int horizon, float* out);

// Throws std::invalid_argument when period > context (the window cannot see one season).
void seasonal_naive(const SampleBatch& samples, int horizon, int period, float* out);

class NLinear {
 public:
  NLinear() = default;
  // Fits on every stride-1 window lying in rows [0, train.rows) and all channels; windows
  // touching a NaN are skipped. ridge is relative to the mean diagonal of X^T X.
  // Throws std::invalid_argument when there are fewer windows than context + 1.
  static NLinear fit(const SeriesRef& train, int context, int horizon, double ridge = 1e-6);
  // The same fit for several ridges at once: X^T X is accumulated once and solved per ridge
  // (for choosing the ridge on validation data). Returns one model per ridge, in order.
  static std::vector<NLinear> fit_path(const SeriesRef& train, int context, int horizon,
                                       const std::vector<double>& ridges);
  // One fit over the windows of several series (a global NLinear over a panel), in order.
  static std::vector<NLinear> fit_path(const std::vector<SeriesRef>& trains, int context,
                                       int horizon, const std::vector<double>& ridges);
  // Unobserved context values are carried forward from the last observation before them.
  void forecast(const SampleBatch& samples, float* out) const;
  int context() const { return context_; }
  int horizon() const { return horizon_; }
  int64_t fit_windows() const { return fit_windows_; }
  // weights [H, L] row-major, bias [H] (for tests and inspection).
  const std::vector<double>& weights() const { return weight_; }
  const std::vector<double>& bias() const { return bias_; }

 private:
  int context_ = 0, horizon_ = 0;
  int64_t fit_windows_ = 0;
  std::vector<double> weight_, bias_;
};

// Solves (A) X = B in place for symmetric positive definite A [n, n] (lower Cholesky);
// B is [n, nrhs] row-major and is overwritten with X. Throws std::runtime_error if A is not SPD.
void cholesky_solve(std::vector<double>& A, int n, std::vector<double>& B, int nrhs);

}  // namespace attnfc::train
