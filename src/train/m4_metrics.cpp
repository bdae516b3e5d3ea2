// The M4 metrics (smape_cal, mase_cal and the OWA of `Benchmarks and Evaluation.R`).
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/train/m4.hpp"

namespace attnfc::train::m4 {

double r_mean(const double* x, size_t n) {
  if (n == 0) return std::nan("");
  // R's summary.c: the second pass adds back what the long-double division lost, so
  // the published averages (means over ~20,000 values) come out to the same digits.
  long double s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  s /= static_cast<long double>(n);
  if (std::isfinite(static_cast<double>(s))) {
    long double t = 0;
    for (size_t i = 0; i < n; ++i) t += x[i] - s;
    s += t / static_cast<long double>(n);
  }
  return static_cast<double>(s);
}

double mase_scale(const std::vector<double>& history, int m) {
  if (history.size() < 2) {
    throw std::invalid_argument("mase_scale: a history of " + std::to_string(history.size()) +
                                " values has no in-sample naive error");
  }
  const size_t lag = (m >= 1 && history.size() > static_cast<size_t>(m)) ? m : 1;
  std::vector<double> d;
  d.reserve(history.size() - lag);
  for (size_t t = lag; t < history.size(); ++t)
    d.push_back(std::fabs(history[t] - history[t - lag]));
  return r_mean(d);
}

std::vector<double> smape_terms(const std::vector<double>& actual,
                                const std::vector<double>& forecast) {
  std::vector<double> out(actual.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double den = std::fabs(actual[i]) + std::fabs(forecast[i]);
    // As smape_cal: (|y - f| * 200) / (|y| + |f|), in that order of operations.
    out[i] = den == 0 ? 0.0 : (std::fabs(actual[i] - forecast[i]) * 200) / den;
  }
  return out;
}

std::vector<double> mase_terms(const std::vector<double>& actual,
                               const std::vector<double>& forecast, double scale) {
  std::vector<double> out(actual.size());
  for (size_t i = 0; i < actual.size(); ++i) out[i] = std::fabs(actual[i] - forecast[i]) / scale;
  return out;
}

MethodScores score_method(const std::string& name,
                          const std::vector<std::vector<double>>& forecasts,
                          const std::vector<std::vector<double>>& actuals,
                          const std::vector<double>& scales) {
  if (forecasts.size() != actuals.size() || scales.size() != actuals.size()) {
    throw std::invalid_argument("score_method: forecasts, actuals and scales differ in count");
  }
  MethodScores s;
  s.name = name;
  std::vector<double> all_smape, all_mase;  // every (series, step), as M4's array
  for (size_t i = 0; i < actuals.size(); ++i) {
    if (forecasts[i].size() != actuals[i].size()) {
      throw std::invalid_argument("score_method: series " + std::to_string(i) + " has " +
                                  std::to_string(forecasts[i].size()) + " forecasts for " +
                                  std::to_string(actuals[i].size()) + " actual values");
    }
    const std::vector<double> sm = smape_terms(actuals[i], forecasts[i]);
    const std::vector<double> ma = mase_terms(actuals[i], forecasts[i], scales[i]);
    s.smape.push_back(r_mean(sm));
    s.mase.push_back(r_mean(ma));
    all_smape.insert(all_smape.end(), sm.begin(), sm.end());
    all_mase.insert(all_mase.end(), ma.begin(), ma.end());
  }
  s.smape_avg = r_mean(all_smape);
  s.mase_avg = r_mean(all_mase);
  return s;
}

void set_owa(std::vector<MethodScores>& methods, const MethodScores& naive2) {
  for (MethodScores& m : methods) {
    m.owa = ((m.mase_avg / naive2.mase_avg) + (m.smape_avg / naive2.smape_avg)) / 2;
  }
}

}  // namespace attnfc::train::m4
