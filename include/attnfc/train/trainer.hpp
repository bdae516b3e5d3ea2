#pragma once
// The training loop behind `attnfc train`: AdamW, warm-up + cosine (or step) LR,
// gradient clipping, early stopping on the validation forecast MSE, best model
// kept, and exact resumption.
//
// The run folder (options.out_dir) holds:
//   config.json             the resolved config (every key, defaults filled in)
//   model.safetensors       the best epoch's model (by validation loss), with the
//                           config, scaler, columns and frequency in its metadata
//   checkpoint.safetensors  the latest state: parameters, AdamW moments, and the
//                           loop position (epoch, step, losses, early-stopping state)
//   train_log.csv           one row per epoch
//   metrics.json            at the end: the best model beside the baselines on the
//                           validation and test splits (same windows)
// An ensemble's folder holds instead members/<k>/, one such folder per member, and the
// combined model.safetensors and metrics.json (train/ensemble.hpp).
// Randomness is counter-based (shuffle = f(seed, epoch), dropout = f(seed, step)), so
// the loop position is the whole RNG state: a resumed run ends with the same
// parameters, bit for bit, as one that was never interrupted.
#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

struct TrainOptions {
  std::string out_dir;
  bool resume = false;  // continue from out_dir/checkpoint.safetensors
  // Polled after every optimiser step; when set, the loop saves a resumable
  // checkpoint and returns kInterrupted (Ctrl-C in the CLI).
  const std::atomic<bool>* interrupt = nullptr;
  // Behaves as if interrupted after this many optimiser steps in this call (0 = never).
  int64_t interrupt_after_steps = 0;
  bool tty = false;  // progress bar instead of log lines
  // The folder an interruption message tells the user to resume (empty = out_dir): an
  // ensemble member names the ensemble's folder, which is what --resume continues.
  std::string resume_dir = {};
};

struct TrainResult {
  enum class Status { kFinished, kInterrupted, kAlreadyFinished };
  Status status = Status::kFinished;
  int epochs_run = 0;   // epochs completed in total (including before a resume)
  int best_epoch = -1;  // 1-based training epoch, 0 = the initial model; -1 if none
  double best_val_loss = 0;
  int64_t steps = 0;            // optimiser steps in total
  nlohmann::json metrics;       // what metrics.json holds (null unless finished)
  int64_t steps_this_call = 0;  // optimiser steps taken by this call
  int members = 1;              // networks trained: train.ensemble
};

// Throws InputError for bad data / config / output folder, std::runtime_error when
// training diverges (non-finite loss or gradient: nothing is saved from that step).
// With train.ensemble > 1 it trains the members one after another (train/ensemble.hpp).
TrainResult train(const RunConfig& config, const TrainOptions& options);

// Paths inside a run folder.
std::string run_file(const std::string& out_dir, const char* name);
// Creates options.out_dir (and its parents) and applies the run-folder rules: a fresh
// run refuses a folder that holds a run (a checkpoint, a model or ensemble members:
// InputError pointing at --resume); a resumed one must keep the saved train.ensemble
// (InputError naming the key). Returns true when a resumed run had already finished.
bool open_run_folder(const TrainOptions& options, const RunConfig& config);
// For --resume: InputError unless out_dir/config.json describes the same run as
// `resolved` (to_json of the config, data-dependent keys filled in). Compared key by key
// after parsing, so a config.json written before a key existed still matches its default.
void check_resume_config(const std::string& out_dir, const nlohmann::json& resolved);

}  // namespace attnfc::train
