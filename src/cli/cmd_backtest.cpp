// attnfc backtest: K rolling forecast origins, one run folder each (train/backtest.hpp),
// and the per-fold and pooled table of the model, its linear start and the baselines.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/train/backtest.hpp"
#include "commands.hpp"
#include "json_log.hpp"
#include "output.hpp"
#include "run_common.hpp"

namespace attnfc::cli {

namespace {

// --refit: "every" = 1, "once" = 0, or R >= 1.
int parse_refit(const std::string& text) {
  if (text == "every") return 1;
  if (text == "once") return 0;
  const bool digits =
      !text.empty() && text.size() <= 6 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoi(text) < 1)
    throw InputError("--refit: found '" + text.substr(0, 20) +
                     "', expected every, once or a number of folds >= 1");
  return std::stoi(text);
}

// `--resume --out DIR` without --config: the plan saved in DIR/backtest.json.
train::RunConfig saved_plan(const std::string& dir, train::BacktestOptions& opt) {
  const std::string path = train::backtest_json_path(dir);
  if (!std::filesystem::exists(path))
    throw InputError(path + ": not found; nothing to resume (start with --config)");
  const nlohmann::json plan = load_json_file(path).value("plan", nlohmann::json::object());
  try {
    opt.folds = plan.at("folds").get<int>();
    opt.step = plan.at("step").get<int64_t>();
    opt.val_rows = plan.at("val_rows").get<int64_t>();
    opt.refit_every = plan.at("refit").is_string() ? 0 : plan.at("refit").get<int>();
    opt.cold = plan.at("cold").get<bool>();
    opt.finetune_epochs = plan.at("finetune_epochs").get<double>();
    return train::parse_run_config(plan.at("config"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": the saved plan is incomplete or damaged (" + e.what() +
                     "); start the backtest afresh in another --out");
  }
}

std::string fixed(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The table on stdout: test MSE (scaled) per fold and forecaster, then the pooled row.
void print_table(const train::BacktestResult& r) {
  const std::vector<std::string> names = train::forecaster_order(r.pooled);
  std::printf("test MSE (scaled by each fold's training rows)\n%-5s %-20s %-11s %-22s %8s", "fold",
              "first origin", "how", "kept", "windows");
  for (const auto& n : names)
    std::printf(" %*s", static_cast<int>(std::max<size_t>(n.size(), 9)), n.c_str());
  std::printf("\n");
  auto row = [&](const std::string& fold, const std::string& origin, const std::string& how,
                 const std::string& kept, int64_t windows, const nlohmann::json& models) {
    std::printf("%-5s %-20s %-11s %-22s %8lld", fold.c_str(), origin.substr(0, 20).c_str(),
                how.c_str(), kept.c_str(), static_cast<long long>(windows));
    for (const auto& n : names) {
      const int w = static_cast<int>(std::max<size_t>(n.size(), 9));
      if (models.contains(n))
        std::printf(" %*s", w, fixed(models.at(n).at("scaled").at("mse").get<double>(), 4).c_str());
      else
        std::printf(" %*s", w, "-");
    }
    std::printf("\n");
  };
  for (const train::FoldResult& f : r.folds)
    row(std::to_string(f.fold), f.origin, f.how, train::kept_label(f.metrics.at("kept")),
        f.metrics.at("test").at("windows").get<int64_t>(), f.metrics.at("test").at("models"));
  const int64_t pooled_windows =
      r.pooled.empty() ? 0 : r.pooled.begin()->at("windows").get<int64_t>();
  row("all", "", "pooled", "", pooled_windows, r.pooled);
}

}  // namespace

int run_backtest(const BacktestOptions& a) {
  namespace fs = std::filesystem;
  if (a.log_format == "json") log_as_json_lines();
  train::BacktestOptions opt;
  opt.progress = progress_options(a.quiet, a.log_format);
  if (a.config.empty() && !a.resume)
    throw InputError("backtest: --config is required (or --resume with --out to continue one)");
  opt.out_dir = a.out;
  if (opt.out_dir.empty()) {
    if (a.config.empty()) throw InputError("backtest: --resume needs --out (the backtest folder)");
    opt.out_dir = (fs::path("runs") / (fs::path(a.config).stem().string() + "-backtest")).string();
  }
  train::RunConfig cfg;
  if (a.config.empty()) {
    if (a.plan_flags_given || !a.sets.empty())
      throw InputError(
          "backtest: --resume without --config continues the saved plan; drop "
          "--folds, --step, --refit, --cold, --finetune-epochs, --val-rows and --set, "
          "or give the --config they go with");
    cfg = saved_plan(opt.out_dir, opt);
  } else {
    if (!fs::exists(a.config)) throw InputError(a.config + ": config file not found");
    cfg = load_run_config(a.config, a.sets);
    opt.folds = a.folds;
    opt.step = a.step;
    opt.refit_every = parse_refit(a.refit);
    opt.cold = a.cold;
    opt.finetune_epochs = a.finetune_epochs;
    opt.val_rows = a.val_rows;
  }
  opt.resume = a.resume;
  opt.interrupt = &interrupt_flag();
  opt.interrupt_after_steps = a.stop_after_steps;
  const InterruptSignals signals;
  train::BacktestResult r;
  try {
    r = train::backtest(cfg, opt);
  } catch (const train::RunFolderError& e) {
    throw with_remedy(e, "backtest", "resume with the same config and flags (or omit --config)");
  }
  if (r.status == train::BacktestResult::Status::kInterrupted) {
    std::printf("interrupted in fold %d; resume with: attnfc backtest --out %s --resume\n",
                r.interrupted_fold, opt.out_dir.c_str());
    return 130;
  }
  print_table(r);
  std::printf("folds   -> %s\nsummary -> %s\n", train::folds_csv_path(opt.out_dir).c_str(),
              train::backtest_json_path(opt.out_dir).c_str());
  finish_stdout();
  for (const train::FoldResult& f : r.folds)
    for (const auto& w : f.metrics.value("warnings", nlohmann::json::array()))
      spdlog::warn("fold {}: {}", f.fold, w.get<std::string>());
  for (const std::string& w : r.warnings) spdlog::warn("{}", w);
  return 0;
}

}  // namespace attnfc::cli
