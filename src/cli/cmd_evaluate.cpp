// attnfc evaluate: the standard protocol on a CSV, the model beside the baselines.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {

// The run's linear start (linear_start.safetensors beside the model file), when it is
// there and forecasts the same columns over the same windows; else none, with the reason.
train::LoadedModel linear_start_beside(const train::LoadedModel& lm) {
  const std::string path =
      (std::filesystem::path(lm.path).parent_path() / "linear_start.safetensors").string();
  if (!std::filesystem::exists(path) || std::filesystem::equivalent(path, lm.path)) return {};
  train::LoadedModel start = train::LoadedModel::load(path);
  if (start.columns != lm.columns || start.context() != lm.context() ||
      start.horizon() != lm.horizon()) {
    std::printf("note: %s does not match the model (columns, context or horizon); not scored\n",
                path.c_str());
    return {};
  }
  return start;
}

}  // namespace

int run_evaluate(const EvaluateOptions& a) {
  const train::LoadedModel lm = train::LoadedModel::load(a.model);
  const train::LoadedModel start = linear_start_beside(lm);
  const data::TimeSeries series = lm.read_series(a.input);
  train::DataConfig d = lm.run.data;
  d.csv.path = a.input;
  const auto L = static_cast<size_t>(lm.context()), H = static_cast<size_t>(lm.horizon());
  const data::Split split = train::make_split(d, series, L);
  data::validate_split(split, L, H, a.input);
  std::vector<std::string> parts;
  if (a.split == "all")
    parts = {"val", "test"};
  else
    parts = {a.split};
  std::string table;
  const train::Scorer scorer(series, lm.scaler, split, lm.context(), lm.horizon(), a.batch, parts);
  nlohmann::json result = scorer.evaluate(lm.members(), start.members(), &table);
  result["model"] = a.model;
  result["input"] = a.input;
  if (lm.epoch >= 0) {
    result["kept_epoch"] = lm.epoch;
    std::printf("model: epoch %d%s\n", lm.epoch,
                lm.epoch == 0 ? " (the model before training)" : "");
  }
  if (!start.networks.empty()) result["linear_start"] = start.path;
  std::fputs(table.c_str(), stdout);
  const std::string json_path =
      a.json.empty()
          ? (std::filesystem::path(a.model).parent_path() / ("evaluation_" + a.split + ".json"))
                .string()
          : a.json;
  write_file_atomic(json_path, result.dump(2) + "\n");
  std::printf("JSON -> %s\n", json_path.c_str());
  return 0;
}

}  // namespace attnfc::cli
