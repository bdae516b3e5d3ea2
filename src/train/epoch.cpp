// Phases 5-7 of a training run: the steps of an epoch, its end, and the final score
// (phases.hpp lists them all). One step (B samples of L context and H target steps, W
// values a step): sampler -> SampleBuffers (base/sample.hpp) -> model.loss -> backward ->
// clip -> AdamW(lr(step)).
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/atomic_file.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/kept_model.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "phases.hpp"

namespace attnfc::train::detail {

namespace fs = std::filesystem;

namespace {

// The steps' starting thread count and why (thread_governor.hpp), for --log-level debug.
void log_start_threads(const kernels::ThreadGovernor& g) {
  const double free = g.free_at_start();
  spdlog::debug("steps start at {} thread(s): {}", g.threads(),
                free < 0 ? std::string("the machine's load before them is unknown")
                         : fmt::format("other processes left {:.2f} CPUs free before", free));
}

constexpr uint64_t kShuffleStream = 0x5f3759df01ULL, kDropoutStream = 0x9e3779b97fULL;

// "step 12 (epoch 2, batch 3)" for the step that starts at this loop position.
std::string step_name(int64_t global_step, int epoch, int64_t step_in_epoch) {
  return "step " + std::to_string(global_step + 1) + " (epoch " + std::to_string(epoch + 1) +
         ", batch " + std::to_string(step_in_epoch + 1) + ")";
}
std::string step_name(const LoopState& st) {
  return step_name(st.global_step, st.epoch, st.step_in_epoch);
}

[[noreturn]] void diverged(const LoopState& st, double loss) {
  throw std::runtime_error("training diverged at " + step_name(st) + ": the loss is " +
                           std::to_string(loss) +
                           "; no model was saved from this step. "
                           "Try a lower train.lr or train.grad_clip, or check the data");
}

// The gradient of the whole batch at once (train.micro_batches 1, one process); returns
// the batch's loss and its size.
double batch_gradient(Training& t, int64_t& n) {
  const LoopState& st = t.state;
  n = static_cast<int64_t>(t.train_windows.fill_batch(st.step_in_epoch, t.batch));
  t.graph.reset();
  ag::GraphScope scope(t.graph);
  t.params.zero_grad();
  const model::ForwardOptions fo{
      .training = true,
      .dropout_seed = kernels::random_bits(t.config.train.seed ^ kDropoutStream, st.global_step)};
  const ag::Tensor loss = t.net.loss(t.batch.view(n), fo);
  const double lv = loss.item();
  if (!std::isfinite(lv)) diverged(st, lv);
  t.graph.backward(loss);
  return lv;
}

// The same as a sum over the batch's micro-batches (GradientSum): this process computes
// its parts, side by side on its threads (PartWorkers), and every process ends with the
// sum. Part k's dropout draws from (step, k).
double micro_batch_gradient(Training& t, int64_t& n) {
  const TrainConfig& tc = t.config.train;
  const LoopState& st = t.state;
  const int64_t B = tc.batch_size, first = st.step_in_epoch * B;
  n = std::min<int64_t>(B, static_cast<int64_t>(t.train_windows.num_windows()) - first);
  const uint64_t step_seed = kernels::random_bits(tc.seed ^ kDropoutStream, st.global_step);
  const dist::Comm& comm = dist::Comm::world();
  const auto [begin, end] = parts_of_rank(comm.rank(), comm.size(), tc.micro_batches);
  auto part_loss = [&, n = n](int k, SampleBuffers& samples) -> ag::Tensor {
    const auto [offset, size] = micro_batch_range(n, k, tc.micro_batches);
    if (size == 0) return {};  // the parts after an empty one are empty too
    t.train_windows.fill_samples(static_cast<size_t>(first + offset), static_cast<size_t>(size),
                                 samples);
    const model::ForwardOptions fo{.training = true,
                                   .dropout_seed = kernels::random_bits(step_seed, k)};
    return ag::scale(t.net.loss(samples.view(size), fo),
                     static_cast<float>(size) / static_cast<float>(n));
  };
  t.grad_sum.begin();
  t.part_workers->run(begin, end, kernels::current_threads(), part_loss, t.grad_sum);
  // Checked on the sum, which every process holds: they all stop at the same step.
  const double lv = t.grad_sum.finish(t.params);
  if (!std::isfinite(lv)) diverged(st, lv);
  return lv;
}

}  // namespace

double train_step(Training& t, int64_t& samples, double lr) {
  const TrainConfig& tc = t.config.train;
  LoopState& st = t.state;
  int64_t n = 0;
  const double lv = tc.micro_batches == 1 && dist::Comm::world().size() == 1
                        ? batch_gradient(t, n)
                        : micro_batch_gradient(t, n);
  const float norm =
      ag::clip_grad_norm(t.params, tc.grad_clip > 0 ? static_cast<float>(tc.grad_clip) : INFINITY);
  if (!std::isfinite(norm))
    throw std::runtime_error("training diverged at " + step_name(st) + ": the gradient norm is " +
                             std::to_string(norm) +
                             "; no model was saved from this step. "
                             "Try a lower train.lr or train.grad_clip");
  t.adam.step(static_cast<float>(lr));
  samples += n;
  return lv;
}

bool run_epoch(Training& t, const RunPaths& paths, const TrainOptions& opt, Progress& progress,
               int64_t& steps_this_call) {
  LoopState& st = t.state;
  const uint64_t order_seed = kernels::random_bits(t.config.train.seed ^ kShuffleStream, st.epoch);
  if (t.config.train.series_weighting == "series")
    t.train_windows.draw_by_series(order_seed);
  else
    t.train_windows.shuffle(order_seed);
  const auto t0 = std::chrono::steady_clock::now();
  progress.epoch_started();
  int64_t samples = 0;
  while (st.step_in_epoch < t.steps_per_epoch) {
    t.threads.begin_step();
    if (steps_this_call == 0 && t.threads.active()) log_start_threads(t.threads);
    st.epoch_loss_sum += train_step(t, samples, t.schedule.lr_at(st.global_step));
    if (t.threads.end_step())
      spdlog::debug("after {}: {} thread(s), the faster count on this machine's load now",
                    step_name(st.global_step, st.epoch, st.step_in_epoch), t.threads.threads());
    ++st.step_in_epoch, ++st.global_step, ++steps_this_call;
    progress.step(st.epoch + 1, st.step_in_epoch, st.epoch_loss_sum / st.step_in_epoch,
                  st.last_val);
    // Every process of an mpirun run stops after the same step: a signal may reach them
    // a step apart.
    const bool stop_now = dist::Comm::world().any(
        (opt.interrupt && opt.interrupt->load()) ||
        (opt.interrupt_after_steps > 0 && steps_this_call >= opt.interrupt_after_steps));
    if (stop_now) {
      progress.finish();
      st.epoch_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      save_checkpoint(t, paths);
      if (dist::Comm::world().root())  // the one that saved it
        spdlog::warn("interrupted at {}; saved a resumable checkpoint to {}",
                     step_name(st.global_step - 1, st.epoch, st.step_in_epoch - 1),
                     paths.checkpoint());
      return false;
    }
  }
  const double seconds =
      st.epoch_seconds +
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  end_epoch(t, paths, progress, seconds, samples);
  return true;
}

void end_epoch(Training& t, const RunPaths& paths, Progress& progress, double seconds,
               int64_t samples) {
  const TrainConfig& tc = t.config.train;
  LoopState& st = t.state;
  const double val = t.validation_mse();
  st.last_val = val;
  EpochRecord rec{st.epoch + 1,
                  st.global_step,
                  st.epoch_loss_sum / std::max<int64_t>(1, st.step_in_epoch),
                  val,
                  t.schedule.lr_at(st.global_step - 1),
                  seconds,
                  samples / std::max(seconds, 1e-9),
                  st.stopper.update(val)};
  st.records.push_back(rec);
  if (rec.best) save_model(t, paths.model(), rec.epoch);
  progress.epoch_done(rec, tc.patience > 0 ? tc.patience - st.stopper.bad_epochs() : -1);
  if (dist::Comm::world().root())
    write_file_atomic(paths.train_log(), format_train_log(st.records));
  if (st.stopper.should_stop())
    spdlog::info("early stopping: no improvement for {} epochs", tc.patience);
  ++st.epoch;
  st.step_in_epoch = 0, st.epoch_loss_sum = 0, st.epoch_seconds = 0;
  save_checkpoint(t, paths);  // resumable from the next epoch
}

bool scoring_interrupted(const TrainOptions& opt) {
  return opt.interrupt_before_scoring || (opt.interrupt && opt.interrupt->load());
}

std::optional<Calibration> calibrate_on_validation(const RunConfig& config, const Scorer& scorer,
                                                   const Members& model,
                                                   std::map<std::string, std::string>& meta) {
  if (config.train.calibrate == "none") return std::nullopt;
  Calibration cal = scorer.calibrate(model, config.train.calibrate);
  meta["calibration"] = cal.to_json().dump();
  spdlog::info("intervals calibrated on {} validation values a step (split-conformal, {})",
               cal.scores.empty() ? 0 : cal.scores.front(),
               cal.scaled ? "scaled about the median" : "additive");
  return cal;
}

TrainResult score_kept_model(Training& t, const RunPaths& paths, const TrainOptions& opt,
                             int64_t steps_this_call) {
  const LoopState& st = t.state;
  if (st.stopper.best_epoch() < 0)
    throw std::runtime_error("no epoch produced a finite validation loss; no model was saved");
  TrainResult result{TrainResult::Status::kFinished,
                     st.epoch,
                     st.stopper.best_epoch(),
                     st.stopper.best(),
                     st.global_step,
                     nullptr,
                     steps_this_call};
  // Rank 0 of an mpirun run scores the kept model and writes metrics.json.
  if (!dist::Comm::world().root()) return result;
  const bool refit = t.config.train.refit_epochs > 0;
  if (refit) keep_selected(paths);
  model::Checkpoint::read(refit ? paths.selected() : paths.model()).load_into(t.net);
  // The kept model's corrections are stored with it (or with its refit): its file is
  // written again, atomically, with them in its metadata.
  auto meta = t.meta;
  meta["epoch"] = std::to_string(st.stopper.best_epoch());
  const std::optional<Calibration> cal =
      calibrate_on_validation(t.config, *t.data.scorer, {&t.net}, meta);
  if (cal && !refit) model::save_checkpoint(paths.model(), t.net, meta);
  double total_seconds = 0;
  for (const auto& r : st.records) total_seconds += r.seconds;
  // Absent when the run had no least-squares start (or began before the file existed).
  const auto start_of = [&](const std::string& path) {
    return fs::exists(path) && !opt.ensemble_member ? LoadedModel::load(path) : LoadedModel{};
  };
  const LoadedModel linear_start =
      start_of(refit ? paths.selected_linear_start() : paths.linear_start());
  Scorer& scorer = *t.data.scorer;
  scorer.set_baselines(!opt.ensemble_member);
  if (!opt.score_validation) scorer.set_evaluated_parts({"test"});
  std::string table;
  nlohmann::json metrics;
  try {
    if (scoring_interrupted(opt)) throw ScoringInterrupted();
    const Calibration* c = cal ? &*cal : nullptr;
    // Validation scores the chosen model; the test its refit when there is one.
    evaluate_part(scorer, "val", {&t.net}, linear_start.members(), &table, opt.interrupt, c,
                  metrics);
    nlohmann::json refit_entry;
    LoadedModel refit_start;
    if (refit) {
      refit_entry = refit_selected(t, paths.selected(), paths.selected_linear_start(),
                                   paths.linear_start(), opt);
      meta["refit"] = refit_metadata(refit_entry);
      model::save_checkpoint(paths.model(), t.net, meta);
      refit_start = start_of(paths.linear_start());
    }
    evaluate_part(scorer, "test", {&t.net}, (refit ? refit_start : linear_start).members(), &table,
                  opt.interrupt, c, metrics);
    if (refit) metrics["refit"] = refit_entry;  // after: the first part scored fills metrics
  } catch (const ScoringInterrupted&) {
    spdlog::warn("interrupted during the final scoring; {} is kept and resuming scores it",
                 refit ? paths.selected() : paths.model());
    result.status = TrainResult::Status::kInterrupted;
    return result;
  }
  spdlog::info("best epoch {} of {}:\n{}", result.best_epoch, result.epochs_run, table);
  metrics.update({{"best_epoch", result.best_epoch},
                  {"best_val_loss", result.best_val_loss},
                  {"epochs_run", result.epochs_run},
                  {"steps", result.steps},
                  {"parameters", t.net.num_parameters()},
                  {"train_seconds", total_seconds}});
  if (!st.linear_start.is_null()) metrics["linear_start"] = st.linear_start;
  if (std::isfinite(st.initial_val_loss)) metrics["initial_val_loss"] = st.initial_val_loss;
  if (!st.warm_start.empty()) metrics["warm_start"] = st.warm_start;
  const KeptModel kept{result.best_epoch, result.best_epoch == 0, !st.linear_start.is_null(),
                       !st.warm_start.empty()};
  metrics["kept"] = kept_entry(kept);
  metrics["warnings"] = kept_model_warnings(metrics, kept);
  write_file_atomic(paths.metrics(), metrics.dump(2) + "\n");
  result.metrics = metrics;
  return result;
}

}  // namespace attnfc::train::detail
