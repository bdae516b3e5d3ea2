// The scoring protocol of a run (scorer.hpp).
#include "attnfc/train/scorer.hpp"

#include <cmath>

#include "attnfc/base/error.hpp"

namespace attnfc::train {

std::vector<float> scaled_with_gaps(const data::TimeSeries& series, const data::Scaler& scaler) {
  std::vector<float> v = series.values;
  scaler.transform(v.data(), series.rows());
  if (series.missing_policy == data::MissingPolicy::kMask)
    for (size_t i = 0; i < v.size(); ++i)
      if (!series.observed[i]) v[i] = std::nanf("");
  return v;
}

Scorer::Scorer(const data::TimeSeries& series, const data::Scaler& scaler, const data::Split& split,
               int context, int horizon, int batch, const std::vector<std::string>& parts)
    : series_(&series),
      scaler_(&scaler),
      split_(split),
      context_(context),
      horizon_(horizon),
      batch_(batch),
      parts_(parts),
      scaled_(series) {
  scaler.apply(scaled_);
  const int C = static_cast<int>(series.num_channels());
  for (const auto& part : parts_) {
    if (part != "val" && part != "test")
      throw std::invalid_argument("Scorer: unknown split part '" + part + "'");
    if (data::count_windows(part_rows(part), static_cast<size_t>(context + horizon)) == 0)
      throw InputError(series.source + ": the " + part + " split holds no complete window of " +
                       "context " + std::to_string(context) + " + horizon " +
                       std::to_string(horizon) +
                       "; lower model.context_length or model.horizon, or change data.split");
  }
  // The fits read the training rows with NaN where a value is missing under "mask".
  const std::vector<float> values = scaled_with_gaps(series, scaler);
  const SeriesRef train_rows{values.data() + split.train.begin * C,
                             static_cast<int64_t>(split.train.size()), C};
  try {
    baselines_ = baseline_forecasters(train_rows, context, horizon, 0, &period_);
  } catch (const std::exception& e) {
    throw InputError(
        series.source + ": the baselines every run is scored against cannot be " +
        "fit on the training rows (" + e.what() +
        "); lower model.context_length or model.horizon, give more rows, or fill the gaps "
        "(data.missing: interpolate)");
  }
  mase_scaled_ = mase_scale(train_rows.data, train_rows.rows, C, period_);
  std::vector<float> train_orig(train_rows.data, train_rows.data + train_rows.rows * C);
  scaler.inverse_transform(train_orig.data(), train_rows.rows);
  mase_original_ = mase_scale(train_orig.data(), train_rows.rows, C, period_);
}

data::RowRange Scorer::part_rows(const std::string& part) const {
  return part == "val" ? split_.val : split_.test;
}

double Scorer::validation_mse(const Members& model, int64_t max_windows) const {
  data::RowRange rows = part_rows("val");
  const auto window = static_cast<size_t>(context_ + horizon_);
  if (max_windows > 0 && static_cast<size_t>(max_windows) < data::count_windows(rows, window))
    rows.end = rows.begin + window + static_cast<size_t>(max_windows) - 1;  // the first ones
  const int C = static_cast<int>(series_->num_channels());
  const std::vector<ScoredModel> scored =
      evaluate_windows(scaled_, rows, context_, horizon_, batch_, {}, mase_scaled_, mase_original_,
                       {{"attnfc", model_forecaster(model, C)}});
  const Metrics& m = scored.front().scaled;
  return m.windows > 0 ? m.mse : std::nan("");
}

nlohmann::json Scorer::evaluate(const Members& model, const Members& linear_start,
                                std::string* table, const std::atomic<bool>* stop) const {
  const int C = static_cast<int>(series_->num_channels());
  std::vector<NamedForecaster> all{{"attnfc", model_forecaster(model, C)}};
  if (!linear_start.empty()) all.push_back({"linear-start", model_forecaster(linear_start, C)});
  all.insert(all.end(), baselines_.begin(), baselines_.end());
  auto unscale = [this](float* v, int64_t rows) { scaler_->inverse_transform(v, rows); };
  nlohmann::json out = {{"seasonal_period", period_}};
  for (const auto& part : parts_) {
    const data::RowRange rows = part_rows(part);
    const data::RowRange t = part == "val" ? split_.val_targets() : split_.test_targets();
    const auto windows =
        static_cast<int64_t>(data::count_windows(rows, static_cast<size_t>(context_ + horizon_)));
    const auto scored = evaluate_windows(scaled_, rows, context_, horizon_, batch_, unscale,
                                         mase_scaled_, mase_original_, all, stop);
    if (table)
      *table += part + " split: " + std::to_string(windows) + " windows, target rows " +
                std::to_string(t.begin) + ".." + std::to_string(t.end) + " (" +
                series_->format_time(series_->timestamps[t.begin]) + " .. " +
                series_->format_time(series_->timestamps[t.end - 1]) + ")\n" +
                format_table(scored) + "\n";
    out[part] = {
        {"windows", windows}, {"target_rows", {t.begin, t.end}}, {"models", to_json(scored)}};
  }
  return out;
}

}  // namespace attnfc::train
