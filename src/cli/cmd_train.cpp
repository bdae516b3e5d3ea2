// attnfc train: read a run config, train, keep the best model, score it beside the baselines.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/base/json_parse.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/train/trainer.hpp"
#include "commands.hpp"
#include "json_log.hpp"
#include "output.hpp"

namespace attnfc::cli {

namespace {

std::atomic<bool> g_interrupted{false};

// First Ctrl-C (SIGINT), or SIGTERM (what mpirun sends every process on Ctrl-C, and Slurm
// on scancel or at the time limit): finish the current step, save a resumable checkpoint,
// exit. A second one: the default action (immediate exit) for a user who cannot wait.
extern "C" void on_interrupt(int signal) {
  g_interrupted.store(true);
  std::signal(signal, SIG_DFL);
}

// on_interrupt for SIGINT and SIGTERM while it lives; the previous handlers after.
class InterruptSignals {
 public:
  InterruptSignals() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &previous_int_);
    ::sigaction(SIGTERM, &sa, &previous_term_);
  }
  ~InterruptSignals() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
  }
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

 private:
  struct sigaction previous_int_ {
  }, previous_term_{};
};

// train::train, with a run-folder error's remedy said in this command's flags.
train::TrainResult train_naming_flags(const train::RunConfig& cfg, const train::TrainOptions& opt) {
  using Remedy = train::RunFolderError::Remedy;
  try {
    return train::train(cfg, opt);
  } catch (const train::RunFolderError& e) {
    const char* flags = "";
    switch (e.remedy()) {
      case Remedy::kResumeOrElsewhere:
        flags = "pass --resume to continue it, or choose another --out";
        break;
      case Remedy::kTrainFresh:
        flags = "train without --resume";
        break;
      case Remedy::kSameConfig:
        flags = "resume with the same config (or omit --config to use the saved one)";
        break;
      case Remedy::kWait:
        flags = "wait for it to finish, or choose another --out";
        break;
    }
    throw InputError(e.problem() + "; " + flags);
  }
}

// Each --set value goes through the bounded JSON parser first: a bare word (not JSON)
// stays a string, but 1e999, a 400-digit integer, a duplicate key or deep nesting is an
// InputError naming the --set, before apply_overrides sees it.
void check_set_values(const std::vector<std::string>& sets) {
  for (const auto& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos) continue;  // apply_overrides explains the syntax
    const std::string shown = set.size() > 80 ? set.substr(0, 80) + "..." : set;
    try {
      (void)parse_json_bounded(std::string_view(set).substr(eq + 1), "--set '" + shown + "'");
    } catch (const JsonSyntaxError&) {
      // a bare word such as cosine or datasets/x.csv
    }
  }
}

// The in-epoch interval of piped progress: 10 s, or ATTNFC_PROGRESS_INTERVAL_S (tests,
// or a log that wants more or fewer lines).
double progress_interval_s() {
  constexpr const char* kVar = "ATTNFC_PROGRESS_INTERVAL_S";
  const char* text = std::getenv(kVar);
  if (text == nullptr || *text == '\0') return 10;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0)
    throw InputError(std::string(kVar) + ": found '" + std::string(text).substr(0, 20) +
                     "', expected a number of seconds >= 0");
  return v;
}

// How progress is shown: --quiet none, --log-format json JSON lines (and the log messages
// as JSON too), a terminal the bar, anything else timestamped lines.
train::ProgressOptions progress_options(const TrainOptions& a) {
  train::ProgressOptions p;
  p.interval_s = progress_interval_s();
  if (a.quiet) {
    p.style = train::ProgressStyle::kOff;
    if (spdlog::get_level() < spdlog::level::warn) spdlog::set_level(spdlog::level::warn);
  } else if (a.log_format == "json") {
    p.style = train::ProgressStyle::kJson;
  } else {
    p.style = ::isatty(STDERR_FILENO) ? train::ProgressStyle::kBar : train::ProgressStyle::kLines;
  }
  // Log lines between timestamped progress lines carry the same UTC stamp.
  if (p.style == train::ProgressStyle::kLines)
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%SZ %^[%l]%$ %v", spdlog::pattern_time_type::utc);
  return p;
}

// A run reads its data again when resumed, and evaluate and plot find it in config.json:
// a stream would be gone by then.
void refuse_stdin_data(const train::RunConfig& cfg) {
  if (cfg.data.csv.path == kStdinPath)
    throw InputError(
        "data.path: found \"-\" (standard input), expected a file: a run reads its data again "
        "on --resume and config.json keeps the path; save the stream to a file first (a "
        ".csv.gz file is read as it is)");
}

}  // namespace

int run_train(const TrainOptions& a) {
  namespace fs = std::filesystem;
  if (a.log_format == "json") log_as_json_lines();  // first, so that every error is JSON too
  const train::ProgressOptions progress = progress_options(a);
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
  nlohmann::json root = load_json_file(config_path);
  check_set_values(a.sets);
  train::apply_overrides(root, a.sets);
  const train::RunConfig cfg = train::parse_run_config(root);
  refuse_stdin_data(cfg);

  train::TrainOptions opt;
  opt.out_dir = out;
  opt.resume = a.resume;
  opt.interrupt = &g_interrupted;
  opt.interrupt_after_steps = a.stop_after_steps;
  opt.progress = progress;
  g_interrupted.store(false);
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
