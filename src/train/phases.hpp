#pragma once
// The phases of one training run, in order (train() in trainer.cpp calls them; the
// ensemble calls the first two for itself and train() for each member):
//   1. prepare_data            load, split, fit the scaler on training rows only, scale;
//                              build the Scorer (baselines fit now, not after training)
//   2. write_resolved_config   config.json (checked against the saved one on --resume)
//   3. Training                the network, AdamW, schedule, sampler, buffers
//   4. start / resume          least-squares start and "epoch 0", or the checkpoint
//   5. run_epoch               optimiser steps until the epoch ends or an interruption
//   6. end_epoch               validation, keep the best model, log, checkpoint
//   7. score_kept_model        metrics.json: the kept model beside the baselines; with
//                              train.refit_epochs, validation scores the kept model and the
//                              test its refit on training + validation rows (refit.cpp)
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/data/panel_scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/data/window.hpp"
#include "attnfc/kernels/thread_governor.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/grad_sum.hpp"
#include "attnfc/train/part_workers.hpp"
#include "attnfc/train/progress.hpp"
#include "attnfc/train/run_folder.hpp"
#include "attnfc/train/scorer.hpp"
#include "attnfc/train/trainer.hpp"
#include "loop_state.hpp"

namespace attnfc::train::detail {

// 1. The data of a run. Resolves model.channels of a mixed model from the data.
struct RunData {
  data::TimeSeries series;   // original units, as read (a panel: every series)
  data::PanelSplit split;    // one split per series kept (a wide file: one)
  data::PanelScaler scaler;  // one scaler per series kept, fit on its training rows
  // Refers to series and scaler above; holds the scaled series the sampler reads.
  std::unique_ptr<Scorer> scorer;
};
std::unique_ptr<RunData> prepare_data(RunConfig& config);

// 2. Writes config.json; on resume, first checks that it describes the same run.
// Returns the resolved config (every key, data-dependent keys filled in).
nlohmann::json write_resolved_config(const RunFolder& folder, const RunConfig& config, bool resume);

// The training row range of each split, in order: what the sampler draws windows from.
std::vector<data::RowRange> train_parts(const std::vector<data::Split>& splits);

// 3. Everything a training loop owns. Built once; a step allocates nothing.
struct Training {
  Training(const RunConfig& config, const RunData& data, const nlohmann::json& resolved);

  const RunConfig& config;
  const RunData& data;
  ag::ParameterSet params;
  model::PatchTransformer net;
  ag::AdamW adam;
  data::WindowSampler train_windows;
  int64_t steps_per_epoch = 0;
  LrSchedule schedule;
  std::map<std::string, std::string> meta;  // the model file's metadata
  SampleBuffers batch;
  ag::Graph graph;
  GradientSum grad_sum;  // train.micro_batches > 1 or several processes
  // The same: this process's parts side by side on its threads (null when unused).
  std::unique_ptr<PartWorkers> part_workers;
  LoopState state;
  // The steps' thread count when the user chose none (kernels/thread_governor.hpp).
  kernels::ThreadGovernor threads{kernels::threads_automatic() ? kernels::default_threads() : 1,
                                  kernels::machine_idle_cpus(), kernels::machine_free_cpus(),
                                  kernels::machine_other_cpus()};

  // The validation metric of the network as it is now (Scorer::validation_mse).
  double validation_mse() const;
};

// 4. A fresh run: the least-squares start of the linear shortcut, then the starting
// point scored as "epoch 0" (kept when no epoch beats it). A resumed run: the
// checkpoint's parameters, moments and loop position, range-checked.
void start_fresh(Training& t, const RunPaths& paths);
// A warm start (`attnfc backtest`): the fresh start's linear start is fitted and saved for
// its row, then the network takes the parameters of `model_path` (a model file of the same
// model config) and that is "epoch 0".
void start_warm(Training& t, const RunPaths& paths, const std::string& model_path);
void resume(Training& t, const RunPaths& paths);

// 5. Steps until the epoch ends (true) or an interruption was asked for (false: a
// resumable checkpoint has been saved). Throws std::runtime_error when training diverges.
bool run_epoch(Training& t, const RunPaths& paths, const TrainOptions& options, Progress& progress,
               int64_t& steps_this_call);

// One optimiser step at learning rate `lr` on batch `st.step_in_epoch` of t.train_windows,
// its dropout drawn from st.global_step; returns its loss and adds the samples used.
double train_step(Training& t, int64_t& samples, double lr);

// 6. After a full epoch: validation, the best model kept, train_log.csv, checkpoint.
void end_epoch(Training& t, const RunPaths& paths, Progress& progress, double epoch_seconds,
               int64_t epoch_samples);

// 7. Reloads the kept model and writes metrics.json. An interrupt during the scoring
// returns kInterrupted and writes nothing: the last epoch's checkpoint is resumable and
// --resume scores the kept model again.
TrainResult score_kept_model(Training& t, const RunPaths& paths, const TrainOptions& options,
                             int64_t steps_this_call);

// train.calibrate "conformal" or "conformal_scaled": the split-conformal corrections of
// `model`'s levels from the validation windows, also put in `meta` (the model file's
// metadata) under "calibration"; nothing when the config does not calibrate. One network's
// and an ensemble's alike.
std::optional<Calibration> calibrate_on_validation(const RunConfig& config, const Scorer& scorer,
                                                   const Members& model,
                                                   std::map<std::string, std::string>& meta);

// train.refit_epochs > 0, after the kept model was chosen on validation: the least-squares
// start fitted again on every series' training and validation rows with the ridge chosen
// on validation, saved to `start_out`; then the kept model (`selected`) trained further on
// windows over the same rows (refit.cpp). Leaves the refit model in t.net and returns what
// metrics.json records under "refit". ScoringInterrupted when opt.interrupt is set.
nlohmann::json refit_selected(Training& t, const std::string& selected,
                              const std::string& selected_start, const std::string& start_out,
                              const TrainOptions& opt);

// The refit's entry as the refit model file's "refit" metadata: without its seconds, so
// the same seed and data give the same file, byte for byte.
std::string refit_metadata(const nlohmann::json& refit_entry);

// With a refit: model.safetensors and linear_start.safetensors as validation chose them,
// copied once to selected.safetensors and linear_start_selected.safetensors, which every
// later step reads (a refit interrupted and resumed starts from them again).
void keep_selected(const RunPaths& paths);

// Scores `model` beside `start` and the baselines on `part` ("val" or "test") alone when
// the scorer evaluates that part, into metrics[part] (the first call fills the rest of
// metrics too): how a refit run scores the kept model on validation and its refit on test.
void evaluate_part(Scorer& scorer, const std::string& part, const Members& model,
                   const Members& start, std::string* table, const std::atomic<bool>* stop,
                   const Calibration* cal, nlohmann::json& metrics);

// True when the final scoring should not start (an interrupt, or the test switch).
bool scoring_interrupted(const TrainOptions& options);

// The checkpoint of the loop as it is now.
void save_checkpoint(const Training& t, const RunPaths& paths);
// The network as a model file (model.safetensors, linear_start.safetensors), with the
// epoch it comes from in its "epoch" metadata (0 = before training).
void save_model(const Training& t, const std::string& path, int epoch);

}  // namespace attnfc::train::detail
