#pragma once
// Prediction intervals scored as the M4 competition scored its 95% intervals (M4
// Competitor's Guide, "Prediction intervals"), on the same series and scaling as m4.hpp:
//   MSIS     mean over the H steps of (U - L + (2/a)(L - y)[y < L] + (2/a)(y - U)[y > U])
//            divided by the series' MASE scale (in-sample seasonal-naive MAE); a = 1 - level
//   coverage the share of every (series, step) value with L <= y <= U
//   ACD      |coverage - level|
// Averages over series are M4's: the mean over every (series, step) value.
#include <string>
#include <vector>

namespace attnfc::train::m4 {

struct IntervalScores {
  std::string name;
  double level = 0;          // nominal coverage, e.g. 0.95
  std::vector<double> msis;  // per series: the mean over its horizon
  double msis_avg = 0, coverage = 0, acd = 0;
};

// lower[i], upper[i] and actuals[i] have the same length; scales[i] from mase_scale.
// std::invalid_argument when they do not line up or level is outside (0, 1).
IntervalScores score_interval(const std::string& name, double level,
                              const std::vector<std::vector<double>>& lower,
                              const std::vector<std::vector<double>>& upper,
                              const std::vector<std::vector<double>>& actuals,
                              const std::vector<double>& scales);

// Seasonal naive with an interval from its own in-sample errors. Step h (1-based) of the
// snaive() forecast repeats the value k m steps before it, k = ceil(h / m), so its error is
// a difference at lag k m (m = 1 where snaive() is Naive1); its interval adds the empirical (1 -
// level) / 2 and (1 + level) / 2 quantiles (the ceil(n q)-th smallest, as the interval baselines of
// `evaluate` take them) of the history's differences x[t] - x[t - k m]. When the history has no
// difference at that lag (n <= k m) the longest available lag, n - 1, is used; a history needs 2
// values.
struct Interval {
  std::vector<double> lower, upper;
};
Interval snaive_interval(const std::vector<double>& x, int horizon, int m, double level);

}  // namespace attnfc::train::m4
