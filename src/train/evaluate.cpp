#include "attnfc/train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/data/window.hpp"

namespace attnfc::train {

namespace {

// The running scores of one forecaster: over everything, and over the current part.
struct Scores {
  MetricAccumulator all_scaled, all_orig;
  std::vector<MetricAccumulator> part;           // {scaled, original} of the current part, if asked
  std::optional<IntervalAccumulator> intervals;  // a quantile forecaster's, original units
  BreakdownAccumulator by_scaled, by_orig;       // per column and step, over all parts
};

// Window i of the batch's levels [H, Q, C], unscaled, into the interval scores.
void add_levels(Scores& sc, const NamedForecaster& f, int64_t i, int H, int C,
                const float* actual_orig, const uint8_t* counted, const EvalPart& part,
                std::vector<float>& scratch) {
  const size_t n = static_cast<size_t>(H) * f.quantiles.size() * C;
  scratch.assign(f.levels->begin() + static_cast<ptrdiff_t>(i * n),
                 f.levels->begin() + static_cast<ptrdiff_t>((i + 1) * n));
  if (part.unscale) part.unscale(scratch.data(), H * static_cast<int64_t>(f.quantiles.size()));
  sc.intervals->add(scratch.data(), actual_orig, counted);
}

// A forecaster's scores before its first window, in `first`'s MASE denominators.
Scores start_scores(const NamedForecaster& f, const EvalPart& first, int H, int C) {
  Scores sc{MetricAccumulator(H, C, first.mase_scaled),
            MetricAccumulator(H, C, first.mase_original),
            {},
            {},
            BreakdownAccumulator(H, C),
            BreakdownAccumulator(H, C)};
  if (f.levels) sc.intervals.emplace(f.quantiles, H, C, first.mase_original);
  return sc;
}

void add_window(Scores& sc, const float* fc, const float* actual, const uint8_t* counted,
                const EvalPart& part, int H, std::vector<float>& fc_orig,
                std::vector<float>& actual_orig) {
  sc.all_scaled.add(fc, actual, counted);  // checks the forecast is finite
  sc.by_scaled.add(fc, actual, counted);
  if (!sc.part.empty()) sc.part[0].add(fc, actual, counted);
  std::copy_n(actual, actual_orig.size(), actual_orig.begin());
  std::copy_n(fc, fc_orig.size(), fc_orig.begin());
  if (part.unscale) {
    part.unscale(actual_orig.data(), H);
    part.unscale(fc_orig.data(), H);
  }
  sc.all_orig.add(fc_orig.data(), actual_orig.data(), counted);
  sc.by_orig.add(fc_orig.data(), actual_orig.data(), counted);
  if (!sc.part.empty()) sc.part[1].add(fc_orig.data(), actual_orig.data(), counted);
}

// One forecaster through a pass: its scores, the part of its last window, its forecasts of
// the current batch [batch, H, C].
struct Running {
  Scores sc;
  size_t current;
  std::vector<float> out, level_scratch;
};

// Forecaster j's forecasts of the batch's `count` windows into run[j].out (and its levels):
// its own pass, or its base's outputs (and adjusted levels) for a twin.
void forecast_batch(const std::vector<NamedForecaster>& all, std::vector<Running>& run, size_t j,
                    const SampleBatch& batch, int64_t count) {
  const NamedForecaster& f = all[j];
  if (f.base < 0) {
    f.forecast(batch, run[j].out.data());
    return;
  }
  const auto b = static_cast<size_t>(f.base);
  run[j].out = run[b].out;
  *f.levels = *all[b].levels;
  f.adjust_levels(f.levels->data(), count);
}

// A forecaster's scores over every window, once its last window is in.
ScoredModel totals(const NamedForecaster& f, const Scores& sc) {
  ScoredModel m{f.name, sc.all_scaled.result(), sc.all_orig.result(),
                {},     sc.by_scaled.result(),  sc.by_orig.result()};
  if (sc.intervals) m.intervals = sc.intervals->result();
  return m;
}

void check_twins(const std::vector<NamedForecaster>& all) {
  for (size_t j = 0; j < all.size(); ++j) {
    const NamedForecaster& f = all[j];
    if (f.base < 0) continue;
    const bool ok = static_cast<size_t>(f.base) < j && f.levels && f.adjust_levels &&
                    all[static_cast<size_t>(f.base)].levels &&
                    all[static_cast<size_t>(f.base)].quantiles == f.quantiles;
    if (!ok)
      throw std::logic_error("evaluate_parts: " + f.name +
                             " is a twin of no earlier quantile forecaster with its levels");
  }
}

// Once per split: its windows whose context holds no observed value of any target column,
// and the target columns of other windows with none (`lanes`), which no forecaster can
// forecast and every one leaves out.
void warn_unscored(const data::TimeSeries& scaled, const std::vector<data::RowRange>& ranges,
                   size_t skipped, size_t total, size_t lanes, int context) {
  static std::set<std::pair<size_t, size_t>> warned;
  if ((skipped == 0 && lanes == 0) ||
      !warned.emplace(ranges.front().begin, ranges.back().end).second)
    return;
  spdlog::warn(
      "{}: over rows {}..{} of {} windows, {} hold no observed value of any target column in "
      "their {} context steps and are not scored, and {} target columns of the others have "
      "none there and are not scored in them (every forecaster leaves them out)",
      scaled.source, ranges.front().begin, ranges.back().end, total, skipped, context, lanes);
}

// The windows every forecaster scores: each complete window of `ranges` in which a target
// column has a value in the context (`skipped` counts the others); InputError when none is.
data::WindowSampler scoring_windows(const data::TimeSeries& scaled,
                                    const std::vector<data::RowRange>& ranges, int L, int H,
                                    size_t& skipped) {
  data::WindowSampler windows(scaled, ranges, static_cast<size_t>(L), static_cast<size_t>(H),
                              ChannelMode::kMixed);
  skipped = windows.keep_windows_with_context();
  const std::string rows =
      std::to_string(ranges.front().begin) + ".." + std::to_string(ranges.back().end);
  const std::string shape = "context " + std::to_string(L) + " + horizon " + std::to_string(H);
  if (windows.num_windows() == 0 && skipped > 0)
    throw InputError(scaled.source + ": evaluation: rows " + rows + " hold " +
                     std::to_string(skipped) + " complete windows of " + shape +
                     ", and in every one each target column is missing in the whole context; "
                     "expected at least one window with a value there");
  if (windows.num_windows() == 0)
    throw InputError(scaled.source + ": evaluation: the split (rows " + rows + " of " +
                     std::to_string(scaled.rows()) + ") holds no complete window of " + shape);
  return windows;
}

}  // namespace

PanelScores evaluate_parts(const data::TimeSeries& scaled, const std::vector<EvalPart>& parts,
                           int context, int horizon, int64_t batch,
                           const std::vector<NamedForecaster>& forecasters, bool per_part,
                           const std::atomic<bool>* stop) {
  check_twins(forecasters);
  const int C = static_cast<int>(scaled.num_channels()), L = context, H = horizon;
  std::vector<data::RowRange> ranges;
  for (const EvalPart& p : parts) ranges.push_back(p.rows);
  size_t skipped = 0;
  const data::WindowSampler windows = scoring_windows(scaled, ranges, L, H, skipped);
  const auto n = static_cast<int64_t>(windows.num_windows());
  batch = std::max<int64_t>(1, batch);
  SampleBuffers samples(batch, L, H, C);
  data::reserve_known(scaled, samples);
  std::vector<float> actual_orig(static_cast<size_t>(H) * C), forecast_orig(actual_orig.size());
  PanelScores result;
  result.unscored = static_cast<int64_t>(skipped);
  if (per_part) result.per_part.resize(parts.size());
  const size_t first_part = windows.window(0).part;
  std::vector<Running> run;
  for (const auto& f : forecasters)
    run.push_back({start_scores(f, parts[first_part], H, C),
                   first_part,
                   std::vector<float>(static_cast<size_t>(batch) * H * C),
                   {}});
  const auto open_part = [&](Running& r) {
    if (per_part)
      r.sc.part = {MetricAccumulator(H, C, parts[r.current].mase_scaled),
                   MetricAccumulator(H, C, parts[r.current].mase_original)};
  };
  const auto close_part = [&](const NamedForecaster& f, Running& r) {
    if (per_part)
      result.per_part[r.current].push_back(
          {f.name, r.sc.part[0].result(), r.sc.part[1].result(), {}, {}, {}});
  };
  for (Running& r : run) open_part(r);
  size_t lanes = 0;  // target columns of kept windows left out
  for (int64_t first = 0, k = 0; first < n; first += batch, ++k) {
    if (stop && stop->load()) throw ScoringInterrupted();
    const auto b = static_cast<int64_t>(windows.fill_batch(static_cast<size_t>(k), samples));
    lanes += data::uncount_unreadable_lanes(samples, static_cast<size_t>(b));
    for (size_t j = 0; j < forecasters.size(); ++j) {
      const NamedForecaster& f = forecasters[j];
      Running& r = run[j];
      forecast_batch(forecasters, run, j, samples.view(b), b);
      for (int64_t i = 0; i < b; ++i) {
        const data::WindowRef w = windows.window(static_cast<size_t>(first + i));
        if (w.part != r.current) {
          close_part(f, r);
          r.current = w.part;
          open_part(r);
          r.sc.all_scaled.next_series(parts[r.current].mase_scaled);
          r.sc.all_orig.next_series(parts[r.current].mase_original);
          if (r.sc.intervals) r.sc.intervals->next_series(parts[r.current].mase_original);
        }
        const size_t at = static_cast<size_t>(i) * H * C;
        try {
          add_window(r.sc, &r.out[at], &samples.target_values[at], &samples.target_observed[at],
                     parts[r.current], H, forecast_orig, actual_orig);
          if (r.sc.intervals)
            add_levels(r.sc, f, i, H, C, actual_orig.data(), &samples.target_observed[at],
                       parts[r.current], r.level_scratch);
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(f.name + ": window starting at row " +
                                   std::to_string(w.start_row) + ": " + e.what());
        }
      }
    }
  }
  warn_unscored(scaled, ranges, skipped, skipped + static_cast<size_t>(n), lanes, L);
  for (size_t j = 0; j < forecasters.size(); ++j) {
    Running& r = run[j];
    close_part(forecasters[j], r);
    result.all.push_back(totals(forecasters[j], r.sc));
  }
  return result;
}

std::vector<ScoredModel> evaluate_windows(const data::TimeSeries& scaled, data::RowRange rows,
                                          int context, int horizon, int64_t batch,
                                          const Unscale& unscale,
                                          const std::vector<double>& mase_scaled,
                                          const std::vector<double>& mase_original,
                                          const std::vector<NamedForecaster>& forecasters,
                                          const std::atomic<bool>* stop) {
  return evaluate_parts(scaled, {EvalPart{rows, mase_scaled, mase_original, unscale}}, context,
                        horizon, batch, forecasters, false, stop)
      .all;
}

std::vector<NamedForecaster> baseline_forecasters(const SeriesRef& train, int context, int horizon,
                                                  int period, int* period_used) {
  if (period <= 0) period = infer_period(train, context);
  period = std::min(period, context);
  if (period_used) *period_used = period;
  return baseline_forecasters(std::vector<SeriesRef>{train}, context, horizon, period);
}

std::vector<NamedForecaster> baseline_forecasters(const std::vector<SeriesRef>& trains, int context,
                                                  int horizon, int period) {
  std::vector<NamedForecaster> out;
  out.push_back(
      {"repeat-last", [=](const SampleBatch& s, float* o) { repeat_last(s, horizon, o); }});
  out.push_back({"seasonal-naive(" + std::to_string(period) + ")",
                 [=](const SampleBatch& s, float* o) { seasonal_naive(s, horizon, period, o); }});
  auto nlinear =
      std::make_shared<NLinear>(NLinear::fit_path(trains, context, horizon, {1e-6}).front());
  out.push_back(
      {"nlinear", [nlinear](const SampleBatch& s, float* o) { nlinear->forecast(s, o); }});
  return out;
}

nlohmann::json to_json(const std::vector<ScoredModel>& scored) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : scored) {
    j[s.name] = {{"scaled", to_json(s.scaled)}, {"original", to_json(s.original)}};
    if (s.intervals) j[s.name]["intervals"] = to_json(*s.intervals);
  }
  return j;
}

std::string format_table(const std::vector<ScoredModel>& scored, const std::string& pooled_note) {
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
  if (!pooled_note.empty()) out += "(" + pooled_note + ")\n";
  section("original", true);
  for (const auto& s : scored) {
    if (!s.intervals) continue;
    std::snprintf(buf, sizeof buf, "%s intervals (original units): wQL %.4f", s.name.c_str(),
                  s.intervals->wql);
    out += buf;
    for (const IntervalScore& i : s.intervals->intervals) {
      std::snprintf(buf, sizeof buf, "; %g%%: coverage %.3f (ACD %.3f), MSIS %.3f",
                    std::round(i.nominal * 1000) / 10, i.coverage, i.acd, i.msis);
      out += buf;
    }
    out += "\n";
  }
  return out;
}

}  // namespace attnfc::train
