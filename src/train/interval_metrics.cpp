// Quantile forecast scores (interval_metrics.hpp).
#include "attnfc/train/interval_metrics.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/train/calibration.hpp"

namespace attnfc::train {

IntervalAccumulator::IntervalAccumulator(std::vector<float> levels, int horizon, int channels,
                                         std::vector<double> scale)
    : levels_(std::move(levels)), H_(horizon), C_(channels), scale_(std::move(scale)) {
  pairs_ = symmetric_pairs(levels_);
  pinball_.assign(levels_.size(), 0.0);
  covered_.assign(pairs_.size(), 0.0);
  msis_.assign(pairs_.size(), 0.0);
}

void IntervalAccumulator::add(const float* lv, const float* actual, const uint8_t* counted) {
  const int Q = static_cast<int>(levels_.size());
  for (int h = 0; h < H_; ++h)
    for (int c = 0; c < C_; ++c) {
      const double y = actual[h * C_ + c];
      if ((counted && !counted[h * C_ + c]) || std::isnan(y)) continue;
      const auto at = [&](int j) { return static_cast<double>(lv[(h * Q + j) * C_ + c]); };
      for (int j = 0; j < Q; ++j) {
        const double d = y - at(j), q = levels_[static_cast<size_t>(j)];
        pinball_[static_cast<size_t>(j)] += d >= 0 ? q * d : (q - 1.0) * d;
      }
      const double scale = c < static_cast<int>(scale_.size()) && scale_[c] > 0 ? scale_[c] : NAN;
      for (size_t k = 0; k < pairs_.size(); ++k) {
        const double L = at(pairs_[k].first), U = at(pairs_[k].second);
        const double a = 2.0 * levels_[static_cast<size_t>(pairs_[k].first)];
        covered_[k] += (y >= L && y <= U) ? 1.0 : 0.0;
        const double score =
            U - L + (y < L ? 2.0 / a * (L - y) : 0.0) + (y > U ? 2.0 / a * (y - U) : 0.0);
        msis_[k] += score / scale;
      }
      abs_sum_ += std::fabs(y);
      ++values_;
    }
}

IntervalMetrics IntervalAccumulator::result() const {
  IntervalMetrics m;
  m.levels = levels_;
  m.values = values_;
  const double n = values_ > 0 ? static_cast<double>(values_) : NAN;
  double wql = 0;
  for (double p : pinball_) {
    m.pinball.push_back(p / n);
    wql += 2.0 * p / abs_sum_;
  }
  m.wql = levels_.empty() ? NAN : wql / static_cast<double>(levels_.size());
  for (size_t k = pairs_.size(); k-- > 0;) {  // narrowest pair (highest lo level) first
    IntervalScore s;
    // The nominal level as written (0.8, not the float 0.1's 0.79999...).
    s.nominal = std::round(1e6 * (1.0 - 2.0 * levels_[static_cast<size_t>(pairs_[k].first)])) / 1e6;
    s.coverage = covered_[k] / n;
    s.acd = std::fabs(s.coverage - s.nominal);
    s.msis = msis_[k] / n;
    m.intervals.push_back(s);
  }
  return m;
}

namespace {

std::string level_name(float q) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(q));  // 0.025, as configured
  return buf;
}

}  // namespace

nlohmann::json to_json(const IntervalMetrics& m) {
  // NaN (no counted value, or a zero scale) is written as null, as the point metrics do.
  const auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json pinball = nlohmann::json::object();
  for (size_t j = 0; j < m.levels.size(); ++j) pinball[level_name(m.levels[j])] = num(m.pinball[j]);
  nlohmann::json intervals = nlohmann::json::array();
  for (const IntervalScore& s : m.intervals)
    intervals.push_back({{"nominal", num(s.nominal)},
                         {"coverage", num(s.coverage)},
                         {"acd", num(s.acd)},
                         {"msis", num(s.msis)}});
  return {
      {"wql", num(m.wql)}, {"pinball", pinball}, {"intervals", intervals}, {"values", m.values}};
}

}  // namespace attnfc::train
