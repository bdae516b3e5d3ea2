// attnfc train: read a run config, train, keep the best model, score it beside the baselines.
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/train/trainer.hpp"
#include "commands.hpp"
#include "json_log.hpp"
#include "output.hpp"
#include "run_common.hpp"

namespace attnfc::cli {

namespace {

// train::train, with a run-folder error's remedy said in this command's flags.
train::TrainResult train_naming_flags(const train::RunConfig& cfg, const train::TrainOptions& opt) {
  try {
    return train::train(cfg, opt);
  } catch (const train::RunFolderError& e) {
    throw with_remedy(e, "train",
                      "resume with the same config (or omit --config to use the saved one)");
  }
}

}  // namespace

int run_train(const TrainOptions& a) {
  namespace fs = std::filesystem;
  if (a.log_format == "json") log_as_json_lines();  // first, so that every error is JSON too
  const train::ProgressOptions progress = progress_options(a.quiet, a.log_format);
  if (a.config.empty() && !a.resume)
    throw InputError("train: --config is required (or --resume with --out to continue a run)");
  std::string out = a.out;
  if (out.empty()) {
    if (a.config.empty()) throw InputError("train: --resume needs --out (the run folder)");
    out = (fs::path("runs") / fs::path(a.config).stem()).string();
  }
  const train::RunPaths run{out};
  const std::string config_path = a.config.empty() ? run.config() : a.config;
  if (!fs::exists(config_path))
    throw InputError(config_path + (a.config.empty() ? ": no saved config in the run folder"
                                                     : ": config file not found"));
  const train::RunConfig cfg = load_run_config(config_path, a.sets, a.config.empty());

  train::TrainOptions opt;
  opt.out_dir = out;
  opt.resume = a.resume;
  opt.interrupt = &interrupt_flag();
  opt.interrupt_after_steps = a.stop_after_steps;
  opt.progress = progress;
  const InterruptSignals signals;

  const train::TrainResult r = train_naming_flags(cfg, opt);
  if (!dist::Comm::world().root())  // rank 0 of an mpirun run prints the summary
    return r.status == train::TrainResult::Status::kInterrupted ? 130 : 0;
  switch (r.status) {
    case train::TrainResult::Status::kAlreadyFinished:
      std::printf("%s: this run already finished (see %s); nothing to resume\n", out.c_str(),
                  run.metrics().c_str());
      return 0;
    case train::TrainResult::Status::kInterrupted:
      std::printf("interrupted after %lld steps; resume with: attnfc train --out %s --resume\n",
                  static_cast<long long>(r.steps), out.c_str());
      return 130;  // the shell convention for "stopped by Ctrl-C"
    case train::TrainResult::Status::kFinished:
      break;
  }
  if (r.members > 1)
    std::printf(
        "trained an ensemble of %d networks, %d epochs in all (%lld steps); ensemble "
        "validation MSE %.5f\n",
        r.members, r.epochs_run, static_cast<long long>(r.steps), r.best_val_loss);
  else
    std::printf("trained %d epochs (%lld steps); best epoch %d%s, validation MSE %.5f\n",
                r.epochs_run, static_cast<long long>(r.steps), r.best_epoch,
                r.best_epoch == 0 ? " (the model before training)" : "", r.best_val_loss);
  for (const char* part : {"val", "test"}) {
    if (!r.metrics.contains(part)) continue;
    const auto& models = r.metrics[part]["models"];
    std::printf("%-5s MSE (scaled):", part);
    for (auto it = models.begin(); it != models.end(); ++it)
      std::printf("  %s %.4f", it.key().c_str(), it.value()["scaled"]["mse"].get<double>());
    std::printf("\n");
  }
  const std::string log =
      r.members > 1 ? run.file("members") + "/*/train_log.csv" : run.train_log();
  std::printf("model   -> %s\nlog     -> %s\nmetrics -> %s\n", run.model().c_str(), log.c_str(),
              run.metrics().c_str());
  // Last, so that nobody reads the table above as the attention model's win.
  finish_stdout();
  for (const auto& w : r.metrics.value("warnings", nlohmann::json::array()))
    spdlog::warn("{}", w.get<std::string>());
  return 0;
}

}  // namespace attnfc::cli
