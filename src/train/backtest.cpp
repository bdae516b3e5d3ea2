// backtest(): the plan of a rolling-origin backtest (backtest.hpp), its folder, and the
// folds in order, each an ordinary train() run in fold-<k>/.
#include "attnfc/train/backtest.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/train/auto_sizes.hpp"
#include "attnfc/train/run_folder.hpp"
#include "attnfc/train/trainer.hpp"
#include "backtest_report.hpp"

namespace attnfc::train {

namespace fs = std::filesystem;

namespace {

struct Plan {
  RunConfig base;  // the config with every size resolved once, from the whole series
  int64_t step = 0, val_rows = 0, test_rows = 0;
  std::vector<int64_t> end_offsets;  // fold k's: end_offsets[k - 1]
  std::vector<std::string> origins;  // the time of each fold's first test target
};

// The split of fold k (1-based) in the config's data section.
RunConfig fold_config(const Plan& p, int k) {
  RunConfig c = p.base;
  c.data.split_protocol = "from_end";
  c.data.val_rows = p.val_rows;
  c.data.test_rows = p.test_rows;
  c.data.end_offset = p.end_offsets[static_cast<size_t>(k - 1)];
  c.train.evaluate_test = true;  // a fold's test windows are what the backtest scores
  return c;
}

// Val rows as the config's own split has them (its first series), when --val-rows is 0.
int64_t config_val_rows(const RunConfig& base, const data::TimeSeries& series) {
  const auto L = static_cast<size_t>(base.model.context_length);
  const data::PanelSplit split =
      make_panel_split(base.data, series, L, static_cast<size_t>(base.model.horizon));
  return static_cast<int64_t>(split.splits.front().val_targets().size());
}

Plan make_plan(const RunConfig& config, const BacktestOptions& opt) {
  if (opt.folds < 1)
    throw InputError("--folds: found " + std::to_string(opt.folds) + ", expected at least 1");
  Plan p;
  p.base = config;
  data::CsvOptions csv = config.data.csv;
  csv.value_columns = config.data.value_columns();
  const data::TimeSeries series = data::load_series(csv);
  // Once, from the config's own split: a fold's shorter training part must not change the
  // sizes, or a warm start would meet another architecture.
  if (const std::string chosen = resolve_sizes(p.base, series); !chosen.empty())
    spdlog::info("{}", chosen);
  p.base.auto_sizes = {};
  const int64_t H = p.base.model.horizon;
  p.step = opt.step > 0 ? opt.step : H;
  p.test_rows = p.step + H - 1;  // `step` forecast origins
  p.val_rows = opt.val_rows > 0 ? opt.val_rows : config_val_rows(p.base, series);
  const data::SeriesSegment first = series.series_segments().front();
  for (int k = 1; k <= opt.folds; ++k) {
    const int64_t offset = (opt.folds - k) * p.step;
    p.end_offsets.push_back(offset);
    const int64_t row = static_cast<int64_t>(first.end) - offset - p.test_rows;
    p.origins.push_back(row >= static_cast<int64_t>(first.begin)
                            ? series.format_time(series.timestamps[static_cast<size_t>(row)])
                            : "");
  }
  try {  // fold 1 has the least to train on: when it fits, every fold does
    const RunConfig c1 = fold_config(p, 1);
    make_panel_split(c1.data, series, static_cast<size_t>(c1.model.context_length),
                     static_cast<size_t>(H));
  } catch (const InputError& e) {
    throw InputError(std::string("--folds ") + std::to_string(opt.folds) + " --step " +
                     std::to_string(p.step) + ": fold 1 does not fit: " + e.what() +
                     "; fewer folds, a smaller --step or --val-rows would");
  }
  return p;
}

nlohmann::json plan_json(const Plan& p, const BacktestOptions& opt) {
  return {
      {"config", to_json(p.base)},
      {"folds", opt.folds},
      {"step", p.step},
      {"val_rows", p.val_rows},
      {"test_rows", p.test_rows},
      {"refit", opt.refit_every == 0 ? nlohmann::json("once") : nlohmann::json(opt.refit_every)},
      {"cold", opt.cold},
      {"finetune_epochs", opt.finetune_epochs},
      {"end_offsets", p.end_offsets},
      {"origins", p.origins}};
}

// The first key of the plan whose value differs, the flags' before what follows from them.
std::string first_difference(const nlohmann::json& saved, const nlohmann::json& now) {
  for (const char* key : {"folds", "step", "refit", "cold", "finetune_epochs", "val_rows", "config",
                          "test_rows", "end_offsets", "origins"})
    if (saved.value(key, nlohmann::json()) != now.value(key, nlohmann::json())) return key;
  return "(a key only the saved plan has)";
}

std::string fold_dir(const std::string& out, int k) {
  return (fs::path(out) / ("fold-" + std::to_string(k))).string();
}

// Fresh: the folder must not hold a backtest. Resume: it must, with the same plan.
void check_folder(const std::string& dir, const nlohmann::json& plan, bool resume) {
  const std::string path = backtest_json_path(dir);
  const bool held = fs::exists(path) || fs::exists(fold_dir(dir, 1));
  if (!resume) {
    if (held)
      throw RunFolderError(dir + " holds a backtest", RunFolderError::Remedy::kResumeOrElsewhere);
    return;
  }
  if (!fs::exists(path))
    throw RunFolderError(dir + ": no backtest.json to resume", RunFolderError::Remedy::kTrainFresh);
  const nlohmann::json saved = load_json_file(path);
  if (!saved.contains("plan") || saved.at("plan") != plan)
    throw RunFolderError(path + ": the saved plan differs from this one (key '" +
                             first_difference(saved.value("plan", nlohmann::json::object()), plan) +
                             "')",
                         RunFolderError::Remedy::kSameConfig);
}

bool refits(const BacktestOptions& opt, int k) {
  return k == 1 || (opt.refit_every > 0 && (k - 1) % opt.refit_every == 0);
}

// One fold: a fresh or warm-started train() in its folder (resumed when it was begun).
FoldResult run_fold(const Plan& p, const BacktestOptions& opt, int k, bool& interrupted) {
  RunConfig cfg = fold_config(p, k);
  TrainOptions t;
  t.out_dir = fold_dir(opt.out_dir, k);
  t.resume = opt.resume && fs::exists(RunPaths{t.out_dir}.config());
  t.interrupt = opt.interrupt;
  t.interrupt_after_steps = opt.interrupt_after_steps;
  t.progress = opt.progress;
  t.progress.fold = k, t.progress.folds = opt.folds;  // every progress line says its fold
  t.score_validation = false;  // a fold is scored on its test windows; val chose its epoch
  FoldResult f{k, p.origins[static_cast<size_t>(k - 1)], "trained", nullptr, 0};
  if (k > 1 && !(refits(opt, k) && opt.cold)) {
    t.warm_start = RunPaths{fold_dir(opt.out_dir, k - 1)}.model();
    const double epochs = refits(opt, k) ? opt.finetune_epochs : 0;
    f.how = epochs > 0 ? "fine-tuned" : "scored";
    cfg.train.epochs = static_cast<int>(std::ceil(epochs));
    if (epochs > 0 && epochs < 1) cfg.train.epoch_fraction = epochs;
  }
  const int64_t offset = cfg.data.end_offset;
  spdlog::info("fold {}/{}: test from {} ({}), {}", k, opt.folds, f.origin,
               offset == 0 ? "to the end" : std::to_string(offset) + " rows before the end", f.how);
  const auto start = std::chrono::steady_clock::now();
  const TrainResult r = train(cfg, t);
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  interrupted = r.status == TrainResult::Status::kInterrupted;
  if (!interrupted)
    f.metrics = r.status == TrainResult::Status::kAlreadyFinished
                    ? load_json_file(RunPaths{t.out_dir}.metrics())
                    : r.metrics;
  return f;
}

void check_options(const RunConfig& config, const BacktestOptions& opt) {
  // Each rank would plan and open the same folders: run the folds as one process each.
  if (dist::Comm::world().size() > 1)
    throw InputError("backtest: found " + std::to_string(dist::Comm::world().size()) +
                     " processes, expected 1 (run it without mpirun)");
  const double e = opt.finetune_epochs;
  if (!(e >= 0 && e <= 100000) || (e > 1 && e != std::floor(e)))
    throw InputError("--finetune-epochs: found " + nlohmann::json(e).dump() +
                     ", expected a fraction of an epoch in [0, 1] or a whole number of epochs");
  if (opt.refit_every < 0)
    throw InputError("--refit: found " + std::to_string(opt.refit_every) +
                     ", expected every, once or a number of folds >= 1");
  if (config.train.ensemble > 1 && (!opt.cold || opt.refit_every != 1))
    throw InputError("train.ensemble: found " + std::to_string(config.train.ensemble) +
                     "; a backtest of an ensemble needs --cold and --refit every (a warm start "
                     "or a scored fold takes one network's parameters)");
}

}  // namespace

BacktestResult backtest(const RunConfig& config, const BacktestOptions& opt) {
  check_options(config, opt);
  const Plan plan = make_plan(config, opt);
  const nlohmann::json plan_j = plan_json(plan, opt);
  const RunFolder folder(opt.out_dir);  // created and locked: one backtest writes it
  check_folder(opt.out_dir, plan_j, opt.resume);
  if (!opt.resume)
    write_file_atomic(backtest_json_path(opt.out_dir),
                      nlohmann::json{{"plan", plan_j}}.dump(2) + "\n");
  BacktestResult result;
  for (int k = 1; k <= opt.folds; ++k) {
    bool interrupted = false;
    FoldResult f = run_fold(plan, opt, k, interrupted);
    if (interrupted) {
      result.status = BacktestResult::Status::kInterrupted;
      result.interrupted_fold = k;
      return result;
    }
    result.folds.push_back(std::move(f));
  }
  result.pooled = pool_folds(result.folds);
  result.warnings = pooled_warnings(result);
  write_backtest_files(opt.out_dir, plan_j, result);
  return result;
}

}  // namespace attnfc::train
