#include "attnfc/train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/window.hpp"

namespace attnfc::train {

std::vector<ScoredModel> evaluate_windows(const data::TimeSeries& scaled, data::RowRange rows,
                                          int context, int horizon, int64_t batch,
                                          const Unscale& unscale,
                                          const std::vector<double>& mase_scaled,
                                          const std::vector<double>& mase_original,
                                          const std::vector<NamedForecaster>& forecasters,
                                          const std::atomic<bool>* stop) {
  const int C = static_cast<int>(scaled.num_channels()), L = context, H = horizon;
  const data::WindowSampler windows(scaled, rows, static_cast<size_t>(L), static_cast<size_t>(H),
                                    ChannelMode::kMixed);
  const auto n = static_cast<int64_t>(windows.num_windows());
  if (n == 0)
    throw InputError("evaluation: the split (rows " + std::to_string(rows.begin) + ".." +
                     std::to_string(rows.end) + " of " + std::to_string(scaled.rows()) +
                     ") holds no complete window of context " + std::to_string(L) + " + horizon " +
                     std::to_string(H));
  batch = std::max<int64_t>(1, batch);
  SampleBuffers samples(batch, L, H, C);
  std::vector<float> out(static_cast<size_t>(batch) * H * C);
  std::vector<float> actual_orig(static_cast<size_t>(H) * C), forecast_orig(actual_orig.size());
  std::vector<ScoredModel> scored;
  for (const auto& f : forecasters) {
    MetricAccumulator acc_scaled(H, C, mase_scaled), acc_orig(H, C, mase_original);
    for (int64_t first = 0, k = 0; first < n; first += batch, ++k) {
      if (stop && stop->load()) throw ScoringInterrupted();
      const auto b = static_cast<int64_t>(windows.fill_batch(static_cast<size_t>(k), samples));
      f.forecast(samples.view(b), out.data());
      for (int64_t i = 0; i < b; ++i) {
        const float* actual = &samples.target_values[static_cast<size_t>(i) * H * C];
        const uint8_t* counted = &samples.target_observed[static_cast<size_t>(i) * H * C];
        const float* fc = &out[static_cast<size_t>(i) * H * C];
        try {
          acc_scaled.add(fc, actual, counted);
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(f.name + ": window starting at row " +
                                   std::to_string(rows.begin + first + i) + ": " + e.what());
        }
        std::copy_n(actual, actual_orig.size(), actual_orig.begin());
        std::copy_n(fc, forecast_orig.size(), forecast_orig.begin());
        if (unscale) {
          unscale(actual_orig.data(), H);
          unscale(forecast_orig.data(), H);
        }
        acc_orig.add(forecast_orig.data(), actual_orig.data(), counted);
      }
    }
    scored.push_back({f.name, acc_scaled.result(), acc_orig.result()});
  }
  return scored;
}

std::vector<NamedForecaster> baseline_forecasters(const SeriesRef& train, int context, int horizon,
                                                  int period, int* period_used) {
  if (period <= 0) period = infer_period(train, context);
  period = std::min(period, context);
  if (period_used) *period_used = period;
  std::vector<NamedForecaster> out;
  out.push_back(
      {"repeat-last", [=](const SampleBatch& s, float* o) { repeat_last(s, horizon, o); }});
  out.push_back({"seasonal-naive(" + std::to_string(period) + ")",
                 [=](const SampleBatch& s, float* o) { seasonal_naive(s, horizon, period, o); }});
  auto nlinear = std::make_shared<NLinear>(NLinear::fit(train, context, horizon));
  out.push_back(
      {"nlinear", [nlinear](const SampleBatch& s, float* o) { nlinear->forecast(s, o); }});
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
