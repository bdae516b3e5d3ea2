#include "attnfc/train/metrics.hpp"

#include <algorithm>

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace attnfc::train {

nlohmann::json to_json(const Metrics& m) {
  const nlohmann::json mape = std::isnan(m.mape) ? nlohmann::json() : nlohmann::json(m.mape);
  return {{"mse", m.mse},     {"mae", m.mae},   {"rmse", m.rmse},       {"mape", mape},
          {"smape", m.smape}, {"mase", m.mase}, {"windows", m.windows}, {"values", m.values}};
}

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names{"mse", "mae", "rmse", "mape", "smape", "mase"};
  return names;
}

double metric_value(const Metrics& m, const std::string& name) {
  if (name == "mse") return m.mse;
  if (name == "mae") return m.mae;
  if (name == "rmse") return m.rmse;
  if (name == "mape") return m.mape;
  if (name == "smape") return m.smape;
  if (name == "mase") return m.mase;
  throw std::invalid_argument("unknown metric '" + name + "'");
}

std::vector<double> mase_scale(const float* series, int64_t rows, int channels, int period) {
  if (period < 1) period = 1;
  std::vector<double> scale(channels, 1.0);
  for (int c = 0; c < channels; ++c) {
    double sum = 0;
    int64_t n = 0;
    for (int64_t t = period; t < rows; ++t) {
      const double a = series[t * channels + c], b = series[(t - period) * channels + c];
      if (std::isnan(a) || std::isnan(b)) continue;
      sum += std::fabs(a - b);
      ++n;
    }
    const double s = n > 0 ? sum / static_cast<double>(n) : 0.0;
    scale[c] = s > 0 ? s : 1.0;
  }
  return scale;
}

MetricAccumulator::MetricAccumulator(int horizon, int channels, std::vector<double> scale)
    : horizon_(horizon),
      channels_(channels),
      scale_(std::move(scale)),
      sum_ae_channel_(channels, 0.0),
      windows_channel_(channels, 0) {
  if (!scale_.empty() && static_cast<int>(scale_.size()) != channels)
    throw std::invalid_argument("MetricAccumulator: MASE scale has " +
                                std::to_string(scale_.size()) + " channels, expected " +
                                std::to_string(channels));
}

void MetricAccumulator::add(const float* forecast, const float* actual, const uint8_t* counted) {
  double se = 0, ae = 0, ape = 0, sape = 0;
  int64_t n = 0, n_ape = 0;
  for (int c = 0; c < channels_; ++c) {
    double ae_c = 0;
    int64_t n_c = 0;
    for (int h = 0; h < horizon_; ++h) {
      const int64_t i = static_cast<int64_t>(h) * channels_ + c;
      const double f = forecast[i], y = actual[i];
      // Cells that do not count (a past covariate, a masked target) are not read: a baseline
      // cannot forecast a covariate the context holds no value of, and need not.
      if (std::isnan(y) || (counted && !counted[i])) continue;
      if (!std::isfinite(f))
        throw std::runtime_error("non-finite forecast at horizon step " + std::to_string(h + 1) +
                                 ", channel " + std::to_string(c));
      const double e = f - y, abs_e = std::fabs(e);
      se += e * e;
      ae_c += abs_e;
      ++n_c;
      seen_positive_ |= y > 0;
      seen_negative_ |= y < 0;
      if (std::fabs(y) > 1e-8) {
        ape += abs_e / std::fabs(y);
        ++n_ape;
      }
      const double denom = std::fabs(y) + std::fabs(f);
      if (denom > 0) sape += 2.0 * abs_e / denom;
    }
    ae += ae_c;
    n += n_c;
    if (n_c > 0) {
      sum_ae_channel_[c] += ae_c / static_cast<double>(n_c);
      ++windows_channel_[c];
    }
  }
  if (n == 0) return;  // a window with nothing observed says nothing
  const double dn = static_cast<double>(n);
  sum_se_ += se / dn;
  sum_ae_ += ae / dn;
  sum_sape_ += sape / dn;
  if (n_ape > 0) {
    sum_ape_ += ape / static_cast<double>(n_ape);
    ++ape_windows_;
  }
  values_ += n;
  ++windows_;
}

bool MetricAccumulator::series_mase(double& out) const {
  double sum = 0;
  int used = 0;
  for (int c = 0; c < channels_; ++c) {
    if (windows_channel_[c] == 0) continue;
    sum += sum_ae_channel_[c] / static_cast<double>(windows_channel_[c]) / scale_[c];
    ++used;
  }
  if (used == 0) return false;
  out = sum / used;
  return true;
}

void MetricAccumulator::next_series(std::vector<double> scale) {
  if (!scale_.empty()) {
    double current = 0;
    if (series_mase(current)) mase_sum_ += current, ++mase_series_;
  }
  if (!scale.empty() && static_cast<int>(scale.size()) != channels_)
    throw std::invalid_argument("MetricAccumulator: MASE scale has " +
                                std::to_string(scale.size()) + " channels, expected " +
                                std::to_string(channels_));
  scale_ = std::move(scale);
  std::fill(sum_ae_channel_.begin(), sum_ae_channel_.end(), 0.0);
  std::fill(windows_channel_.begin(), windows_channel_.end(), 0);
}

Metrics MetricAccumulator::result() const {
  Metrics m;
  m.windows = windows_;
  m.values = values_;
  if (windows_ == 0) return m;
  const double w = static_cast<double>(windows_);
  m.mse = sum_se_ / w;
  m.mae = sum_ae_ / w;
  m.rmse = std::sqrt(m.mse);
  m.smape = 100.0 * sum_sape_ / w;
  m.mape = ape_windows_ > 0 ? 100.0 * sum_ape_ / static_cast<double>(ape_windows_) : 0.0;
  if (seen_positive_ && seen_negative_) m.mape = std::nan("");  // undefined, see metrics.hpp
  if (!scale_.empty()) {
    double current = 0;
    const bool has = series_mase(current);
    const int64_t series = mase_series_ + (has ? 1 : 0);
    m.mase = series > 0 ? (mase_sum_ + (has ? current : 0.0)) / static_cast<double>(series) : 0.0;
  }
  return m;
}

}  // namespace attnfc::train
