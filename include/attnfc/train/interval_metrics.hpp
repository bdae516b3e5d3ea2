#pragma once
// Scores of quantile forecasts (model.quantiles), on the same windows as the point scores:
//   pinball[j]   mean over counted values of the pinball loss of level q_j (original units)
//   wql          GluonTS's mean_wQuantileLoss: the mean over levels of
//                2 * sum pinball_j / sum |y|, sums over every counted value (the discrete
//                CRPS approximation Chronos and GluonTS report)
//   intervals    one per symmetric pair (q, 1 - q): nominal 1 - 2q, two-sided coverage
//                (the share of values with L <= y <= U), ACD = |coverage - nominal|, and
//                MSIS as M4 defines it, (U - L + (2/a)(L - y)[y < L] + (2/a)(y - U)[y > U])
//                divided by the series' in-sample seasonal-difference scale (the MASE
//                denominator), averaged over counted values; a = 1 - nominal
#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnfc::train {

struct IntervalScore {
  double nominal = 0, coverage = 0, acd = 0, msis = 0;
};

struct IntervalMetrics {
  std::vector<float> levels;
  std::vector<double> pinball;
  double wql = 0;
  std::vector<IntervalScore> intervals;  // in increasing nominal order
  int64_t values = 0;
};

class IntervalAccumulator {
 public:
  // scale: the MASE denominators per channel of the first series (original units).
  IntervalAccumulator(std::vector<float> levels, int horizon, int channels,
                      std::vector<double> scale);
  // levels [H, Q, C], actual [H, C], counted [H, C] (nullptr = all), original units.
  void add(const float* levels, const float* actual, const uint8_t* counted);
  void next_series(std::vector<double> scale) { scale_ = std::move(scale); }
  IntervalMetrics result() const;

 private:
  std::vector<float> levels_;
  int H_, C_;
  std::vector<double> scale_;
  std::vector<std::pair<int, int>> pairs_;  // (lo, hi) level indices, widest first
  std::vector<double> pinball_, covered_, msis_;
  double abs_sum_ = 0;
  int64_t values_ = 0;
};

nlohmann::json to_json(const IntervalMetrics& m);

}  // namespace attnfc::train
