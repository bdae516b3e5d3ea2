// Split-conformal calibration of quantile intervals (calibration.hpp).
#include "attnfc/train/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/data/window.hpp"

namespace attnfc::train {

namespace {

// A side of an interval narrower than this (scaled units) counts as this wide in the
// scaled method, so a zero-width side neither divides by zero nor stays stuck at zero.
constexpr float kMinHalfWidth = 1e-6f;

// What the corrected side moves by per unit of correction: 1 (additive), or the side's
// distance from the median (scaled).
float unit(bool scaled, float median, float level) {
  return scaled ? std::max(std::fabs(median - level), kMinHalfWidth) : 1.0f;
}

}  // namespace

void Calibration::apply(float* lv, int64_t count, int steps) const {
  const int Q = static_cast<int>(levels.size()), H = steps, C = channels;
  const int m = model::median_level(levels);
  for (int64_t b = 0; b < count; ++b)
    for (int h = 0; h < H; ++h)
      for (int c = 0; c < C; ++c) {
        const auto at = [&](int j) -> float& { return lv[((b * H + h) * Q + j) * C + c]; };
        const float median = at(m);
        for (size_t k = 0; k < pairs.size(); ++k) {
          const int s = std::min(h, horizon - 1);
          const float corr = correction[(k * horizon + s) * C + c];
          float &lo = at(pairs[k].first), &hi = at(pairs[k].second);
          lo -= corr * unit(scaled, median, lo);
          hi += corr * unit(scaled, median, hi);
        }
        for (int j = m + 1; j < Q; ++j) at(j) = std::max(at(j), at(j - 1));
        for (int j = m - 1; j >= 0; --j) at(j) = std::min(at(j), at(j + 1));
      }
}

namespace {

// The ceil((n + 1)(1 - a)) / n empirical quantile of `e` (its largest value when that rank
// passes n: the finite-sample guarantee would need +inf, which no user can use).
float conformal_quantile(std::vector<float>& e, double a) {
  const auto n = static_cast<double>(e.size());
  const auto rank = static_cast<size_t>(std::ceil((n + 1.0) * (1.0 - a)));
  const size_t k = std::min(std::max<size_t>(rank, 1), e.size()) - 1;
  std::nth_element(e.begin(), e.begin() + static_cast<ptrdiff_t>(k), e.end());
  return e[k];
}

// Every window of `parts` of `scaled` that scoring keeps (a target column with no observed
// value in the context cannot be forecast: evaluate_parts leaves such windows out too), batch by
// batch: forecast by `f`, then seen(samples, count, point forecasts [count, H, C]) (f's
// levels, if any, are filled too).
template <typename Seen>
void for_each_batch(const data::TimeSeries& scaled, const std::vector<EvalPart>& parts, int context,
                    int H, int64_t batch, const NamedForecaster& f, Seen seen) {
  const int C = static_cast<int>(scaled.num_channels());
  std::vector<data::RowRange> ranges;
  for (const EvalPart& p : parts) ranges.push_back(p.rows);
  data::WindowSampler windows(scaled, ranges, static_cast<size_t>(context), static_cast<size_t>(H),
                              ChannelMode::kMixed);
  windows.keep_windows_with_context();
  SampleBuffers samples(batch, context, H, C);
  data::reserve_known(scaled, samples);
  std::vector<float> out(static_cast<size_t>(batch) * H * C);
  for (size_t k = 0;; ++k) {
    const auto n = static_cast<int64_t>(windows.fill_batch(k, samples));
    if (n == 0) break;
    data::uncount_unreadable_lanes(samples, static_cast<size_t>(n));
    f.forecast(samples.view(n), out.data());
    seen(samples, n, out.data());
  }
}

}  // namespace

Calibration fit_conformal(const data::TimeSeries& scaled, const std::vector<EvalPart>& parts,
                          int context, int horizon, int64_t batch, const NamedForecaster& f,
                          const std::string& method) {
  const int C = static_cast<int>(scaled.num_channels()), H = horizon;
  const int Q = static_cast<int>(f.quantiles.size());
  Calibration cal{f.quantiles, symmetric_pairs(f.quantiles), H, C, {}, {}};
  cal.scaled = method == "conformal_scaled";
  const int m = model::median_level(f.quantiles);
  const size_t P = cal.pairs.size();
  std::vector<std::vector<float>> e(P * H * C);  // scores per (pair, step, channel)
  for_each_batch(scaled, parts, context, H, batch, f,
                 [&](const SampleBuffers& samples, int64_t n, const float*) {
                   const float* lv = f.levels->data();
                   for (int64_t b = 0; b < n; ++b)
                     for (int h = 0; h < H; ++h)
                       for (int c = 0; c < C; ++c) {
                         const size_t t = (static_cast<size_t>(b) * H + h) * C + c;
                         if (!samples.target_observed[t]) continue;
                         const float y = samples.target_values[t];
                         const float M = lv[((b * H + h) * Q + m) * C + c];
                         for (size_t p = 0; p < P; ++p) {
                           const float L = lv[((b * H + h) * Q + cal.pairs[p].first) * C + c];
                           const float U = lv[((b * H + h) * Q + cal.pairs[p].second) * C + c];
                           e[(p * H + h) * C + c].push_back(std::max(
                               (L - y) / unit(cal.scaled, M, L), (y - U) / unit(cal.scaled, M, U)));
                         }
                       }
                 });
  for (size_t p = 0; p < P; ++p) {
    const double a = 2.0 * f.quantiles[static_cast<size_t>(cal.pairs[p].first)];
    int64_t count = 0;
    for (int i = 0; i < H * C; ++i) {
      std::vector<float>& s = e[p * H * C + i];
      if (s.empty())
        throw InputError(
            "train.calibrate: a forecast step has no counted validation target; "
            "expected validation windows to calibrate on");
      count += static_cast<int64_t>(s.size());
      cal.correction.push_back(conformal_quantile(s, a));
    }
    cal.scores.push_back(count / (H * C));
  }
  return cal;
}

NamedForecaster with_residual_levels(const NamedForecaster& point, const std::vector<float>& q,
                                     const data::TimeSeries& scaled,
                                     const std::vector<EvalPart>& fit_parts, int context,
                                     int horizon, int64_t batch) {
  const int C = static_cast<int>(scaled.num_channels()), H = horizon;
  const auto Q = static_cast<int>(q.size());
  std::vector<std::vector<float>> res(static_cast<size_t>(H) * C);  // per (step, channel)
  for_each_batch(scaled, fit_parts, context, H, batch, point,
                 [&](const SampleBuffers& samples, int64_t n, const float* out) {
                   for (size_t i = 0; i < static_cast<size_t>(n) * H * C; ++i)
                     if (samples.target_observed[i] && std::isfinite(out[i]))
                       res[i % res.size()].push_back(samples.target_values[i] - out[i]);
                 });
  // offset[(h * Q + j) * C + c]: the residual quantile (the ceil(n q)-th smallest).
  auto offset = std::make_shared<std::vector<float>>(static_cast<size_t>(H) * Q * C, 0.0f);
  for (int h = 0; h < H; ++h)
    for (int c = 0; c < C; ++c) {
      std::vector<float>& r = res[static_cast<size_t>(h) * C + c];
      if (r.empty())
        throw InputError("interval baselines: no counted target to take residuals from");
      std::sort(r.begin(), r.end());
      for (int j = 0; j < Q; ++j) {
        const auto rank = static_cast<size_t>(std::ceil(static_cast<double>(r.size()) * q[j]));
        (*offset)[(static_cast<size_t>(h) * Q + j) * C + c] =
            r[std::min(std::max<size_t>(rank, 1), r.size()) - 1];
      }
    }
  auto levels = std::make_shared<std::vector<float>>();
  const BatchForecaster base = point.forecast;
  BatchForecaster f = [base, offset, levels, H, Q, C](const SampleBatch& s, float* o) {
    base(s, o);
    levels->resize(static_cast<size_t>(s.count) * H * Q * C);
    for (int64_t b = 0; b < s.count; ++b)
      for (int h = 0; h < H; ++h)
        for (int j = 0; j < Q; ++j)
          for (int c = 0; c < C; ++c)
            (*levels)[((b * H + h) * Q + j) * C + c] =
                o[(b * H + h) * C + c] + (*offset)[(static_cast<size_t>(h) * Q + j) * C + c];
  };
  return {point.name, f, q, levels};
}

nlohmann::json Calibration::to_json() const {
  nlohmann::json p = nlohmann::json::array();
  for (const auto& [lo, hi] : pairs) p.push_back({lo, hi});
  return {{"method", scaled ? "conformal_scaled" : "conformal"},
          {"pairs", p},
          {"horizon", horizon},
          {"channels", channels},
          {"correction", correction},
          {"scores", scores}};
}

Calibration Calibration::from_json(const nlohmann::json& j, const std::string& what,
                                   const std::vector<float>& levels, int horizon, int channels) {
  const auto fail = [&](const std::string& expected) {
    throw InputError(what + ": expected " + expected);
  };
  if (!j.is_object() || !j.contains("correction") || !j["correction"].is_array())
    fail("an object with a 'correction' array");
  Calibration c{levels, symmetric_pairs(levels), horizon, channels, {}, {}};
  // Files written before "conformal_scaled" existed have no method: additive.
  const std::string method = j.contains("method") && j["method"].is_string()
                                 ? j["method"].get<std::string>()
                                 : std::string("conformal");
  if (method != "conformal" && method != "conformal_scaled")
    fail("method \"conformal\" or \"conformal_scaled\" (found \"" + method + "\")");
  c.scaled = method == "conformal_scaled";
  if (j.value("horizon", -1) != horizon || j.value("channels", -1) != channels)
    fail("the model's horizon " + std::to_string(horizon) + " and " + std::to_string(channels) +
         " channels");
  for (const auto& v : j["correction"]) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail("finite corrections");
    c.correction.push_back(v.get<float>());
  }
  if (c.correction.size() != c.pairs.size() * static_cast<size_t>(horizon * channels))
    fail(std::to_string(c.pairs.size() * static_cast<size_t>(horizon * channels)) +
         " corrections (pairs x horizon x channels)");
  if (j.contains("scores") && j["scores"].is_array())
    for (const auto& v : j["scores"]) c.scores.push_back(v.get<int64_t>());
  return c;
}

}  // namespace attnfc::train
