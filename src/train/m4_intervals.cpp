// M4's interval scores and the seasonal-naive interval baseline (m4_intervals.hpp).
#include "attnfc/train/m4_intervals.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attnfc/train/m4.hpp"

namespace attnfc::train::m4 {

IntervalScores score_interval(const std::string& name, double level,
                              const std::vector<std::vector<double>>& lower,
                              const std::vector<std::vector<double>>& upper,
                              const std::vector<std::vector<double>>& actuals,
                              const std::vector<double>& scales) {
  if (!(level > 0 && level < 1)) {
    throw std::invalid_argument("score_interval: level " + std::to_string(level) +
                                " is outside (0, 1)");
  }
  const size_t n = actuals.size();
  if (lower.size() != n || upper.size() != n || scales.size() != n) {
    throw std::invalid_argument("score_interval: bounds, actuals and scales differ in count");
  }
  const double penalty = 2.0 / (1.0 - level);
  IntervalScores s;
  s.name = name;
  s.level = level;
  std::vector<double> all;  // every (series, step) term, as M4 averages them
  size_t covered = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<double>&y = actuals[i], &lo = lower[i], &hi = upper[i];
    if (lo.size() != y.size() || hi.size() != y.size()) {
      throw std::invalid_argument("score_interval: series " + std::to_string(i) +
                                  " has bounds of another length than its actuals");
    }
    std::vector<double> terms(y.size());
    for (size_t h = 0; h < y.size(); ++h) {
      const double below = y[h] < lo[h] ? lo[h] - y[h] : 0.0;
      const double above = y[h] > hi[h] ? y[h] - hi[h] : 0.0;
      terms[h] = (hi[h] - lo[h] + penalty * below + penalty * above) / scales[i];
      covered += (y[h] >= lo[h] && y[h] <= hi[h]) ? 1 : 0;
    }
    s.msis.push_back(r_mean(terms));
    all.insert(all.end(), terms.begin(), terms.end());
  }
  s.msis_avg = r_mean(all);
  s.coverage = all.empty() ? std::nan("") : static_cast<double>(covered) / all.size();
  s.acd = std::fabs(s.coverage - level);
  return s;
}

namespace {

// The ceil(n q)-th smallest of `v` (at least the first): the residual quantile rule of
// train::with_residual_levels, so both interval baselines read their residuals alike.
// The 1e-9 keeps a rank that is whole in exact arithmetic from moving up one: (1 - 0.95) / 2
// is 0.025000000000000022 in double, and 40 of them make more than 1.
double residual_quantile(std::vector<double> v, double q) {
  const size_t rank = std::clamp<size_t>(
      static_cast<size_t>(std::ceil(static_cast<double>(v.size()) * q - 1e-9)), 1, v.size());
  std::nth_element(v.begin(), v.begin() + (rank - 1), v.end());
  return v[rank - 1];
}

}  // namespace

Interval snaive_interval(const std::vector<double>& x, int horizon, int m, double level) {
  if (x.size() < 2) throw std::invalid_argument("snaive_interval: needs 2 values");
  if (!(level > 0 && level < 1)) throw std::invalid_argument("snaive_interval: bad level");
  const std::vector<double> point = snaive(x, horizon, m);
  // snaive() is Naive1 (a season of 1) for m <= 1 or a history shorter than m.
  const size_t season = (m > 1 && x.size() >= static_cast<size_t>(m)) ? static_cast<size_t>(m) : 1;
  Interval out{std::vector<double>(horizon), std::vector<double>(horizon)};
  size_t bounds_lag = 0;
  double lo = 0, hi = 0;
  for (int h = 0; h < horizon; ++h) {
    const size_t k = static_cast<size_t>(h) / season + 1;
    const size_t lag = std::min(k * season, x.size() - 1);
    if (lag != bounds_lag) {  // one set of differences per season ahead
      std::vector<double> d;
      d.reserve(x.size() - lag);
      for (size_t t = lag; t < x.size(); ++t) d.push_back(x[t] - x[t - lag]);
      lo = residual_quantile(d, (1.0 - level) / 2);
      hi = residual_quantile(d, (1.0 + level) / 2);
      bounds_lag = lag;
    }
    out.lower[h] = point[h] + lo;
    out.upper[h] = point[h] + hi;
  }
  return out;
}

}  // namespace attnfc::train::m4
