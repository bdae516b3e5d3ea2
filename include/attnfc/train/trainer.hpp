#pragma once
// The training loop behind `attnfc train`: AdamW, warm-up + cosine (or step) LR,
// gradient clipping, early stopping on the validation forecast MSE, best model
// kept, and exact resumption.
//
// The run folder (options.out_dir) and its files: run_folder.hpp.
// Randomness is counter-based (shuffle = f(seed, epoch), dropout = f(seed, step)), so
// the loop position is the whole RNG state: a resumed run ends with the same
// parameters, bit for bit, as one that was never interrupted.
#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/train/progress.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/run_folder.hpp"

namespace attnfc::train {

struct TrainOptions {
  std::string out_dir;
  bool resume = false;  // continue from out_dir/checkpoint.safetensors
  // Polled after every optimiser step; when set, the loop saves a resumable
  // checkpoint and returns kInterrupted (Ctrl-C in the CLI).
  const std::atomic<bool>* interrupt = nullptr;
  // Behaves as if interrupted after this many optimiser steps in this call (0 = never).
  int64_t interrupt_after_steps = 0;
  // Behaves as if interrupted when the final scoring starts (tests): the trained model is
  // kept and --resume scores it. A real interrupt is polled between scoring batches.
  bool interrupt_before_scoring = false;
  // What the user watches while it trains (progress.hpp); the CLI picks the style.
  ProgressOptions progress{ProgressStyle::kOff};
  // A member of a seed ensemble (ensemble.cpp): its final scoring is of itself only. The
  // ensemble scores its linear start and the baselines once, on the same windows; scoring
  // them per member took half of each member's time on ETTh1 S.
  bool ensemble_member = false;
  // false: the final scoring scores the test windows only (an `attnfc backtest` fold, whose
  // validation MSE is best_val_loss; re-scoring 2880 validation windows with two networks
  // took a third of a warm-started fold's time on ETTh1).
  bool score_validation = true;
  // A fresh run starts from this model file's parameters instead of its own start (the
  // least-squares linear start is still fitted and scored beside it): `attnfc backtest`
  // warm-starts each fold from the previous fold's kept model. Empty: the usual start.
  std::string warm_start = "";
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

// For --resume: InputError unless out_dir/config.json describes the same run as
// `resolved` (to_json of the config, data-dependent keys filled in). Compared key by key
// after parsing, so a config.json written before a key existed still matches its default
// (or, where the default has changed since, the value it was trained with:
// fill_saved_defaults).
void check_resume_config(const std::string& out_dir, const nlohmann::json& resolved);

}  // namespace attnfc::train
