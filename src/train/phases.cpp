// Phases 1-4 of a training run: data, resolved config, the training state, and its start
// (phases.hpp lists them all).
#include "phases.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/train/auto_sizes.hpp"
#include "attnfc/train/known_setup.hpp"
#include "attnfc/train/linear_init.hpp"
#include "attnfc/train/quantile_start.hpp"

namespace attnfc::train::detail {

namespace {

// Series too short for the split are left out, and said so (never silently).
void report_skipped(const data::TimeSeries& series, const data::PanelSplit& split) {
  if (split.skipped.empty()) return;
  spdlog::warn("{}: {} of {} series left out, too short for a window in every split part",
               series.source, split.skipped.size(), series.num_series());
  for (size_t k = 0; k < std::min<size_t>(3, split.skipped.size()); ++k)
    spdlog::warn("  {}", split.skipped[k]);
}

}  // namespace

std::unique_ptr<RunData> prepare_data(RunConfig& config) {
  auto d = std::make_unique<RunData>();
  data::CsvOptions csv = config.data.csv;
  csv.value_columns = config.data.value_columns();  // the targets, then the covariates
  // The table stays for the static columns (one value per series, read after the series).
  const data::CsvTable table = config.data.static_columns.empty()
                                   ? data::CsvTable()
                                   : data::CsvTable::read_file(csv.path, csv.delimiter);
  d->series =
      config.data.static_columns.empty() ? data::load_series(csv) : data::load_series(table, csv);
  if (const std::string chosen = resolve_sizes(config, d->series); !chosen.empty())
    spdlog::info("{}", chosen);
  const auto L = static_cast<size_t>(config.model.context_length);
  const auto H = static_cast<size_t>(config.model.horizon);
  d->split = make_panel_split(config.data, d->series, L, H);
  report_skipped(d->series, d->split);
  resolve_model_channels(config, d->series.num_channels());
  // The sampler and the scores leave the covariates out as the model's loss does: one
  // number, resolved once from the data (resolve_model_channels).
  d->series.target_channels = static_cast<size_t>(config.model.target_channels);
  attach_known(config, d->series, config.data.static_columns.empty() ? nullptr : &table);
  d->scaler = data::PanelScaler::fit(d->series, d->split,
                                     config.data.value_transform(d->series.target_channels));
  std::vector<std::string> parts{"val"};
  if (config.train.evaluate_test) parts.push_back("test");
  d->scorer = std::make_unique<Scorer>(d->series, d->scaler, d->split, config.model.context_length,
                                       config.model.horizon, config.train.eval_batch_size, parts);
  return d;
}

nlohmann::json write_resolved_config(const RunFolder& folder, const RunConfig& config,
                                     bool resume) {
  const nlohmann::json resolved = to_json(config);
  if (resume) check_resume_config(folder.dir(), resolved);
  write_file_atomic(folder.paths().config(), resolved.dump(2) + "\n");
  return resolved;
}

std::vector<data::RowRange> train_parts(const std::vector<data::Split>& splits) {
  std::vector<data::RowRange> parts;
  for (const data::Split& sp : splits) parts.push_back(sp.train);
  return parts;
}

namespace {

int64_t epoch_steps(const TrainConfig& tc, const data::WindowSampler& windows) {
  int64_t steps = static_cast<int64_t>(windows.num_batches(tc.batch_size));
  if (tc.epoch_fraction < 1)
    steps = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(tc.epoch_fraction * static_cast<double>(steps))));
  if (tc.max_steps_per_epoch > 0) steps = std::min(steps, tc.max_steps_per_epoch);
  return steps;
}

}  // namespace

Training::Training(const RunConfig& config_, const RunData& data_, const nlohmann::json& resolved)
    : config(config_),
      data(data_),
      net(config_.model, params, config_.train.seed),
      adam(params, static_cast<float>(config_.train.beta1), static_cast<float>(config_.train.beta2),
           static_cast<float>(config_.train.eps), static_cast<float>(config_.train.weight_decay)),
      train_windows(data_.scorer->scaled(), train_parts(data_.split.splits),
                    static_cast<size_t>(config_.model.context_length),
                    static_cast<size_t>(config_.model.horizon), config_.model.channel_mode),
      steps_per_epoch(epoch_steps(config_.train, train_windows)),
      batch(config_.train.batch_size, config_.model.context_length, config_.model.horizon,
            static_cast<int64_t>(train_windows.width())),
      grad_sum(params, dist::Comm::world(), config_.train.micro_batches) {
  const TrainConfig& tc = config.train;
  data::reserve_known(data_.scorer->scaled(), batch);
  const dist::Comm& comm = dist::Comm::world();
  if (tc.micro_batches > 1 || comm.size() > 1) {  // as many workers as parts run at once
    const auto [first, end] = parts_of_rank(comm.rank(), comm.size(), tc.micro_batches);
    // Workers for every count the steps may get: the governor (`threads`) may start at any
    // rung of its ladder, or an earlier member's may have left fewer threads, and move later.
    const int parts = end - first;
    const int workers = kernels::threads_automatic()
                            ? PartWorkers::most_side_by_side(parts, kernels::default_threads())
                            : PartWorkers::side_by_side(parts, kernels::current_threads());
    part_workers = std::make_unique<PartWorkers>(params, batch, workers);
  }
  adam.set_lr_scale("linear_skip.", static_cast<float>(tc.linear_lr_scale));
  schedule = {tc.schedule,
              tc.lr,
              tc.min_lr,
              tc.warmup_steps,
              tc.epochs * steps_per_epoch,
              tc.step_epochs * steps_per_epoch,
              tc.gamma};
  meta = {{"config", resolved.dump()},
          {"scaler", data.scaler.at(0).to_json().dump()},
          {"columns", nlohmann::json(data.series.channels).dump()},
          {"frequency", data.series.frequency.name()}};
  if (data.series.known) meta["known"] = data.series.known->to_json().dump();
  if (!data.series.id_column.empty()) {  // a panel: every series' scaler, by id
    meta["id_column"] = data.series.id_column;
    meta["series_scalers"] = data.scaler.to_json().dump();
  }
  state.stopper = EarlyStopping(tc.patience, tc.min_delta);
}

double Training::validation_mse() const {
  return data.scorer->validation_mse({&net}, config.train.max_val_windows);
}

// Rank 0 alone writes the run folder; the others hold the same model (grad_sum.hpp).
void save_checkpoint(const Training& t, const RunPaths& paths) {
  if (!dist::Comm::world().root()) return;
  auto m = t.meta;
  m["train_state"] = t.state.to_json().dump();
  model::save_checkpoint(paths.checkpoint(), t.net, m, t.adam.state());
}

namespace {

// train.quantile_init "residuals" (quantile_start.hpp), after the linear start it measures.
// Windows are capped so their errors take at most 2^23 values (32 MB) and at most 16384.
void start_quantile_levels(Training& t) {
  const model::ModelConfig& mc = t.config.model;
  const int64_t per_window = static_cast<int64_t>(mc.horizon) * mc.token_channels();
  const int64_t cap = std::clamp<int64_t>((int64_t{1} << 23) / per_window, 1024, 16384);
  const QuantileStart qs =
      init_quantile_levels(t.net, t.train_windows, t.batch, t.config.train.seed, cap);
  spdlog::info(
      "quantile start: levels spaced by the starting model's errors on {} training windows "
      "(levels {:g}-{:g} span {:.3f} sigma at step 1, {:.3f} at step {})",
      qs.windows, mc.quantiles.front(), mc.quantiles.back(), qs.first_width, qs.last_width,
      mc.cross_attention() ? 1 : mc.horizon);
}

// The least-squares start of the linear shortcut and, for a quantile model, its levels:
// the fresh start's parameters (a warm start fits them too, for its linear-start row). The
// start is saved to be scored beside the final model (and usable as a model of its own).
void fit_linear_start(Training& t, const RunPaths& paths) {
  const TrainConfig& tc = t.config.train;
  if (t.config.model.linear_lookback > 0 && tc.linear_init == "least_squares") {
    const data::TimeSeries& s = t.data.series;
    const std::vector<float> values = scaled_with_gaps(s, t.data.split, t.data.scaler);
    const LinearStart ls = init_linear_shortcut(
        t.net, {values.data(), static_cast<int64_t>(s.rows()), static_cast<int>(s.num_channels())},
        t.data.split.splits, tc.linear_ridge);
    if (std::isnan(ls.val_mse))
      spdlog::info("linear shortcut: least squares on {} training windows, ridge {:g}", ls.windows,
                   ls.ridge);
    else
      spdlog::info(
          "linear shortcut: least squares on {} training windows, ridge {:g} (validation MSE "
          "{:.5f}, the lowest of the candidates)",
          ls.windows, ls.ridge, ls.val_mse);
    t.state.linear_start = {{"ridge", ls.ridge}, {"windows", ls.windows}};
    t.state.linear_start["val_mse"] =
        std::isnan(ls.val_mse) ? nlohmann::json() : nlohmann::json(ls.val_mse);
  }
  if (t.config.model.levels() > 1 && tc.quantile_init == "residuals") start_quantile_levels(t);
  if (!t.state.linear_start.is_null()) save_model(t, paths.linear_start(), 0);
}

// The starting point is a candidate too (update 0 of the early stopper, "epoch 0"): with a
// least-squares shortcut, a zero head or a warm start it is already a fair forecaster, and
// when no training epoch beats it on validation, the run keeps it instead of an epoch that
// only overfitted.
void keep_start(Training& t, const RunPaths& paths, const std::string& what) {
  t.threads.settle();  // beside busy neighbours the first validation runs at the steps' count
  t.state.last_val = t.state.initial_val_loss = t.validation_mse();
  spdlog::info("{}: validation MSE {:.5f}", what, t.state.last_val);
  if (t.state.stopper.update(t.state.last_val)) save_model(t, paths.model(), 0);
}

}  // namespace

void start_fresh(Training& t, const RunPaths& paths) {
  fit_linear_start(t, paths);
  keep_start(t, paths, "initial model");
}

void start_warm(Training& t, const RunPaths& paths, const std::string& model_path) {
  fit_linear_start(t, paths);
  // The parameters only: this run's scaler (fit on its own training rows) stays in meta.
  model::Checkpoint::read(model_path).load_into(t.net);
  t.state.warm_start = model_path;
  keep_start(t, paths, "warm start from " + model_path);
}

void save_model(const Training& t, const std::string& path, int epoch) {
  if (!dist::Comm::world().root()) return;
  auto m = t.meta;
  m["epoch"] = std::to_string(epoch);
  model::save_checkpoint(path, t.net, m);
}

void resume(Training& t, const RunPaths& paths) {
  const model::Checkpoint ck = model::Checkpoint::read(paths.checkpoint());
  ck.load_into(t.net);
  t.adam.load_state(ck.extra());
  t.state = load_loop_state(ck.meta("train_state", ""), paths.checkpoint(), t.config.train.epochs,
                            t.steps_per_epoch, t.state.stopper);
  t.state.last_val = t.state.records.empty() ? std::nan("") : t.state.records.back().val_loss;
  spdlog::info("resuming {} at epoch {}, step {}", paths.dir, t.state.epoch + 1,
               t.state.step_in_epoch);
}

}  // namespace attnfc::train::detail
