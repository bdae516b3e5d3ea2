// attnfc evaluate: the standard protocol on a CSV, the model beside the baselines.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {

struct EvaluateArgs {
  std::string model, input, split = "test", json;
  int batch = 256;
};

int run_evaluate(const EvaluateArgs& a) {
  const train::LoadedModel lm = train::LoadedModel::load(a.model);
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
  nlohmann::json result = scorer.evaluate(lm.members(), &table);
  result["model"] = a.model;
  result["input"] = a.input;
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

}  // namespace

void register_evaluate(CLI::App& app) {
  auto a = std::make_shared<EvaluateArgs>();
  CLI::App* sub = app.add_subcommand(
      "evaluate",
      "Score a model beside repeat-last, seasonal-naive and NLinear on the same windows");
  sub->footer(
      "Examples:\n"
      "  attnfc evaluate --model runs/demo/model.safetensors --input datasets/ETTh1.csv\n"
      "  attnfc evaluate --model runs/demo/model.safetensors --input datasets/ETTh1.csv \\\n"
      "                  --split all --json scores.json\n"
      "Every stride-1 window whose targets lie in the split is scored, none dropped; metrics are\n"
      "means over windows (MSE, MAE, RMSE, MAPE, sMAPE, MASE) in scaled and original units.\n"
      "The split follows the training config's rule applied to this file; baselines are fit on\n"
      "its training rows.");
  sub->add_option("--model,-m", a->model, "Model file written by 'attnfc train'")->required();
  sub->add_option("--input,-i", a->input, "CSV to evaluate on")->required();
  sub->add_option("--split", a->split, "test, val or all")
      ->check(CLI::IsMember({"test", "val", "all"}))
      ->capture_default_str();
  sub->add_option("--json", a->json,
                  "Where to write the JSON (default: evaluation_<split>.json beside the model)");
  sub->add_option("--batch", a->batch, "Windows per forward pass")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  on_selected(sub, [a] { return run_evaluate(*a); });
}

}  // namespace attnfc::cli
