// The seasonal-period detector (seasonality.hpp).
#include "attnfc/data/seasonality.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnfc::data {

namespace {

// Adds channel c's autocorrelation of first differences at lags 1..max_lag to acf;
// false when the channel has no variation to correlate.
bool add_difference_acf(const float* values, int64_t rows, int channels, int c, int max_lag,
                        std::vector<double>& d, std::vector<double>& acf) {
  const int64_t n = rows - 1;
  double sum = 0, level = 0;
  int64_t count = 0;
  for (int64_t t = 0; t < n; ++t) {
    const float a = values[(t + 1) * channels + c], b = values[t * channels + c];
    d[t] = static_cast<double>(a) - b;
    if (std::isnan(d[t])) continue;
    sum += d[t], ++count;
    level = std::max(level, static_cast<double>(std::fabs(b)));
  }
  if (count < 2) return false;
  const double mean = sum / static_cast<double>(count);
  double var = 0;
  for (int64_t t = 0; t < n; ++t)
    if (!std::isnan(d[t])) var += (d[t] - mean) * (d[t] - mean);
  if (!(var > 1e-12 * count * (1 + mean * mean))) return false;  // no variation, no season
  // Differences that vary by no more than float32 rounding of the level: rounding noise.
  const double spread = std::sqrt(var / static_cast<double>(count));
  if (spread <= 16 * std::numeric_limits<float>::epsilon() * level) return false;
  for (int k = 1; k <= max_lag; ++k) {
    double cov = 0;
    for (int64_t t = k; t < n; ++t)
      if (!std::isnan(d[t]) && !std::isnan(d[t - k])) cov += (d[t] - mean) * (d[t - k] - mean);
    acf[k] += cov / var;
  }
  return true;
}

}  // namespace

int seasonal_period(const float* values, int64_t rows, int channels, int max_lag,
                    std::vector<double>* acf_out, double min_acf) {
  max_lag = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(max_lag, rows / 2)));
  if (acf_out) acf_out->assign(static_cast<size_t>(max_lag) + 1, 0.0);
  if (max_lag < 3) return 0;
  std::vector<double> d(static_cast<size_t>(rows - 1));
  std::vector<double> acf(static_cast<size_t>(max_lag) + 1, 0.0);
  int used = 0;
  for (int c = 0; c < channels; ++c)
    used += add_difference_acf(values, rows, channels, c, max_lag, d, acf);
  if (used == 0) return 0;
  if (acf_out) {
    (*acf_out)[0] = 1.0;
    for (int k = 1; k <= max_lag; ++k) (*acf_out)[k] = acf[k] / used;
  }
  int best = 0;
  double best_acf = min_acf;
  for (int k = 2; k < max_lag; ++k) {
    const double a = acf[k] / used;
    const bool peak = acf[k] > acf[k - 1] && acf[k] >= acf[k + 1];
    if (peak && a > best_acf) best = k, best_acf = a;
  }
  // Prefer the shortest divisor of the best lag whose peak is nearly as high.
  for (int k = 2; k < best; ++k) {
    if (best % k != 0 || !(acf[k] > acf[k - 1] && acf[k] >= acf[k + 1])) continue;
    if (acf[k] / used >= 0.8 * best_acf) return k;
  }
  return best;
}

}  // namespace attnfc::data
