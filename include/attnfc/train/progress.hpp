#pragma once
// What a user watches while a model trains (ProgressStyle), and train_log.csv: one row
// per epoch. On a terminal, one self-updating bar; elsewhere (logs, CI, `| tee`) plain
// lines that start with the UTC time, one per epoch and one in an epoch at most every
// ProgressOptions::interval_s; or one JSON object per line; or nothing (--quiet).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnfc::train {

struct EpochRecord {
  int epoch = 0;      // 1-based
  int64_t steps = 0;  // optimiser steps so far (all epochs)
  double train_loss = 0, val_loss = 0, lr = 0, seconds = 0, samples_per_s = 0;
  bool best = false;
};

// "epoch,steps,train_loss,val_loss,lr,seconds,samples_per_s,best\n" and one row per record.
std::string format_train_log(const std::vector<EpochRecord>& records);
// The inverse (for `attnfc plot`); InputError naming the file and line on malformed rows.
std::vector<EpochRecord> parse_train_log(const std::string& text, const std::string& source);
nlohmann::json to_json(const EpochRecord& r);
EpochRecord epoch_record_from_json(const nlohmann::json& j);

// "1:02:03" / "4:05"; "?" when not finite or negative.
std::string format_duration(double seconds);
// ISO 8601 in UTC to the second: "2026-12-02T04:10:03Z".
std::string format_utc(std::chrono::system_clock::time_point t);

// Where a run stands, for its ETA. The rate is steps_done / elapsed_s, measured over the
// wall time of this process's training so far, validation included: the time left is
// the steps left at that rate, so each remaining epoch's validation is counted at the
// share it took so far (none before the first epoch ends).
struct EtaInput {
  double elapsed_s = 0;             // wall time since training started in this process
  int64_t steps_done = 0;           // optimiser steps in that time
  int64_t steps_per_epoch = 0;      //
  int64_t steps_left_in_epoch = 0;  // of the epoch in progress (0 once it has ended)
  int epochs_left = 0;              // whole epochs after that one, up to train.epochs
  // Early stopping (train.patience): the whole epochs after that one that still run if no
  // epoch improves on the best validation MSE from here on; -1 when patience is off.
  int patience_left = -1;
};
// Seconds to the end of the training steps, NaN when no rate is known yet (no step or no
// time measured). The rule:
//   budget         = (steps_left_in_epoch + epochs_left * steps_per_epoch) / rate
//   no_improvement = (steps_left_in_epoch + min(epochs_left, patience_left) * steps_per_epoch)
//                    / rate   (= budget when patience_left < 0)
// `budget` is the most the run can take (every epoch of train.epochs runs); with early
// stopping, `no_improvement` is when it ends if the validation MSE does not improve again:
// each better epoch resets the patience and pushes the end towards `budget`.
struct Eta {
  double budget_s = 0, no_improvement_s = 0;
};
Eta estimate_eta(const EtaInput& in);
// "1:20 (at most 3:40)", or "3:40" when both are the same.
std::string format_eta(const Eta& eta);

enum class ProgressStyle {
  kBar,    // a terminal: the self-updating bar, then one line per epoch
  kLines,  // timestamped plain lines: each epoch, and in an epoch every interval_s
  kJson,   // one JSON object per line: "step" (every interval_s), "epoch", "done"
  kOff,    // nothing (--quiet)
};

struct ProgressOptions {
  ProgressStyle style = ProgressStyle::kLines;
  // kLines and kJson: at most one in-epoch line per this many seconds of wall time, so a
  // piped run is never silent for long (0: after every step).
  double interval_s = 10;
  std::FILE* out = nullptr;  // nullptr: stderr
  // An ensemble's member k of `members` (1-based; 0 = not a member): every line, the bar
  // and every JSON event say which member is training, since each restarts at epoch 1.
  int member = 0, members = 0;
  // A backtest's fold k of `folds` (1-based; 0 = not a backtest), said the same way.
  int fold = 0, folds = 0;
};

// The run being watched.
struct ProgressRun {
  int epochs = 0;  // train.epochs
  int64_t steps_per_epoch = 0, samples_per_step = 0;
  // train.patience - the epochs without improvement already counted (a resumed run);
  // -1 when patience is off.
  int patience_left = -1;
};

// How the training loop ended, for the "done" event.
struct ProgressEnd {
  int epochs_run = 0;   // in total, including before a resume
  int64_t steps = 0;    // optimiser steps in total
  int best_epoch = -1;  // 0 = the model before training
  double best_val_loss = 0, last_train_loss = NAN;
  bool stopped_early = false;
};

class Progress {
 public:
  Progress(const ProgressOptions& options, const ProgressRun& run);
  // When an epoch's steps begin (its shuffle done): the in-epoch samples/s counts from here.
  void epoch_started();
  // After each optimiser step (1-based epoch and step in it; the running mean loss of the
  // epoch; the latest validation MSE, NaN before any). The bar redraws at most ten times
  // a second; lines and JSON come at most every interval_s.
  void step(int epoch, int64_t step_in_epoch, double loss, double last_val_loss);
  // patience_left: train.patience minus the epochs without improvement so far (-1: off).
  void epoch_done(const EpochRecord& r, int patience_left);
  // After the last epoch, before the final scoring.
  void done(const ProgressEnd& end);
  // Clears the bar so the next line starts clean.
  void finish();

 private:
  void emit_step(int epoch, int64_t step_in_epoch, double loss, double last_val_loss,
                 std::chrono::steady_clock::time_point now);
  void draw_bar(int epoch, int64_t step_in_epoch, double loss, double last_val_loss,
                std::chrono::steady_clock::time_point now);
  // This process's ETA with `steps_left_in_epoch` steps of `epoch` (1-based) to go.
  Eta eta(int epoch, int64_t steps_left_in_epoch, int patience_left,
          std::chrono::steady_clock::time_point now) const;
  // The same during `epoch`, after its step `step_in_epoch`.
  Eta eta_in_epoch(int epoch, int64_t step_in_epoch,
                   std::chrono::steady_clock::time_point now) const;
  void write_line(const std::string& line);
  // Which part of a larger run this is: "fold 2/5 member 1/3 ", "member 2/5 " or "".
  std::string part_prefix() const;
  void add_part(nlohmann::ordered_json& j) const;

  ProgressOptions opt_;
  ProgressRun run_;
  std::chrono::steady_clock::time_point start_, last_draw_, epoch_start_;
  int64_t steps_seen_ = 0, epoch_steps_seen_ = 0;
  bool drawn_ = false;
};

}  // namespace attnfc::train
