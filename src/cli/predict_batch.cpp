#include "predict_batch.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/calibration.hpp"

namespace attnfc::cli {

namespace {

// Window `slot` of `batch` [n, L, C] from the series' last L rows, scaled; rows before its
// start stay unobserved (the buffers start zeroed).
void fill_context(const data::TimeSeries& series, const data::Scaler& scaler, SampleBuffers& batch,
                  int64_t slot) {
  const int64_t C = batch.width, L = batch.context;
  const auto rows = static_cast<int64_t>(series.rows());
  const int64_t take = std::min(L, rows);
  std::vector<float> tail(series.values.end() - take * C, series.values.end());
  scaler.transform(tail.data(), static_cast<size_t>(take));
  const auto* observed = series.observed.data() + (rows - take) * C;
  float* values = batch.context_values.data() + (slot * L + L - take) * C;
  uint8_t* flags = batch.context_observed.data() + (slot * L + L - take) * C;
  std::copy(tail.begin(), tail.end(), values);
  std::copy_n(observed, take * C, flags);
}

// The decoder's inputs of every window, one after the other; empty without a decoder.
SampleBuffers gather_known(const std::vector<SeriesToForecast>& windows) {
  SampleBuffers out;
  const SampleBuffers& first = *windows.front().known;
  if (first.capacity == 0) return out;
  out.capacity = static_cast<int64_t>(windows.size());
  out.horizon = first.horizon;
  out.reserve_known(first.known_width, first.numeric_width, first.category_width);
  const int64_t K = first.known_width * first.horizon, S = first.numeric_width,
                G = first.category_width;
  for (size_t b = 0; b < windows.size(); ++b) {
    const SampleBuffers& k = *windows[b].known;
    const auto at = static_cast<int64_t>(b);
    std::copy_n(k.known.begin(), K, out.known.begin() + at * K);
    std::copy_n(k.static_numeric.begin(), S, out.static_numeric.begin() + at * S);
    std::copy_n(k.static_codes.begin(), G, out.static_codes.begin() + at * G);
  }
  return out;
}

// point [H, C] and levels [H, Q, C] (null for a point model) of one window, in the model's
// units -> original units, laid out as forecast_windows returns them.
std::vector<float> to_output(const data::Scaler& scaler, const float* point, const float* levels,
                             int H, int C, int Q, int m) {
  std::vector<float> forecast(point, point + static_cast<size_t>(H) * C);
  scaler.inverse_transform(forecast.data(), static_cast<size_t>(H));
  if (Q == 1) return forecast;
  std::vector<float> lv(levels, levels + static_cast<size_t>(H) * Q * C);
  scaler.inverse_transform(lv.data(), static_cast<size_t>(H) * Q);
  std::vector<float> out(static_cast<size_t>(H) * C * Q);
  for (int h = 0; h < H; ++h)
    for (int c = 0; c < C; ++c) {
      float* o = &out[(static_cast<size_t>(h) * C + c) * Q];
      *o++ = forecast[static_cast<size_t>(h) * C + c];
      for (int q = 0; q < Q; ++q)
        if (q != m) *o++ = lv[(static_cast<size_t>(h) * Q + q) * C + c];
    }
  return out;
}

}  // namespace

std::vector<std::vector<float>> forecast_windows(const train::LoadedModel& lm, int H,
                                                 const std::vector<SeriesToForecast>& windows) {
  if (windows.empty()) return {};
  const auto n = static_cast<int64_t>(windows.size());
  const int C = static_cast<int>(windows.front().series->num_channels());
  SampleBuffers batch(n, lm.context(), 0, C);
  for (int64_t b = 0; b < n; ++b) fill_context(*windows[b].series, *windows[b].scaler, batch, b);
  const SampleBuffers known = gather_known(windows);
  SampleBatch view = batch.view(n);
  if (known.capacity > 0) view.known = known.view(n).known;
  const int Q = lm.config().levels(), m = lm.config().median_level();
  std::vector<float> point(static_cast<size_t>(n) * H * C), levels;
  try {
    train::model_forecaster(lm.members(), C, H, Q > 1 ? &levels : nullptr, lm.calibration.get())(
        view, point.data());
  } catch (const model::NonFiniteForecast& e) {
    throw InputError(*windows[e.window()].label + ": " + lm.path +
                     " forecasts NaN or infinite values from its last " +
                     std::to_string(lm.context()) +
                     " rows; expected finite values (are they far outside the range the model "
                     "was trained on?)");
  } catch (const model::UnobservedContext& e) {
    const data::TimeSeries& series = *windows[e.window()].series;
    const std::string what =
        e.channel() >= 0 ? "column '" + series.channels[e.channel()] + "'" : "every column";
    throw UnreadableWindow(*windows[e.window()].label + ": " + what +
                               " is missing in all of the last " + std::to_string(e.steps()) +
                               " rows, which " + lm.path + " reads",
                           static_cast<size_t>(e.window()));
  }
  std::vector<std::vector<float>> out;
  out.reserve(windows.size());
  const size_t per_point = static_cast<size_t>(H) * C, per_levels = per_point * Q;
  for (int64_t b = 0; b < n; ++b)
    out.push_back(to_output(*windows[b].scaler, point.data() + b * per_point,
                            Q > 1 ? levels.data() + b * per_levels : nullptr, H, C, Q, m));
  return out;
}

}  // namespace attnfc::cli
