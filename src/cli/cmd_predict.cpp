// attnfc predict: forecast the rows after the last one of each input CSV with a trained
// model; what is checked in a history is in predict_checks, where forecasts go in
// predict_output.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"
#include "predict_checks.hpp"
#include "predict_output.hpp"

namespace attnfc::cli {

namespace {

// 9999-12-31 23:59:59 UTC: the last time the CSV reader (and so `predict` itself, on
// the forecast it wrote) accepts.
constexpr int64_t kLastReadableTime = 253402300799;

// After inverse scaling: a series near FLT_MAX or a checkpoint scale of 1e300 turns
// finite network outputs into inf, which must not be printed with exit 0.
void check_finite(const std::vector<float>& forecast, const data::TimeSeries& series, int H,
                  const std::string& input, const std::string& model) {
  const size_t C = series.num_channels();
  for (int h = 0; h < H; ++h)
    for (size_t c = 0; c < C; ++c) {
      const float v = forecast[static_cast<size_t>(h) * C + c];
      if (std::isfinite(v)) continue;
      throw InputError(input + ": column '" + series.channels[c] + "': the forecast at step " +
                       std::to_string(h + 1) + " is " + (std::isnan(v) ? "NaN" : "infinite") +
                       " after undoing the scaling of " + model +
                       "; expected finite values (the series or the model's scaler is beyond "
                       "float range)");
    }
}

void check_times(const std::vector<int64_t>& stamps, const data::TimeSeries& series,
                 const std::string& input) {
  int64_t previous = series.timestamps.empty() ? INT64_MIN : series.timestamps.back();
  for (size_t h = 0; h < stamps.size(); ++h) {
    if (stamps[h] > kLastReadableTime || stamps[h] <= previous)
      throw InputError(input + ": forecast step " + std::to_string(h + 1) + " of " +
                       std::to_string(stamps.size()) +
                       " falls after 9999-12-31 23:59:59, the last time attnfc reads; expected "
                       "a shorter --horizon or an earlier series");
    previous = stamps[h];
  }
}

// One input's forecast: its history checked (warnings, or --strict), its last L rows
// forecast H steps ahead and formatted.
InputForecast forecast_input(const train::LoadedModel& lm, const std::string& input,
                             const PredictOptions& a) {
  data::TimeSeries series = lm.read_series(input);
  report_history(check_history(lm, series), input, a.strict);
  const int C = static_cast<int>(series.num_channels());
  const int L = lm.context();
  const int H = a.horizon > 0 ? a.horizon : lm.horizon();
  if (!series.frequency.known()) {
    // Too few rows to infer it: continue at the frequency the model was trained on.
    if (lm.frequency == "unknown" || lm.frequency.empty())
      throw InputError(input +
                       ": cannot tell the time step of the series, so the forecast "
                       "has no timestamps; give data.frequency in the training config");
    series.frequency = data::Frequency::parse(lm.frequency);
  }

  // The last L rows as one sample (front-padded with unobserved steps when the file is
  // shorter), scaled; filled values are unobserved, as in training.
  data::TimeSeries scaled = series;
  lm.scaler.apply(scaled);
  const auto rows = static_cast<int64_t>(series.rows());
  SampleBuffers sample(1, L, 0, C);
  const int64_t take = std::min<int64_t>(L, rows);
  for (int64_t t = 0; t < take; ++t)
    for (int c = 0; c < C; ++c) {
      const size_t src = static_cast<size_t>(rows - take + t) * C + c;
      const size_t dst = static_cast<size_t>(L - take + t) * C + c;
      sample.context_values[dst] = scaled.values[src];
      sample.context_observed[dst] = scaled.observed[src];
    }
  std::vector<float> forecast(static_cast<size_t>(H) * C);
  train::model_forecaster(lm.members(), C, H)(sample.view(1), forecast.data());
  lm.scaler.inverse_transform(forecast.data(), H);
  check_finite(forecast, series, H, input, a.model);

  const std::vector<int64_t> stamps = series.future_timestamps(H);
  check_times(stamps, series, input);
  InputForecast out{
      input, series.time_columns.size() == 1 ? series.time_columns[0] : "date", "", {}, C};
  for (const auto& c : series.channels) out.columns += "," + c;
  char buf[64];
  for (int h = 0; h < H; ++h) {
    std::string row = series.format_time(stamps[h]);
    for (int c = 0; c < C; ++c) {
      std::snprintf(buf, sizeof buf, ",%.7g", forecast[static_cast<size_t>(h) * C + c]);
      row += buf;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace

int run_predict(const PredictOptions& a) {
  const PredictOutputs plan = plan_outputs(a);
  const train::LoadedModel lm = train::LoadedModel::load(a.model);
  // Every input is forecast before anything is written: an error leaves no output.
  std::vector<InputForecast> forecasts;
  for (const std::string& input : a.inputs) forecasts.push_back(forecast_input(lm, input, a));
  write_forecasts(plan, forecasts);
  return 0;
}

}  // namespace attnfc::cli
