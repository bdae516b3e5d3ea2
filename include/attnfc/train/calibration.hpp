#pragma once
// Split-conformal calibration of a quantile model's intervals (train.calibrate
// "conformal"; conformalised quantile regression, Romano et al. 2019). On the validation
// windows only, each symmetric pair of levels (q, 1 - q), each horizon step and each channel
// gets the conformity scores E = max(L - y, y - U) (scaled units); the correction is their
// ceil((n + 1)(1 - a)) / n empirical quantile, a = 2q, and the calibrated interval is
// [L - corr, U + corr] (corr < 0 narrows it). "conformal_scaled" (CQR-m, Sesia and Candes
// 2020) scales each side of the interval about the median M instead: the scores are
// E = max((L - y) / (M - L), (y - U) / (U - M)) and the interval [L - corr (M - L),
// U + corr (U - M)], so a series whose raw interval is narrow is widened by little and a
// wide one by much (an additive correction widens every series by the same amount, which
// on M4 Hourly cost more MSIS than the coverage it bought). The levels are then made
// monotone again (each level at least the one below it, from the median out), so none cross.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/data/series.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/train/evaluate.hpp"

namespace attnfc::train {

struct Calibration {
  std::vector<float> levels;               // the model's quantile levels
  std::vector<std::pair<int, int>> pairs;  // (lo, hi) level indices
  int horizon = 0, channels = 0;
  std::vector<float> correction;  // [pairs][H][C]: scaled units, or half-widths when scaled
  std::vector<int64_t> scores;    // validation scores per pair (n)
  bool scaled = false;            // "conformal_scaled": corrections relative to the median

  // Levels [count, steps, Q, C] (scaled units) calibrated in place; steps beyond the
  // model's horizon (a rollout) take the last step's correction (calibrated they are not).
  void apply(float* levels, int64_t count, int steps) const;
  nlohmann::json to_json() const;
  // InputError starting with `what` on a malformed object or one that does not fit.
  static Calibration from_json(const nlohmann::json& j, const std::string& what,
                               const std::vector<float>& levels, int horizon, int channels);
};

using model::symmetric_pairs;  // model/config.hpp

// Fits the corrections from the levels `forecaster` writes on every window of `parts` of
// `scaled` (the validation parts). InputError when no window has a counted target.
// `method`: "conformal" or "conformal_scaled" (train.calibrate).
Calibration fit_conformal(const data::TimeSeries& scaled, const std::vector<EvalPart>& parts,
                          int context, int horizon, int64_t batch,
                          const NamedForecaster& forecaster,
                          const std::string& method = "conformal");

// A point forecaster with intervals from its own residuals: level q at step h and channel c
// is the point plus the empirical q-quantile of y - point over every window of `fit_parts`
// (the training rows for seasonal naive, the validation rows for NLinear: split-conformal).
// The baselines a quantile model's intervals are scored against.
NamedForecaster with_residual_levels(const NamedForecaster& point, const std::vector<float>& q,
                                     const data::TimeSeries& scaled,
                                     const std::vector<EvalPart>& fit_parts, int context,
                                     int horizon, int64_t batch);

}  // namespace attnfc::train
