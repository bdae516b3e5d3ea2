#pragma once
// What `attnfc train` and `attnfc backtest` share: Ctrl-C handling, how progress is shown,
// reading a run config with --set overrides, and a run folder's remedy in flags.
#include <atomic>
#include <csignal>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/progress.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/run_folder.hpp"

namespace attnfc::cli {

// Set by the first Ctrl-C (SIGINT) or SIGTERM while InterruptSignals lives.
std::atomic<bool>& interrupt_flag();

// First Ctrl-C, or SIGTERM (what mpirun sends every process on Ctrl-C, and Slurm on scancel
// or at the time limit): interrupt_flag() is set, so that training finishes the current
// step, saves a resumable checkpoint and returns. A second one: the default action
// (immediate exit) for a user who cannot wait. The previous handlers return on destruction.
class InterruptSignals {
 public:
  InterruptSignals();
  ~InterruptSignals();
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

 private:
  struct sigaction previous_int_ {
  }, previous_term_{};
};

// How progress is shown: `quiet` none, log_format "json" JSON lines (and the log messages
// as JSON too), a terminal the bar, anything else timestamped lines.
train::ProgressOptions progress_options(bool quiet, const std::string& log_format);

// The run config at `path` with each --set applied (their values checked by the bounded
// JSON parser first), parsed; a data.path of "-" is refused (a run reads its data again).
// saved_run: `path` is a run folder's config.json (train::fill_saved_defaults applies).
train::RunConfig load_run_config(const std::string& path, const std::vector<std::string>& sets,
                                 bool saved_run = false);

// The InputError a command reports for a run folder it cannot use, with the remedy in
// flags of `command` ("train", "backtest"); `same_config` says how to resume with the same
// configuration.
InputError with_remedy(const train::RunFolderError& e, const std::string& command,
                       const char* same_config);

}  // namespace attnfc::cli
