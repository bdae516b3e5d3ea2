#pragma once
// Backtesting over rolling origins (`attnfc backtest`), as Darts' historical_forecasts and
// NeuralForecast's cross_validation do, but each fold is an ordinary run folder, scored
// beside the model's linear start and the baselines on the same windows.
//
// K folds are cut from the end of every series (data::split_from_end). With step S and
// horizon H, fold k (1..K) has its test targets in the T = S + H - 1 rows that end
// (K - k) * S rows before the last row, so its test windows are the S forecast origins
// after fold k-1's; its val targets are the V rows before them, and it trains on
// everything earlier. Nothing a fold trains or selects on lies at or after its own first
// test target, and the scaler of each fold is fit on its own training rows.
//
// Fold 1 trains as the config says. A later fold either refits (--refit every | once | R:
// every fold, only fold 1, every R-th fold) or scores the previous fold's model on its
// windows. A refit is warm-started from the previous fold's kept model and fine-tuned for
// `finetune_epochs` (the previous model stays a candidate as "epoch 0"), or trained from
// scratch with `cold`. The folder:
//   backtest.json   the plan (checked on resume), then the per-fold and pooled results
//   folds.csv       one row per fold and forecaster: origin, windows, MSE/MAE
//   fold-<k>/       fold k's run folder (config.json, model.safetensors, metrics.json ...)
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/train/progress.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

struct BacktestOptions {
  std::string out_dir;
  int folds = 5;
  int64_t step = 0;     // rows between origins; 0 = model.horizon
  int refit_every = 1;  // refit every this many folds; 0 = once (fold 1 only)
  bool cold = false;    // refits train from scratch instead of from the previous fold
  // Epochs of a warm-started refit: a fraction below 1 is one epoch cut to that share of
  // its steps (train.epoch_fraction), a whole number that many epochs; 0 scores only.
  double finetune_epochs = 0.25;
  int64_t val_rows = 0;  // each fold's val targets; 0 = as many as the config's split has
  bool resume = false;
  const std::atomic<bool>* interrupt = nullptr;
  ProgressOptions progress{ProgressStyle::kOff};
  // Tests: behaves as if interrupted after this many optimiser steps in the first fold
  // that trains in this call (0 = never).
  int64_t interrupt_after_steps = 0;
};

// One fold's outcome: its metrics.json and how it was made.
struct FoldResult {
  int fold = 0;            // 1-based
  std::string origin;      // the time of its first test target (the first series')
  std::string how;         // "trained", "fine-tuned", "scored" (the previous model)
  nlohmann::json metrics;  // the fold's metrics.json
  double seconds = 0;      // wall time of the fold in the call that finished it
};

struct BacktestResult {
  enum class Status { kFinished, kInterrupted };
  Status status = Status::kFinished;
  std::vector<FoldResult> folds;
  // Per forecaster, MSE and MAE (scaled and original) of all test windows of all folds:
  // each fold's mean weighted by its windows.
  nlohmann::json pooled;
  int interrupted_fold = 0;  // the fold that was stopped (kInterrupted)
  // One-line warnings about the whole backtest (pooled_warnings); each fold's own are in
  // its metrics.
  std::vector<std::string> warnings;
};

// Throws InputError for a config, a series or a folder that cannot take the plan
// (too short for K folds, a plan that differs from the saved one on resume, ...).
BacktestResult backtest(const RunConfig& config, const BacktestOptions& options);

// Pooled metrics of the folds (each metrics with a "test" part): per model,
// {"windows", "scaled": {"mse","mae"}, "original": {"mse","mae"}}; models missing from a
// fold are pooled over the folds that have them.
nlohmann::json pool_folds(const std::vector<FoldResult>& folds);

// The folder's files, for the writers and for the CLI's messages.
std::string backtest_json_path(const std::string& dir);
std::string folds_csv_path(const std::string& dir);

// How the backtest's tables show things: the forecasters of a "models" object, the model
// ("attnfc") first and the others in file order; a metrics "kept" entry as
// "warm start (epoch 0)".
std::vector<std::string> forecaster_order(const nlohmann::json& models);
std::string kept_label(const nlohmann::json& kept);

// The backtest's verdict on the model: a forecaster with a lower pooled test MSE (scaled)
// than "attnfc" is named, with both MSEs; so is the number of folds that kept the linear
// start. Empty when the model wins and trained in every fold.
std::vector<std::string> pooled_warnings(const BacktestResult& result);

}  // namespace attnfc::train
