// attnfc evaluate: the standard protocol on a CSV, the model beside the baselines.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace attnfc::cli {

namespace {

// The run's linear start (linear_start.safetensors beside the model file), when it is
// there and forecasts the same columns over the same windows; else none, with the reason.
train::LoadedModel linear_start_beside(const train::LoadedModel& lm) {
  bool mismatch = false;
  train::LoadedModel start = lm.linear_start_beside(&mismatch);
  if (mismatch)
    std::printf(
        "note: the linear_start.safetensors beside %s does not match the model "
        "(columns, context or horizon); not scored\n",
        lm.path.c_str());
  return start;
}

// One line per part, series, model and unit: the metrics a panel's evaluation gives each
// series (Scorer::evaluate's per_series).
std::string per_series_csv(const nlohmann::json& per_series) {
  std::string out = "part,id,model,unit,mse,mae,rmse,smape,mase,windows\n";
  for (const auto& [part, list] : per_series.items())
    for (const auto& entry : list)
      for (const auto& [model, units] : entry.at("models").items())
        for (const char* unit : {"scaled", "original"}) {
          const nlohmann::json& m = units.at(unit);
          out +=
              part + "," + csv_cell(entry.at("id").get<std::string>()) + "," + model + "," + unit;
          for (const char* k : {"mse", "mae", "rmse", "smape", "mase"})
            out += "," + (m.at(k).is_null() ? std::string() : m.at(k).dump());
          out += "," + m.at("windows").dump() + "\n";
        }
  return out;
}

// One line per part, model, unit and column (or horizon step, 1-based) of the breakdown
// (Scorer::set_breakdown): "part,model,unit,<what>,mse,mae,windows".
std::string breakdown_csv(const nlohmann::json& result, const std::vector<std::string>& parts,
                          bool steps) {
  std::string out =
      std::string("part,model,unit,") + (steps ? "step" : "column") + ",mse,mae,windows\n";
  for (const std::string& part : parts) {
    const nlohmann::json& b = result.at(part).at("breakdown");
    const auto& names = b.at("columns");
    for (const auto& [model, units] : b.items()) {
      if (model == "columns") continue;
      for (const char* unit : {"scaled", "original"}) {
        const nlohmann::json& t = units.at(unit).at(steps ? "steps" : "columns");
        for (size_t i = 0; i < t.at("windows").size(); ++i) {
          if (t.at("windows")[i].get<int64_t>() == 0) continue;  // a covariate: not scored
          const std::string what =
              steps ? std::to_string(i + 1) : csv_cell(names.at(i).get<std::string>());
          out += part + "," + csv_cell(model) + "," + unit + "," + what + "," +
                 t.at("mse")[i].dump() + "," + t.at("mae")[i].dump() + "," +
                 t.at("windows")[i].dump() + "\n";
        }
      }
    }
  }
  return out;
}

// --drop-last B: the LTSF code bases (Informer, Autoformer, DLinear, PatchTST) batched their
// test windows with drop_last=True, so their published scores leave out the last W mod B
// test windows. Ending the test part that many rows early scores exactly their subset.
// Why the test part only: baselines fit on validation rows (NLinear's conformal intervals)
// must see all of them. Why one series only: their loaders cut the windows of one wide file.
nlohmann::json drop_last_windows(data::PanelSplit& split, const std::string& scored, size_t L,
                                 size_t H, int batch, const data::TimeSeries& series,
                                 const std::string& input) {
  const std::string flag = "--drop-last " + std::to_string(batch);
  if (scored != "test")
    throw InputError(flag + ": found --split " + scored +
                     ", expected --split test (the published tables it imitates score the "
                     "test windows; validation rows also fit baselines, so they stay whole)");
  if (series.num_series() != 1 || split.splits.size() != 1)
    throw InputError(flag + ": " + input + " holds " + std::to_string(series.num_series()) +
                     " series; expected one (a wide file): the published LTSF loaders it "
                     "imitates cut the windows of one series");
  data::RowRange& range = split.splits[0].test;
  const auto B = static_cast<size_t>(batch);
  const size_t windows = data::count_windows(range, L + H), kept = windows / B * B;
  if (kept == 0)
    throw InputError(flag + ": the test split of " + input + " has " + std::to_string(windows) +
                     " windows, fewer than one batch; expected at least " + std::to_string(batch));
  range.end -= windows - kept;
  std::printf("note: %s: scoring the first %zu of %zu test windows\n", flag.c_str(), kept, windows);
  return {{"batch", batch}, {"dropped_windows", windows - kept}};
}

// Writes <stem><suffix> beside the JSON and says so.
void write_beside(const std::string& json_path, const std::string& suffix, const std::string& text,
                  const char* what) {
  const std::filesystem::path p(json_path);
  const std::string path = (p.parent_path() / (p.stem().string() + suffix)).string();
  write_file_atomic(path, text);
  std::printf("%s -> %s\n", what, path.c_str());
}

}  // namespace

int run_evaluate(const EvaluateOptions& a) {
  const train::LoadedModel lm = train::LoadedModel::load(a.model);
  const train::LoadedModel start = linear_start_beside(lm);
  const data::TimeSeries series = lm.read_series(a.input);
  train::DataConfig d = lm.run.data;
  d.csv.path = a.input;
  const auto L = static_cast<size_t>(lm.context()), H = static_cast<size_t>(lm.horizon());
  data::PanelSplit split = train::make_panel_split(d, series, L, H);
  if (!split.skipped.empty())
    std::printf("note: %zu of %zu series left out, too short for a window in every part\n",
                split.skipped.size(), series.num_series());
  size_t fitted = 0;
  const data::PanelScaler scalers = lm.scalers_for(series, split, &fitted);
  if (fitted > 0)
    std::printf(
        "note: %zu series the model was not trained on, scaled by their own training rows\n",
        fitted);
  std::vector<std::string> parts;
  if (a.split == "all")
    parts = {"val", "test"};
  else
    parts = {a.split};
  if (lm.refit && parts.front() == "val")
    std::printf(
        "note: %s was trained on its run's validation rows too (train.refit_epochs): its "
        "validation scores are in-sample\n",
        a.model.c_str());
  const nlohmann::json drop_last =
      a.drop_last > 0
          ? drop_last_windows(split, a.split, L, H, a.drop_last, series, input_name(a.input))
          : nlohmann::json();
  std::string table;
  train::Scorer scorer(series, scalers, split, lm.context(), lm.horizon(), a.batch, parts);
  scorer.set_breakdown(true);
  const bool panel = series.num_series() > 1;
  nlohmann::json per_series;
  nlohmann::json result = scorer.evaluate(lm.members(), start.members(), &table, nullptr,
                                          panel ? &per_series : nullptr, lm.calibration.get());
  result["model"] = a.model;
  result["input"] = input_name(a.input);  // "<stdin>" for -
  if (!drop_last.is_null()) result["drop_last"] = drop_last;
  if (lm.epoch >= 0) {
    result["kept_epoch"] = lm.epoch;
    std::printf("model: epoch %d%s\n", lm.epoch,
                lm.epoch == 0 ? " (the model before training)" : "");
  }
  if (!start.networks.empty()) result["linear_start"] = start.path;
  std::fputs(table.c_str(), stdout);
  const std::string json_path =
      a.json.empty() ? (std::filesystem::path(a.model).parent_path() /
                        ("evaluation_" + a.split +
                         (a.drop_last > 0 ? "_drop" + std::to_string(a.drop_last) : "") + ".json"))
                           .string()
                     : a.json;
  if (panel) {
    result["per_series"] = per_series;
    write_beside(json_path, "_series.csv", per_series_csv(per_series), "per series");
  }
  write_beside(json_path, "_columns.csv", breakdown_csv(result, parts, false), "per column");
  write_beside(json_path, "_steps.csv", breakdown_csv(result, parts, true), "per step");
  write_file_atomic(json_path, result.dump(2) + "\n");
  std::printf("JSON -> %s\n", json_path.c_str());
  return 0;
}

}  // namespace attnfc::cli
