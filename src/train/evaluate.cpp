#include "attnfc/train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

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

}  // namespace

PanelScores evaluate_parts(const data::TimeSeries& scaled, const std::vector<EvalPart>& parts,
                           int context, int horizon, int64_t batch,
                           const std::vector<NamedForecaster>& forecasters, bool per_part,
                           const std::atomic<bool>* stop) {
  const int C = static_cast<int>(scaled.num_channels()), L = context, H = horizon;
  std::vector<data::RowRange> ranges;
  for (const EvalPart& p : parts) ranges.push_back(p.rows);
  const data::WindowSampler windows(scaled, ranges, static_cast<size_t>(L), static_cast<size_t>(H),
                                    ChannelMode::kMixed);
  const auto n = static_cast<int64_t>(windows.num_windows());
  if (n == 0)
    throw InputError("evaluation: the split (rows " + std::to_string(ranges.front().begin) + ".." +
                     std::to_string(ranges.back().end) + " of " + std::to_string(scaled.rows()) +
                     ") holds no complete window of context " + std::to_string(L) + " + horizon " +
                     std::to_string(H));
  batch = std::max<int64_t>(1, batch);
  SampleBuffers samples(batch, L, H, C);
  data::reserve_known(scaled, samples);
  std::vector<float> out(static_cast<size_t>(batch) * H * C);
  std::vector<float> actual_orig(static_cast<size_t>(H) * C), forecast_orig(actual_orig.size());
  PanelScores result;
  if (per_part) result.per_part.resize(parts.size());
  for (const auto& f : forecasters) {
    const size_t first_part = windows.window(0).part;
    Scores sc = start_scores(f, parts[first_part], H, C);
    std::vector<float> level_scratch;
    size_t current = first_part;
    const auto open_part = [&](size_t p) {
      if (per_part)
        sc.part = {MetricAccumulator(H, C, parts[p].mase_scaled),
                   MetricAccumulator(H, C, parts[p].mase_original)};
    };
    const auto close_part = [&] {
      if (per_part)
        result.per_part[current].push_back(
            {f.name, sc.part[0].result(), sc.part[1].result(), {}, {}, {}});
    };
    open_part(current);
    for (int64_t first = 0, k = 0; first < n; first += batch, ++k) {
      if (stop && stop->load()) throw ScoringInterrupted();
      const auto b = static_cast<int64_t>(windows.fill_batch(static_cast<size_t>(k), samples));
      f.forecast(samples.view(b), out.data());
      for (int64_t i = 0; i < b; ++i) {
        const data::WindowRef w = windows.window(static_cast<size_t>(first + i));
        if (w.part != current) {
          close_part();
          current = w.part;
          open_part(current);
          sc.all_scaled.next_series(parts[current].mase_scaled);
          sc.all_orig.next_series(parts[current].mase_original);
          if (sc.intervals) sc.intervals->next_series(parts[current].mase_original);
        }
        const size_t at = static_cast<size_t>(i) * H * C;
        try {
          add_window(sc, &out[at], &samples.target_values[at], &samples.target_observed[at],
                     parts[current], H, forecast_orig, actual_orig);
          if (sc.intervals)
            add_levels(sc, f, i, H, C, actual_orig.data(), &samples.target_observed[at],
                       parts[current], level_scratch);
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(f.name + ": window starting at row " +
                                   std::to_string(w.start_row) + ": " + e.what());
        }
      }
    }
    close_part();
    result.all.push_back({f.name,
                          sc.all_scaled.result(),
                          sc.all_orig.result(),
                          {},
                          sc.by_scaled.result(),
                          sc.by_orig.result()});
    if (sc.intervals) result.all.back().intervals = sc.intervals->result();
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
