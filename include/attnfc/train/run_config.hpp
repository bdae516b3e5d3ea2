#pragma once
// The run config: one JSON file with three sections, each read strictly (unknown
// keys are errors with a "did you mean", wrong types and ranges name the key):
//   "data"   which CSV, which columns, missing values, the split (below)
//   "model"  model::ModelConfig (docs/CONFIG.md)
//   "train"  TrainConfig (below)
// `attnfc train --set train.lr=3e-4 --set model.d_model=128` edits the JSON before
// it is read, so overrides get exactly the same checks as the file.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/train/auto_sizes.hpp"
#include "attnfc/train/schedule.hpp"

namespace attnfc::train {

struct DataConfig {
  data::CsvOptions csv;  // csv.path from "path", csv.value_columns from "columns" / "targets"
  // Columns observed up to the forecast origin: inputs of a mixed model, never forecast or
  // scored. The series is read with the targets first, then these (value_columns()).
  std::vector<std::string> past_covariates;
  // Columns known for the horizon too (a weather forecast, a price plan): inputs of a mixed
  // model's encoder like past covariates, and read at the H future steps by the
  // cross-attention decoder; predict takes their future rows from its input or --future.
  std::vector<std::string> future_covariates;
  // Calendar features of the time axis (data/known.hpp): {"auto"} or feature words.
  std::vector<std::string> calendar;
  std::string holidays;                     // a CSV of holiday dates: a 0/1 feature a step
  std::vector<std::string> static_columns;  // "static": one value per series of a long file
  // The columns the series is read with: targets, past covariates, future covariates.
  std::vector<std::string> value_columns() const;
  // Any input only the cross-attention decoder reads.
  bool reads_known() const {
    return !future_covariates.empty() || !calendar.empty() || !holidays.empty() ||
           !static_columns.empty();
  }
  // "split": a protocol name ("etth", "ettm", "custom", or "auto": from the file name),
  // or an object {"train_rows", "val_rows", "test_rows"} | {"train_frac", "test_frac"} |
  // {"val_start", "test_start"} (timestamps), or "last_horizon" (the M4 protocol: per series,
  // the last model.horizon rows are the test targets and the horizon before them val).
  // Or {"val_rows", "test_rows", "end_offset"} without train_rows ("from_end"): counted from
  // each series' end, the last end_offset rows unused (data::split_from_end; how
  // `attnfc backtest` cuts its folds).
  // In a panel the split applies to each series on its own.
  std::string split_protocol = "auto";
  // "transform": "log" (lambda 0), "sqrt" (0.5) or {"box_cox": lambda in [0, 1]}: the targets
  // are power-transformed before the z-score (data::ValueTransform); its lambda is kept in
  // csv.domain, which the reader checks. The transform of a series whose first
  // `target_channels` channels are the targets (0: every channel is one,
  // TimeSeries::target_channels):
  data::ValueTransform value_transform(size_t target_channels) const {
    return {csv.domain.lambda, target_channels == 0 ? SIZE_MAX : target_channels};
  }
  int64_t train_rows = 0, val_rows = 0, test_rows = 0, end_offset = 0;
  double train_frac = 0, test_frac = 0;
  std::string val_start, test_start;
};

struct TrainConfig {
  int epochs = 10;
  int batch_size = 32;
  // Each step's batch in this many fixed, contiguous parts whose gradients are summed in
  // part order (train/grad_sum.hpp): the rule that makes an mpirun run of N <= micro_batches
  // processes give the model of one process, bit for bit. 1 = the batch at once. A config
  // that does not give it gets 2 (1 when batch_size is 1): parse_train.
  int micro_batches = 2;
  double lr = 1e-3;
  double min_lr = 0.0;
  ScheduleKind schedule = ScheduleKind::kCosine;
  int64_t warmup_steps = 0;
  int step_epochs = 1;  // step schedule: epochs between decays
  double gamma = 0.5;
  double weight_decay = 0.01;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double grad_clip = 1.0;  // global L2 norm; 0 disables
  int patience = 3;        // epochs without validation improvement; 0 = never stop early
  double min_delta = 0.0;
  uint64_t seed = 1;
  int64_t max_steps_per_epoch = 0;  // 0 = every training window each epoch
  // Each epoch runs this share of its steps (rounded up), on its own shuffle of every window:
  // `attnfc backtest --finetune-epochs 0.25` fine-tunes a quarter of an epoch.
  double epoch_fraction = 1;
  int64_t max_val_windows = 0;  // 0 = every validation window
  // After the kept model is chosen on validation, train it this many more epochs (a
  // fraction: that share of one) on windows over the training and validation rows, at a
  // learning rate falling from refit_lr by cosine; its least-squares start is fitted again
  // on the same rows. 0: no refit (train/refit.cpp).
  double refit_epochs = 0;
  double refit_lr = 1e-4;  // the parser's default: lr / 10
  int eval_batch_size = 256;
  bool evaluate_test = true;  // score model and baselines on the test split at the end
  // Start of the linear shortcut (model.linear_lookback > 0): "least_squares" (NLinear
  // fitted on the training rows, see linear_init.hpp) or "zero".
  std::string linear_init = "least_squares";
  // Learning-rate multiplier of the linear shortcut's parameters; 0 keeps them fixed.
  double linear_lr_scale = 0.01;
  // Ridge of the least-squares start, relative to the mean diagonal of X^T X; negative
  // = "auto" (the candidate with the lowest validation MSE, train/linear_init.hpp).
  double linear_ridge = -1;
  // Networks trained from different seeds whose forecasts are averaged (train/ensemble.hpp);
  // 1 = one network. Member k (1-based) trains with seed + (k - 1) * kEnsembleSeedStride.
  int ensemble = 1;
  // The context length of each member, in turn (member k reads entry (k - 1) mod n): the first
  // is model.context_length, the others at most that (model::with_context: the linear
  // shortcut reads up to its member's context). Empty: every member reads model.context_length.
  // Networks that see different lengths of the past err differently, so their mean gains
  // more than seeds alone give (docs/RESULTS.md, M4 Hourly).
  std::vector<int> ensemble_contexts;
  // How a panel's series weigh in training: "window" (every training window once an epoch:
  // a long series counts more) or "series" (each epoch draws windows series first, so every
  // series counts the same; data::WindowSampler::draw_by_series).
  std::string series_weighting = "window";
  // "conformal" / "conformal_scaled": after training, the kept quantile model's intervals are
  // calibrated on the validation windows (train/calibration.hpp: additive, or scaled about the
  // median) and the corrections stored with it; "none".
  std::string calibrate = "none";
  // Quantile models: "residuals" spaces the levels by the starting model's errors on training
  // windows before training (train/quantile_start.hpp); "zero" keeps the zero head's (sigma/2).
  std::string quantile_init = "residuals";
};

inline constexpr uint64_t kEnsembleSeedStride = 1000003;
inline constexpr uint64_t kMaxSeed = uint64_t{1} << 53;  // exact in a JSON number (double)

struct RunConfig {
  DataConfig data;
  model::ModelConfig model;
  TrainConfig train;
  bool model_channels_given = false;  // "model.channels" was in the file
  AutoSizes auto_sizes;               // model sizes given as "auto" (auto_sizes.hpp)
  nlohmann::json raw;                 // the JSON it was read from (after overrides)
};

// Applies "section.key=value" overrides: value is parsed as JSON when it is valid JSON
// (numbers, true/false, arrays, quoted strings), else taken as a plain string.
// InputError for a malformed override.
void apply_overrides(nlohmann::json& root, const std::vector<std::string>& sets);

RunConfig parse_run_config(const nlohmann::json& root);
// The least-squares start needs model.target "delta" when the shortcut is on (InputError
// naming train.linear_init); run again once "auto" sizes are chosen.
void check_linear_init(const RunConfig& config);
// train.ensemble_contexts against the resolved model sizes: InputError naming the key.
void check_ensemble_contexts(const RunConfig& config);
// The model config of ensemble member k (1-based): config.model at its context length.
model::ModelConfig member_model(const RunConfig& config, int k);
// Every key with its resolved value (what `attnfc train` writes as config.json).
nlohmann::json to_json(const RunConfig& config);
// A run folder's config.json may predate a key whose default has since changed: it gets
// the value the run was trained with. train.micro_batches (absent before 2026-12-02, when
// every batch was one part; the default is 2 since 2026-12-07) becomes 1.
void fill_saved_defaults(nlohmann::json& saved);

// Fills model.channels from the data for a mixed-channel model whose config left it
// out; InputError naming model.channels when a given value disagrees with the data.
void resolve_model_channels(RunConfig& config, size_t data_channels);

// The split the data section asks for of one series of a panel (`seg`), in the series' own
// row numbers (0 = its first row), unchecked for windows.
data::Split segment_split(const DataConfig& d, const data::TimeSeries& series,
                          const data::SeriesSegment& seg, size_t context, size_t horizon);
// Builds the split the data section asks for, of a series that is not a panel (InputError
// for a panel of several series). horizon: for "last_horizon".
data::Split make_split(const DataConfig& d, const data::TimeSeries& series, size_t context,
                       size_t horizon);
// The split of every series of a panel (a wide file: its one series), each checked to hold
// a window of context + horizon rows in every part. A series that does not is left out and
// said why in `skipped`; a lone series that does not is an InputError, and so is a panel in
// which none does.
data::PanelSplit make_panel_split(const DataConfig& d, const data::TimeSeries& series,
                                  size_t context, size_t horizon);

}  // namespace attnfc::train
