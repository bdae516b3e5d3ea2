// The scoring protocol of a run (scorer.hpp).
#include "attnfc/train/scorer.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"

namespace attnfc::train {

namespace {

void mask_gaps(const data::TimeSeries& series, std::vector<float>& v) {
  if (series.missing_policy == data::MissingPolicy::kMask)
    for (size_t i = 0; i < v.size(); ++i)
      if (!series.observed[i]) v[i] = std::nanf("");
}

// The seasonal period most series' training rows show (ties: the shorter), at most context.
int common_period(const std::vector<SeriesRef>& trains, int context) {
  std::map<int, size_t> votes;
  for (const SeriesRef& t : trains) ++votes[infer_period(t, context)];
  int best = 1;
  size_t most = 0;
  for (const auto& [period, n] : votes)
    if (n > most) best = period, most = n;
  return std::min(best, context);
}

}  // namespace

std::vector<float> scaled_with_gaps(const data::TimeSeries& series, const data::Scaler& scaler) {
  std::vector<float> v = series.values;
  scaler.transform(v.data(), series.rows());
  mask_gaps(series, v);
  return v;
}

std::vector<float> scaled_with_gaps(const data::TimeSeries& series, const data::PanelSplit& split,
                                    const data::PanelScaler& scalers) {
  std::vector<float> v = series.values;
  data::scale_panel(series, split, scalers, v.data());
  mask_gaps(series, v);
  return v;
}

Scorer::Scorer(const data::TimeSeries& series, const data::PanelScaler& scalers,
               const data::PanelSplit& split, int context, int horizon, int batch,
               const std::vector<std::string>& parts)
    : series_(&series),
      scalers_(&scalers),
      split_(split),
      context_(context),
      horizon_(horizon),
      batch_(batch),
      parts_(parts),
      scaled_(series) {
  data::scale_panel(series, split, scalers, scaled_.values.data());
  const int C = static_cast<int>(series.num_channels());
  for (const auto& part : parts_) {
    if (part != "val" && part != "test")
      throw std::invalid_argument("Scorer: unknown split part '" + part + "'");
    bool any = false;
    for (const EvalPart& p : part_rows(part))
      any |= data::count_windows(p.rows, static_cast<size_t>(context + horizon)) > 0;
    if (!any)
      throw InputError(series.source + ": the " + part + " split holds no complete window of " +
                       "context " + std::to_string(context) + " + horizon " +
                       std::to_string(horizon) +
                       "; lower model.context_length or model.horizon, or change data.split");
  }
  // The fits read the training rows with NaN where a value is missing under "mask".
  const std::vector<float> values = scaled_with_gaps(series, split, scalers);
  std::vector<SeriesRef> trains;
  for (const data::Split& sp : split.splits)
    trains.push_back(
        {values.data() + sp.train.begin * C, static_cast<int64_t>(sp.train.size()), C});
  try {
    period_ = common_period(trains, context);
    baselines_ = baseline_forecasters(trains, context, horizon, period_);
  } catch (const std::exception& e) {
    throw InputError(
        series.source + ": the baselines every run is scored against cannot be " +
        "fit on the training rows (" + e.what() +
        "); lower model.context_length or model.horizon, give more rows, or fill the gaps "
        "(data.missing: interpolate)");
  }
  for (size_t k = 0; k < trains.size(); ++k) {
    const SeriesRef& t = trains[k];
    mase_scaled_.push_back(mase_scale(t.data, t.rows, C, period_));
    std::vector<float> orig(t.data, t.data + t.rows * C);
    scalers.at(k).inverse_transform(orig.data(), static_cast<size_t>(t.rows));
    mase_original_.push_back(mase_scale(orig.data(), t.rows, C, period_));
  }
}

std::vector<EvalPart> Scorer::part_rows(const std::string& part) const {
  std::vector<EvalPart> out;
  for (size_t k = 0; k < split_.splits.size(); ++k) {
    const data::Split& sp = split_.splits[k];
    const data::Scaler* scaler = &scalers_->at(k);
    out.push_back({part == "train" ? sp.train
                   : part == "val" ? sp.val
                                   : sp.test,
                   mase_scaled_.empty() ? std::vector<double>{} : mase_scaled_[k],
                   mase_original_.empty() ? std::vector<double>{} : mase_original_[k],
                   [scaler](float* v, int64_t rows) {
                     scaler->inverse_transform(v, static_cast<size_t>(rows));
                   }});
  }
  return out;
}

int64_t Scorer::validation_windows() const {
  int64_t n = 0;
  for (const data::Split& sp : split_.splits)
    n += static_cast<int64_t>(data::count_windows(sp.val, context_ + horizon_));
  return n;
}

double Scorer::validation_mse(const Members& model, int64_t max_windows) const {
  std::vector<EvalPart> parts = part_rows("val");
  const auto window = static_cast<size_t>(context_ + horizon_);
  if (max_windows > 0) {
    // The first ones of each series, the budget shared evenly (a panel's early stopping
    // must see every series, not the first few).
    const size_t each = (static_cast<size_t>(max_windows) + parts.size() - 1) / parts.size();
    for (EvalPart& p : parts) {
      const size_t n = std::min(each, data::count_windows(p.rows, window));
      p.rows.end = n > 0 ? p.rows.begin + window + n - 1 : p.rows.begin;
    }
  }
  const int C = static_cast<int>(series_->num_channels());
  const PanelScores scored =
      evaluate_parts(scaled_, parts, context_, horizon_, batch_,
                     {{"attnfc", model_forecaster(model, C, 0, nullptr, nullptr, true)}}, false);
  const Metrics& m = scored.all.front().scaled;
  return m.windows > 0 ? m.mse : std::nan("");
}

std::string Scorer::describe_part(const std::string& part, int64_t windows,
                                  int64_t unscored) const {
  const std::string head =
      part + " split: " + std::to_string(windows) + " windows" +
      (unscored > 0 ? " (" + std::to_string(unscored) +
                          " not scored: a target column has no observed value in their context)"
                    : "");
  if (split_.splits.size() > 1)
    return head + " over " + std::to_string(split_.splits.size()) + " series\n";
  const data::Split& sp = split_.splits.front();
  const data::RowRange t = part == "val" ? sp.val_targets() : sp.test_targets();
  return head + ", target rows " + std::to_string(t.begin) + ".." + std::to_string(t.end) + " (" +
         series_->format_time(series_->timestamps[t.begin]) + " .. " +
         series_->format_time(series_->timestamps[t.end - 1]) + ")\n";
}

namespace {

// The model's forecaster; a quantile model's also fills its levels, scored as intervals.
NamedForecaster quantile_aware(const std::string& name, const Members& m, int C) {
  const model::ModelConfig& cfg = m.front()->config();
  // NaN where a sample's context is unreadable: scoring does not count those targets.
  if (cfg.levels() == 1)
    return {name, model_forecaster(m, C, 0, nullptr, nullptr, true), {}, nullptr};
  auto levels = std::make_shared<std::vector<float>>();
  return {name, model_forecaster(m, C, 0, levels.get(), nullptr, true), cfg.quantiles, levels};
}

// "attnfc-calibrated": forecaster `base` of `all` (the raw model) with `cal` applied to
// its levels, so scoring both costs one forward pass (evaluate_parts' twins).
NamedForecaster calibrated_twin(const std::vector<NamedForecaster>& all, int base,
                                const Calibration& cal, int H) {
  NamedForecaster twin{"attnfc-calibrated", nullptr, all[static_cast<size_t>(base)].quantiles,
                       std::make_shared<std::vector<float>>()};
  twin.base = base;
  twin.adjust_levels = [&cal, H](float* levels, int64_t count) { cal.apply(levels, count, H); };
  return twin;
}

}  // namespace

// Columns or series of different scales pooled in original units: said, and shown per column
// when the breakdown is on.
std::string Scorer::format_scores(const std::vector<ScoredModel>& scored) const {
  const auto targets = static_cast<size_t>(series_->target_channels > 0 ? series_->target_channels
                                                                        : series_->num_channels());
  std::string note;
  if (targets > 1)
    note = "original units pool " + std::to_string(targets) + " columns of different scales; " +
           (breakdown_ ? "per column below" : "attnfc evaluate shows them per column");
  else if (split_.splits.size() > 1)
    note = "original units pool " + std::to_string(split_.splits.size()) +
           " series of different scales; compare the scaled units, or per series";
  std::string out = format_table(scored, note);
  if (!breakdown_ || targets < 2) return out;
  std::vector<std::string> names;
  std::vector<Breakdown> original;
  for (const ScoredModel& m : scored) names.push_back(m.name), original.push_back(m.by_original);
  return out + format_column_table(names, original, series_->channels);
}

nlohmann::json Scorer::breakdown_json(const std::vector<ScoredModel>& scored) const {
  nlohmann::json j = {{"columns", series_->channels}};
  for (const ScoredModel& m : scored)
    j[m.name] = {{"scaled", to_json(m.by_scaled)}, {"original", to_json(m.by_original)}};
  return j;
}

void Scorer::add_baselines(const std::vector<float>& q, std::vector<NamedForecaster>& all) const {
  for (const NamedForecaster& b : baselines_) {
    // A quantile model's intervals meet baselines' intervals: seasonal naive with its
    // training residuals' quantiles, NLinear with its validation residuals' (split
    // conformal); repeat-last stays a point forecast.
    const bool seasonal = b.name.rfind("seasonal-naive", 0) == 0, nlinear = b.name == "nlinear";
    if (q.empty() || !(seasonal || nlinear)) {
      all.push_back(b);
      continue;
    }
    all.push_back(with_residual_levels(b, q, scaled_, part_rows(seasonal ? "train" : "val"),
                                       context_, horizon_, batch_));
  }
}

Calibration Scorer::calibrate(const Members& model, const std::string& method) const {
  const int C = static_cast<int>(series_->num_channels());
  return fit_conformal(scaled_, part_rows("val"), context_, horizon_, batch_,
                       quantile_aware("attnfc", model, C), method);
}

nlohmann::json Scorer::evaluate(const Members& model, const Members& linear_start,
                                std::string* table, const std::atomic<bool>* stop,
                                nlohmann::json* per_series, const Calibration* cal) const {
  const int C = static_cast<int>(series_->num_channels());
  std::vector<NamedForecaster> all{quantile_aware("attnfc", model, C)};
  if (cal) all.push_back(calibrated_twin(all, 0, *cal, horizon_));
  if (!linear_start.empty()) all.push_back(quantile_aware("linear-start", linear_start, C));
  if (score_baselines_) add_baselines(model.front()->config().quantiles, all);
  nlohmann::json out = {{"seasonal_period", period_}};
  if (!split_.skipped.empty()) {  // a panel's series too short to score, said, not hidden
    const auto first = split_.skipped.begin();
    out["skipped_series"] = {
        {"count", split_.skipped.size()},
        {"first", std::vector<std::string>(
                      first, first + std::min<ptrdiff_t>(
                                         5, static_cast<ptrdiff_t>(split_.skipped.size())))}};
  }
  const std::vector<data::SeriesSegment> segments = series_->series_segments();
  for (const auto& part : parts_) {
    const std::vector<EvalPart> rows = part_rows(part);
    int64_t windows = 0;  // complete windows, whether or not a target in them counts
    for (const EvalPart& p : rows)
      windows += static_cast<int64_t>(data::count_windows(p.rows, context_ + horizon_));
    const PanelScores scored =
        evaluate_parts(scaled_, rows, context_, horizon_, batch_, all, per_series != nullptr, stop);
    out[part] = {{"windows", windows}, {"models", to_json(scored.all)}};
    if (scored.unscored > 0) out[part]["unscored_windows"] = scored.unscored;
    if (table)
      *table += describe_part(part, windows, scored.unscored) + format_scores(scored.all) + "\n";
    if (breakdown_) out[part]["breakdown"] = breakdown_json(scored.all);
    if (split_.splits.size() == 1) {
      const data::Split& sp = split_.splits.front();
      const data::RowRange t = part == "val" ? sp.val_targets() : sp.test_targets();
      out[part]["target_rows"] = {t.begin, t.end};
    } else {
      out[part]["series"] = split_.splits.size();
    }
    if (!per_series) continue;
    nlohmann::json list = nlohmann::json::array();
    for (size_t k = 0; k < scored.per_part.size(); ++k)
      if (!scored.per_part[k].empty())
        list.push_back(
            {{"id", segments[split_.series[k]].id}, {"models", to_json(scored.per_part[k])}});
    (*per_series)[part] = std::move(list);
  }
  return out;
}

}  // namespace attnfc::train
