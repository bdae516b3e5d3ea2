// attnfc predict: forecast the rows after the last one of each input CSV with a trained
// model; what is checked in a history is in predict_checks, where forecasts go in
// predict_output.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/panel.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/known_setup.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "predict_batch.hpp"
#include "predict_checks.hpp"
#include "predict_levels.hpp"
#include "predict_output.hpp"

namespace attnfc::cli {

namespace {

// 9999-12-31 23:59:59 UTC: the last time the CSV reader (and so `predict` itself, on
// the forecast it wrote) accepts.
constexpr int64_t kLastReadableTime = 253402300799;

// The columns predict writes: the targets (the first channels), not the past covariates.
size_t targets_of(const data::TimeSeries& series) {
  return series.target_channels > 0 ? series.target_channels : series.num_channels();
}

// After inverse scaling: a series near FLT_MAX or a checkpoint scale of 1e300 turns
// finite network outputs into inf, which must not be printed with exit 0.
void check_finite(const std::vector<float>& forecast, const data::TimeSeries& series, int H,
                  const std::string& input, const std::string& model) {
  const size_t C = series.num_channels(), W = forecast.size() / (C * static_cast<size_t>(H));
  for (int h = 0; h < H; ++h)
    for (size_t c = 0; c < targets_of(series); ++c) {
      bool finite = true;
      float v = 0;
      for (size_t w = 0; w < W && finite; ++w) {
        v = forecast[(static_cast<size_t>(h) * C + c) * W + w];
        finite = std::isfinite(v);
      }
      if (finite) continue;
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

// Gives a series whose frequency could not be inferred (too few rows) the model's.
void ensure_frequency(data::TimeSeries& series, const train::LoadedModel& lm,
                      const std::string& input) {
  if (series.frequency.known()) return;
  if (lm.frequency == "unknown" || lm.frequency.empty())
    throw InputError(input +
                     ": cannot tell the time step of the series, so the forecast "
                     "has no timestamps; give data.frequency in the training config");
  series.frequency = data::Frequency::parse(lm.frequency);
}

// Where a predict input's future covariates come from: its own rows after the history,
// else --future.
struct Futures {
  train::FutureRows tail, file;
};

// The decoder's inputs for one series (nothing for a model without them): the model's H
// steps after the history, their future covariates from `f`.
SampleBuffers known_for(const train::LoadedModel& lm, const data::TimeSeries& series,
                        const data::Scaler& scaler, const std::string& id, const Futures& f,
                        const std::string& label, int want) {
  SampleBuffers out;
  if (!series.known) return out;
  const size_t H = static_cast<size_t>(lm.horizon()), F = series.known->future_channels;
  const std::vector<int64_t> stamps = series.future_timestamps(H);
  // The decoder's queries never read each other (attention goes from the queries to the
  // encoder only; LayerNorm and feed-forward are per query), so for --horizon below H the
  // steps after it cannot change the forecast: their covariates are not asked for (zeros).
  const std::vector<int64_t> needed(stamps.begin(),
                                    stamps.begin() + std::min<ptrdiff_t>(want, stamps.size()));
  std::vector<float> future;
  if (F > 0) {
    if (!f.file.empty() && f.file.has(id)) {  // an explicit --future wins over tail rows
      future = f.file.at(id, needed, label);
    } else if (f.tail.has(id)) {
      future = f.tail.at(id, needed, label);
    } else if (!f.file.empty()) {
      future = f.file.at(id, needed, label);  // names the file that lacks the series
    } else {
      std::string names;
      for (size_t c = series.num_channels() - series.known->future_channels;
           c < series.num_channels(); ++c)
        names += (names.empty() ? "" : ", ") + series.channels[c];
      throw InputError(label + ": the model reads the future covariates (" + names + ") at the " +
                       std::to_string(lm.horizon()) +
                       " steps after the history; found no row after the last target row. "
                       "Expected them there (targets empty) or in --future FILE");
    }
  }
  future.resize(H * F, 0.0f);
  train::forecast_known(series, scaler, stamps, future, out);
  return out;
}

// Appends the H forecast rows of one series, each led by `lead` ("" or "<id>,").
void append_rows(InputForecast& out, const data::TimeSeries& series,
                 const std::vector<float>& forecast, const std::string& input,
                 const std::string& lead, const LevelColumns& cols) {
  const int C = static_cast<int>(series.num_channels()), W = cols.width;
  const int H = static_cast<int>(forecast.size()) / (C * W);
  const std::vector<int64_t> stamps = series.future_timestamps(H);
  check_times(stamps, series, input);
  char buf[64];
  for (int h = 0; h < H; ++h) {
    std::string row = lead + series.format_time(stamps[h]);
    for (int c = 0; c < static_cast<int>(targets_of(series)); ++c)
      for (const int w : cols.keep) {
        std::snprintf(buf, sizeof buf, ",%.7g", forecast[(static_cast<size_t>(h) * C + c) * W + w]);
        row += buf;
      }
    out.rows.push_back(std::move(row));
  }
}

InputForecast empty_forecast(const data::TimeSeries& series, const std::string& input,
                             const LevelColumns& cols) {
  InputForecast out{input,
                    series.time_columns.size() == 1 ? series.time_columns[0] : "date",
                    "",
                    {},
                    static_cast<int>(targets_of(series) * cols.keep.size())};
  for (size_t c = 0; c < targets_of(series); ++c)
    for (const int w : cols.keep) out.columns += "," + series.channels[c] + cols.suffix[w];
  return out;
}

// The segments --id names (all when it is empty), in the order --id gives them, each once;
// entries are trimmed as ids are when read. An id holding a comma can only be chosen alone
// (--id "b,x" names it when no series is called "b"). An unknown id is an InputError.
std::vector<size_t> chosen_series(const std::vector<data::SeriesSegment>& segments,
                                  const std::string& ids, const std::string& input) {
  std::vector<size_t> out;
  const auto find = [&](const std::string& id) {
    size_t k = 0;
    while (k < segments.size() && segments[k].id != id) ++k;
    return k;
  };
  if (ids.empty()) {
    for (size_t k = 0; k < segments.size(); ++k) out.push_back(k);
    return out;
  }
  if (const size_t whole = find(ids); whole < segments.size()) return {whole};
  for (size_t begin = 0; begin <= ids.size();) {
    const size_t comma = std::min(ids.find(',', begin), ids.size());
    std::string id = ids.substr(begin, comma - begin);
    id.erase(0, id.find_first_not_of(" \t"));
    id.erase(id.find_last_not_of(" \t") + 1);
    const size_t k = find(id);
    if (k == segments.size())
      throw InputError("--id: found '" + id + "', expected a series of " + input + " (" +
                       std::to_string(segments.size()) + " series, the first '" +
                       segments.front().id + "')");
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    begin = comma + 1;
  }
  return out;
}

// A series of a panel waiting for its batch: what its forecast needs and where it goes.
struct PanelSeries {
  data::TimeSeries series;
  data::Scaler scaler;
  SampleBuffers known;
  std::string label, lead;
};

// Forecasts the pending series in one batch and appends their rows in order. A series whose
// context holds nothing the model can read is left out with a warning (one dead sensor must
// not cost the other series their forecasts), or refused with --strict; `skipped` counts them.
void flush(const train::LoadedModel& lm, int H, std::vector<PanelSeries>& pending,
           InputForecast& out, const LevelColumns& cols, const PredictOptions& a, size_t& skipped) {
  std::vector<std::vector<float>> forecasts;
  for (;;) {
    std::vector<SeriesToForecast> windows;
    for (const PanelSeries& p : pending)
      windows.push_back({&p.series, &p.scaler, &p.known, &p.label});
    try {
      forecasts = forecast_windows(lm, H, windows);
      break;
    } catch (const UnreadableWindow& e) {
      if (a.strict) throw InputError(std::string(e.what()) + "; refused by --strict");
      spdlog::warn("{}; that series is not forecast (--strict refuses it)", e.found());
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(e.window()));
      ++skipped;
    }
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    check_finite(forecasts[i], pending[i].series, H, pending[i].label, a.model);
    append_rows(out, pending[i].series, forecasts[i], pending[i].label, pending[i].lead, cols);
  }
  pending.clear();
}

// A panel: every series chosen, forecast from its own history and scaled by the scaler
// training fit on it (a series the model has not seen: by its own history), written as one
// long CSV "<id column>,<time>,<columns>". Series are forecast 64 at a time: products of
// 64 x (context / patch) rows are as fast a row as larger ones, and the network's scratch
// memory stays small (M4 Hourly: 69 MB peak against 84 MB with 256, and no slower). A
// forecast has the same bits in any batch.
InputForecast forecast_panel(const train::LoadedModel& lm, data::TimeSeries& panel,
                             const std::string& input, const PredictOptions& a,
                             const Futures& futures) {
  constexpr size_t kBatch = 64;
  const int H = a.horizon > 0 ? a.horizon : lm.horizon();
  ensure_frequency(panel, lm, input);
  const LevelColumns cols = level_columns(lm.config().quantiles, a.levels, a.model);
  InputForecast out = empty_forecast(panel, input, cols);
  out.time_name = csv_cell(panel.id_column) + "," + out.time_name;
  const std::vector<data::SeriesSegment> segments = panel.series_segments();
  size_t unseen = 0, skipped = 0, chosen = 0;
  std::vector<PanelSeries> pending;
  for (const size_t k : chosen_series(segments, a.ids, input)) {
    PanelSeries p{data::series_of(panel, k),
                  data::Scaler{},
                  {},
                  input + ": series '" + segments[k].id + "'",
                  csv_cell(segments[k].id) + ","};
    report_history(check_history(lm, p.series), p.label, a.strict);
    const data::Scaler* stored = lm.series_scalers.find(segments[k].id);
    p.scaler = stored ? *stored
                      : data::Scaler::fit(p.series, {0, p.series.rows()},
                                          lm.run.data.value_transform(p.series.target_channels));
    unseen += stored ? 0 : 1;
    p.known = known_for(lm, p.series, p.scaler, segments[k].id, futures, p.label, H);
    pending.push_back(std::move(p));
    if (pending.size() == kBatch) flush(lm, H, pending, out, cols, a, skipped);
    ++chosen;
  }
  flush(lm, H, pending, out, cols, a, skipped);
  if (chosen > 0 && skipped == chosen)
    throw InputError(input + ": none of the " + std::to_string(chosen) +
                     " series has a value in the rows the model reads (warnings above); "
                     "expected at least one to forecast");
  if (unseen > 0)
    spdlog::warn("{}: {} series the model was not trained on, each scaled by its own history",
                 input, unseen);
  return out;
}

// One input's forecast: its history checked (warnings, or --strict), its last L rows
// forecast H steps ahead and formatted. Messages name standard input ("-") <stdin>.
InputForecast forecast_input(const train::LoadedModel& lm, const std::string& input,
                             const PredictOptions& a, const train::FutureRows& future_file) {
  const std::string name = input_name(input);
  Futures futures;
  data::TimeSeries tail;
  data::TimeSeries series = lm.read_history(input, &tail);
  futures.tail = train::FutureRows(std::move(tail));
  futures.file = future_file;
  if (!series.id_column.empty()) {
    InputForecast out = forecast_panel(lm, series, name, a, futures);
    out.input = input;
    return out;
  }
  if (!a.ids.empty())
    throw InputError("--id: " + a.model +
                     " was trained on a wide file (no data.id_column); expected no --id");
  report_history(check_history(lm, series), name, a.strict);
  const int H = a.horizon > 0 ? a.horizon : lm.horizon();
  ensure_frequency(series, lm, name);
  const SampleBuffers known = known_for(lm, series, lm.scaler, "", futures, name, H);
  const std::vector<float> forecast =
      forecast_windows(lm, H, {{&series, &lm.scaler, &known, &name}})[0];
  check_finite(forecast, series, H, name, a.model);
  const LevelColumns cols = level_columns(lm.config().quantiles, a.levels, a.model);
  InputForecast out = empty_forecast(series, input, cols);
  append_rows(out, series, forecast, name, "", cols);
  return out;
}

}  // namespace

int run_predict(const PredictOptions& a) {
  const PredictOutputs plan = plan_outputs(a);
  train::LoadedModel lm = train::LoadedModel::load(a.model);
  if (a.uncalibrated) {  // the intervals as trained, to see what calibration changed
    if (!lm.calibration) {
      throw InputError("--uncalibrated: " + a.model +
                       " has no calibration (trained with train.calibrate \"none\"); expected a "
                       "model trained with \"conformal\" or \"conformal_scaled\"");
    }
    lm.calibration.reset();
  }
  // --future is read once (it may be standard input), for every input.
  const train::FutureRows future_file =
      a.future.empty() ? train::FutureRows() : train::FutureRows(lm.read_future(a.future));
  // Every input is forecast before anything is written: an error leaves no output.
  std::vector<InputForecast> forecasts;
  for (const std::string& input : a.inputs)
    forecasts.push_back(forecast_input(lm, input, a, future_file));
  write_forecasts(plan, forecasts);
  return 0;
}

}  // namespace attnfc::cli
