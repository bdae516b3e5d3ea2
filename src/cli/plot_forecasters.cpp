// The forecasters plot draws and the forecast after the last row (plot_forecasters.hpp).
#include "plot_forecasters.hpp"

#include <algorithm>
#include <cmath>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/known_setup.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {

// What a forecast that is not finite in original units is reported with.
struct FiniteCheck {
  std::string what;  // "forecast", "nlinear forecast", ...
  std::string input, model;
  std::vector<std::string> channels;
  size_t targets = 0;
};

// A forecast [count, H, C] that holds inf/NaN would be drawn as nothing (or as a flat
// axis) with exit 0: refuse it, naming the column and the step.
void check_finite(const std::vector<float>& v, int64_t H, const FiniteCheck& c) {
  const size_t C = c.channels.size();
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isfinite(v[i]) || i % C >= c.targets) continue;
    const auto step = static_cast<int64_t>(i / C) % H + 1;
    throw InputError(c.input + ": column '" + c.channels[i % C] + "': the " + c.what + " at step " +
                     std::to_string(step) + " is " + (std::isnan(v[i]) ? "NaN" : "infinite") +
                     " after undoing the scaling of " + c.model +
                     "; expected finite values to plot");
  }
}

// f, each call's forecast [count, H, C] copied to *last, unscaled and checked. (H is the
// model's: a predict-style sample has no target steps, so the batch's horizon is 0.)
train::NamedForecaster keeping(train::NamedForecaster f, std::shared_ptr<std::vector<float>> last,
                               const data::Scaler* scaler, int64_t H, FiniteCheck check) {
  train::BatchForecaster inner = std::move(f.forecast);
  f.forecast = [inner, last, scaler, H, check](const SampleBatch& s, float* out) {
    inner(s, out);
    last->assign(out, out + s.count * H * static_cast<int64_t>(check.channels.size()));
    scaler->inverse_transform(last->data(), static_cast<size_t>(s.count * H));
    check_finite(*last, H, check);
  };
  return f;
}

}  // namespace

PlotForecasters::PlotForecasters(const train::LoadedModel& lm,
                                 const train::LoadedModel& linear_start,
                                 const data::TimeSeries& series, const data::Scaler& scaler,
                                 data::RowRange train_rows, int period, const PlotOptions& a) {
  const int C = static_cast<int>(series.num_channels()), L = lm.context(), H = lm.horizon();
  FiniteCheck check{"forecast", input_name(a.input), a.model, series.channels,
                    series.target_channels > 0 ? series.target_channels : series.num_channels()};
  std::vector<train::NamedForecaster> plain;
  quantiles_ = lm.config().quantiles.size();
  if (quantiles_ > 1) {
    levels_ = std::make_shared<std::vector<float>>();
    plain.emplace_back(
        "attnfc", train::model_forecaster(lm.members(), C, H, levels_.get(), lm.calibration.get()),
        lm.config().quantiles, levels_);
  } else {
    plain.emplace_back("attnfc", train::model_forecaster(lm.members(), C, H));
  }
  if (!linear_start.networks.empty())
    plain.emplace_back("linear-start", train::model_forecaster(linear_start.members(), C, H));
  // The baselines read the training rows with NaN where a value is missing under "mask",
  // as the Scorer's do.
  const std::vector<float> values = train::scaled_with_gaps(series, scaler);
  const train::SeriesRef train{values.data() + train_rows.begin * C,
                               static_cast<int64_t>(train_rows.size()), C};
  for (train::NamedForecaster& b : train::baseline_forecasters(std::vector{train}, L, H, period))
    plain.push_back(std::move(b));
  for (train::NamedForecaster& f : plain) {
    last.push_back(std::make_shared<std::vector<float>>());
    check.what = f.name == "attnfc" ? "forecast" : f.name + " forecast";
    all.push_back(keeping(std::move(f), last.back(), &scaler, H, check));
  }
}

std::vector<std::string> PlotForecasters::names() const {
  std::vector<std::string> out;
  for (const train::NamedForecaster& f : all) out.push_back(f.name);
  return out;
}

std::vector<float> PlotForecasters::model_levels_original(const data::Scaler& scaler,
                                                          int horizon) const {
  if (!levels_ || levels_->empty()) return {};
  std::vector<float> out(*levels_);
  scaler.inverse_transform(out.data(), static_cast<size_t>(horizon) * quantiles_);
  return out;
}

namespace {

// The forecast steps' times, or the reason there are none.
std::string future_stamps(const train::LoadedModel& lm, const data::TimeSeries& series, int H,
                          std::vector<int64_t>& stamps) {
  data::Frequency freq = series.frequency;
  if (!freq.known() && !lm.frequency.empty() && lm.frequency != "unknown")
    freq = data::Frequency::parse(lm.frequency);
  if (!freq.known())
    return "the time step of the series is unknown (give data.frequency in the training config)";
  int64_t previous = series.timestamps.back();
  for (int h = 1; h <= H; ++h) {
    stamps.push_back(freq.advance(series.timestamps.back(), h));
    if (stamps.back() <= previous) return "the forecast steps fall beyond the calendar";
    previous = stamps.back();
  }
  return "";
}

}  // namespace

FutureForecast forecast_future(PlotForecasters& f, const train::LoadedModel& lm,
                               const data::TimeSeries& series, const data::TimeSeries& scaled,
                               const data::Scaler& scaler) {
  FutureForecast out;
  const int L = lm.context(), H = lm.horizon(), C = static_cast<int>(series.num_channels());
  if (series.known && series.known->future_channels > 0) {
    out.unavailable =
        "the model reads future covariates at the forecast steps, which the input does not "
        "hold; attnfc predict --future FILE forecasts with them";
    return out;
  }
  out.unavailable = future_stamps(lm, series, H, out.stamps);
  if (!out.unavailable.empty()) return out;
  // The last L rows, as predict reads them: filled values flagged unobserved.
  SampleBuffers sample(1, L, 0, C);
  const size_t first = (series.rows() - static_cast<size_t>(L)) * C;
  std::copy_n(scaled.values.begin() + static_cast<ptrdiff_t>(first), sample.context_values.size(),
              sample.context_values.begin());
  std::copy_n(series.observed.begin() + static_cast<ptrdiff_t>(first),
              sample.context_observed.size(), sample.context_observed.begin());
  if (const long c = series.unobserved_target(series.rows() - static_cast<size_t>(L), L); c >= 0) {
    out.unavailable = "column '" + series.channels[static_cast<size_t>(c)] +
                      "' is missing in all of the last " + std::to_string(L) +
                      " rows, which the model reads";
    return out;
  }
  SampleBatch batch = sample.view(1);
  SampleBuffers known;
  if (series.known) {
    train::forecast_known(series, scaler, out.stamps, {}, known);
    batch.known = known.view(1).known;
  }
  std::vector<float> forecast(static_cast<size_t>(H) * C);
  for (size_t k = 0; k < f.all.size(); ++k) {
    f.all[k].forecast(batch, forecast.data());
    out.lines.push_back({f.all[k].name, *f.last[k]});
  }
  out.levels = f.model_levels_original(scaler, H);
  return out;
}

}  // namespace attnfc::cli
