#include "attnfc/train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "attnfc/base/error.hpp"

namespace attnfc::train {

int64_t WindowProtocol::windows() const {
  const int64_t first = std::max<int64_t>(target_begin, context);
  const int64_t last = target_end - horizon;
  return last >= first ? last - first + 1 : 0;
}

std::vector<ScoredModel> evaluate_windows(const SeriesRef& series, const Unscale& unscale,
                                          const WindowProtocol& p,
                                          const std::vector<double>& mase_scaled,
                                          const std::vector<double>& mase_original,
                                          const std::vector<NamedForecaster>& forecasters) {
  const int64_t n = p.windows();
  if (n == 0 || p.target_end > series.rows)
    throw InputError("evaluation: the split (target rows " + std::to_string(p.target_begin) + ".." +
                     std::to_string(p.target_end) + " of " + std::to_string(series.rows) +
                     ") holds no complete window of context " + std::to_string(p.context) +
                     " + horizon " + std::to_string(p.horizon));
  const int C = series.channels, L = p.context, H = p.horizon;
  const int64_t first = std::max<int64_t>(p.target_begin, L);
  const int64_t batch = std::max<int64_t>(1, p.batch);
  std::vector<float> ctx(static_cast<size_t>(batch) * L * C),
      out(static_cast<size_t>(batch) * H * C);
  std::vector<float> actual_orig(static_cast<size_t>(H) * C), forecast_orig(actual_orig.size());

  std::vector<ScoredModel> scored;
  for (const auto& f : forecasters) {
    MetricAccumulator acc_scaled(H, C, mase_scaled), acc_orig(H, C, mase_original);
    for (int64_t w0 = 0; w0 < n; w0 += batch) {
      const int64_t b = std::min(batch, n - w0);
      for (int64_t i = 0; i < b; ++i) {
        const int64_t t = first + w0 + i;  // first target row of window w0 + i
        std::copy_n(series.data + (t - L) * C, static_cast<size_t>(L) * C, &ctx[i * L * C]);
      }
      f.forecast(ctx.data(), b, out.data());
      for (int64_t i = 0; i < b; ++i) {
        const int64_t t = first + w0 + i;
        const float* actual = series.data + t * C;
        const float* fc = &out[i * H * C];
        try {
          acc_scaled.add(fc, actual);
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(f.name + ": window starting at row " + std::to_string(t - L) +
                                   ": " + e.what());
        }
        std::copy_n(actual, actual_orig.size(), actual_orig.begin());
        std::copy_n(fc, forecast_orig.size(), forecast_orig.begin());
        if (unscale) {
          unscale(actual_orig.data(), H);
          unscale(forecast_orig.data(), H);
        }
        acc_orig.add(forecast_orig.data(), actual_orig.data());
      }
    }
    scored.push_back({f.name, acc_scaled.result(), acc_orig.result()});
  }
  return scored;
}

std::vector<NamedForecaster> baseline_forecasters(const SeriesRef& train, int context, int horizon,
                                                  int period, int* period_used) {
  const int C = train.channels;
  if (period <= 0) period = infer_period(train, context);
  period = std::min(period, context);
  if (period_used) *period_used = period;
  std::vector<NamedForecaster> out;
  out.push_back({"repeat-last", [=](const float* ctx, int64_t b, float* o) {
                   repeat_last(ctx, b, context, horizon, C, o);
                 }});
  out.push_back({"seasonal-naive(" + std::to_string(period) + ")",
                 [=](const float* ctx, int64_t b, float* o) {
                   seasonal_naive(ctx, b, context, horizon, C, period, o);
                 }});
  auto nlinear = std::make_shared<NLinear>(NLinear::fit(train, context, horizon));
  out.push_back({"nlinear", [nlinear, C](const float* ctx, int64_t b, float* o) {
                   nlinear->forecast(ctx, b, C, o);
                 }});
  return out;
}

nlohmann::json to_json(const std::vector<ScoredModel>& scored) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : scored)
    j[s.name] = {{"scaled", to_json(s.scaled)}, {"original", to_json(s.original)}};
  return j;
}

std::string format_table(const std::vector<ScoredModel>& scored) {
  size_t width = 5;
  for (const auto& s : scored) width = std::max(width, s.name.size());
  std::string out;
  char buf[256];
  auto section = [&](const char* title, bool original) {
    std::snprintf(buf, sizeof buf, "%-*s %10s %10s %10s %10s %10s %10s\n", static_cast<int>(width),
                  title, "MSE", "MAE", "RMSE", "MAPE%", "sMAPE%", "MASE");
    out += buf;
    for (const auto& s : scored) {
      const Metrics& m = original ? s.original : s.scaled;
      char mape[32] = "n/a";  // undefined when the actuals change sign (metrics.hpp)
      if (!std::isnan(m.mape)) std::snprintf(mape, sizeof mape, "%.2f", m.mape);
      std::snprintf(buf, sizeof buf, "%-*s %10.4f %10.4f %10.4f %10s %10.2f %10.4f\n",
                    static_cast<int>(width), s.name.c_str(), m.mse, m.mae, m.rmse, mape, m.smape,
                    m.mase);
      out += buf;
    }
  };
  section("scaled", false);
  out += "\n";
  section("original", true);
  return out;
}

}  // namespace attnfc::train
