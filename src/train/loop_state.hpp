#pragma once
// The training loop's position. With the parameters and the optimiser moments it is the
// whole state of a run: randomness is counter-based (shuffle = f(seed, epoch), dropout =
// f(seed, step)), so a resumed run ends with the same parameters, bit for bit, as one that
// was never interrupted. Saved in the checkpoint's "train_state" metadata.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/train/progress.hpp"
#include "attnfc/train/schedule.hpp"

namespace attnfc::train::detail {

struct LoopState {
  int epoch = 0;              // 0-based epoch in progress
  int64_t step_in_epoch = 0;  // optimiser steps done in that epoch
  int64_t global_step = 0;
  double epoch_loss_sum = 0;  // sum of step losses in the current epoch
  double epoch_seconds = 0;   // time spent in the current epoch before an interruption
  EarlyStopping stopper;
  std::vector<EpochRecord> records;
  // The least-squares start of the linear shortcut (ridge, windows, validation MSE), or
  // null. Kept here so a resumed run still reports it in metrics.json.
  nlohmann::json linear_start;
  // Epoch 0's validation MSE (the model before training, the early stopper's first update):
  // metrics.json records it so the training curve can show where training started. NaN
  // when unknown (a checkpoint from before it was kept).
  double initial_val_loss = NAN;
  // The model file whose parameters started this run instead of the fresh start (a
  // warm-started fold of `attnfc backtest`: the previous fold's kept model), or empty.
  std::string warm_start;
  // The latest validation MSE, for the progress line (not saved: on resume it is the
  // last record's).
  double last_val = 0;

  nlohmann::json to_json() const;
};

// Reads a saved train_state (the JSON text of the checkpoint's metadata) of a run with
// `epochs` epochs of `steps_per_epoch` steps. Every field is type- and range-checked
// against the run, so a damaged or tampered checkpoint is an InputError naming
// `source` and the key (never a loop that runs for 2^31 epochs).
LoopState load_loop_state(const std::string& text, const std::string& source, int epochs,
                          int64_t steps_per_epoch, const EarlyStopping& stopper);

}  // namespace attnfc::train::detail
