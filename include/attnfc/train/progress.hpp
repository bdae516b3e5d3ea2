#pragma once
// What a user watches while a model trains: on a terminal, one self-updating line
// (epoch, step, loss, val loss, samples/s, ETA); elsewhere (logs, CI, pipes) one
// plain spdlog line per epoch. And train_log.csv: one row per epoch.
#include <chrono>
#include <cstdint>
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

class Progress {
 public:
  // tty: draw a progress bar on stderr; otherwise log each epoch with spdlog.
  Progress(bool tty, int epochs, int64_t steps_per_epoch, int64_t samples_per_step);
  // After each optimiser step; redraws at most ten times a second.
  void step(int epoch, int64_t step_in_epoch, double loss, double last_val_loss);
  void epoch_done(const EpochRecord& r, int patience_left);
  // Clears the bar so the next line starts clean.
  void finish();

 private:
  bool tty_;
  int epochs_;
  int64_t steps_per_epoch_, samples_per_step_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int64_t steps_seen_ = 0;
  bool drawn_ = false;
};

// "1:02:03" / "4:05".
std::string format_duration(double seconds);

}  // namespace attnfc::train
