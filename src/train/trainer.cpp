// The training loop. Layout of one step (B windows, L context, H horizon, W values per step):
//   sampler -> ctx [B, L, W], tgt [B, H, W] (+ masks) -> window [B, L+H(, W)] -> model.loss
//   -> backward -> clip -> AdamW(lr(step)).
#include "attnfc/train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/window.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/train/ensemble.hpp"
#include "attnfc/train/linear_init.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/progress.hpp"

namespace attnfc::train {

namespace fs = std::filesystem;

std::string run_file(const std::string& out_dir, const char* name) {
  return (fs::path(out_dir) / name).string();
}

bool open_run_folder(const TrainOptions& opt, const RunConfig& config) {
  const std::string& dir = opt.out_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError(dir + ": cannot create the output folder (" +
                     (ec ? ec.message() : std::string("not a directory")) + ")");
  const bool holds_run = fs::exists(run_file(dir, "checkpoint.safetensors")) ||
                         fs::exists(run_file(dir, "model.safetensors")) ||
                         fs::exists(fs::path(dir) / "members");
  if (!opt.resume && holds_run)
    throw InputError(dir +
                     ": already holds a run; pass --resume to continue it, or "
                     "choose another --out");
  const std::string saved_path = run_file(dir, "config.json");
  if (opt.resume && fs::exists(saved_path)) {
    // Checked first: a run of the other kind has no checkpoint (or no members) to
    // resume, and "nothing to resume" would hide the real cause.
    const nlohmann::json saved = model::load_json_file(saved_path);
    const nlohmann::json::json_pointer key("/train/ensemble");  // absent before ensembles: 1
    const int saved_k =
        saved.contains(key) && saved[key].is_number_integer() ? saved[key].get<int>() : 1;
    if (saved_k != config.train.ensemble)
      throw InputError("train.ensemble: found " + std::to_string(config.train.ensemble) +
                       ", but the run in " + dir + " was started with " + std::to_string(saved_k) +
                       "; resume with the same config (or omit --config to use the saved one)");
  }
  return opt.resume && fs::exists(run_file(dir, "metrics.json"));
}

void check_resume_config(const std::string& out_dir, const nlohmann::json& resolved) {
  const std::string path = run_file(out_dir, "config.json");
  nlohmann::json saved;
  try {
    saved = to_json(parse_run_config(model::load_json_file(path)));
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  if (saved != resolved)
    throw InputError(path +
                     " differs from the config given; resume with the same config (or omit "
                     "--config to use the saved one)");
}

namespace {

constexpr uint64_t kShuffleStream = 0x5f3759df01ULL, kDropoutStream = 0x9e3779b97fULL;

// The loop position; with the parameters and optimiser moments it is the whole state.
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

  nlohmann::json to_json() const {
    nlohmann::json recs = nlohmann::json::array();
    for (const auto& r : records) recs.push_back(train::to_json(r));
    return {{"epoch", epoch},
            {"step_in_epoch", step_in_epoch},
            {"global_step", global_step},
            {"epoch_loss_sum", epoch_loss_sum},
            {"epoch_seconds", epoch_seconds},
            {"early_stopping", stopper.to_json()},
            {"records", recs},
            {"linear_start", linear_start}};
  }
  void load(const nlohmann::json& j) {
    epoch = j.at("epoch").get<int>();
    step_in_epoch = j.at("step_in_epoch").get<int64_t>();
    global_step = j.at("global_step").get<int64_t>();
    epoch_loss_sum = j.at("epoch_loss_sum").get<double>();
    epoch_seconds = j.at("epoch_seconds").get<double>();
    stopper.load_json(j.at("early_stopping"));
    records.clear();
    for (const auto& r : j.at("records")) records.push_back(epoch_record_from_json(r));
    linear_start = j.value("linear_start", nlohmann::json());  // absent in older checkpoints
  }
};

// Mean over samples of the per-sample MSE of the last position's forecast (observed
// targets only): what evaluation reports, so early stopping optimises what is scored.
double validation_mse(const model::PatchTransformer& m, const data::WindowSampler& val,
                      int64_t batch, int64_t max_windows) {
  const size_t L = val.context(), H = val.horizon(), W = val.width();
  const int64_t n = max_windows > 0 ? std::min<int64_t>(max_windows, val.num_windows())
                                    : static_cast<int64_t>(val.num_windows());
  std::vector<float> ctx(batch * L * W), cmask(batch * L * W), tgt(batch * H * W),
      tmask(batch * H * W);
  std::vector<uint8_t> obs(batch * L * W);
  double sum = 0;
  int64_t samples = 0;
  for (int64_t b = 0; b * batch < n; ++b) {
    int64_t count = static_cast<int64_t>(
        val.fill_batch(b, batch, ctx.data(), tgt.data(), tmask.data(), cmask.data()));
    count = std::min(count, n - b * batch);
    for (size_t i = 0; i < count * L * W; ++i) obs[i] = cmask[i] != 0;
    const std::vector<float> f = m.forecast(ctx.data(), obs.data(), count, L, 0);
    for (int64_t s = 0; s < count; ++s) {
      double se = 0;
      int64_t k = 0;
      for (size_t i = s * H * W; i < (s + 1) * H * W; ++i) {
        if (tmask[i] == 0) continue;
        const double e = static_cast<double>(f[i]) - tgt[i];
        se += e * e;
        ++k;
      }
      if (k == 0) continue;
      sum += se / static_cast<double>(k);
      ++samples;
    }
  }
  return samples > 0 ? sum / static_cast<double>(samples) : std::nan("");
}

}  // namespace

TrainResult train(const RunConfig& config_in, const TrainOptions& opt) {
  if (config_in.train.ensemble > 1) return train_ensemble(config_in, opt);
  RunConfig config = config_in;
  const TrainConfig& tc = config.train;
  const std::string ckpt_path = run_file(opt.out_dir, "checkpoint.safetensors");
  const std::string model_path = run_file(opt.out_dir, "model.safetensors");
  const std::string metrics_path = run_file(opt.out_dir, "metrics.json");
  if (open_run_folder(opt, config)) {
    TrainResult done;
    done.status = TrainResult::Status::kAlreadyFinished;
    return done;
  }
  if (opt.resume && !fs::exists(ckpt_path)) {
    throw InputError(ckpt_path + ": nothing to resume (no checkpoint in " + opt.out_dir + ")");
  }

  // Data: load, split, fit the scaler on training rows only, scale.
  data::TimeSeries series = data::load_series(config.data.csv);
  const auto L = static_cast<size_t>(config.model.context_length);
  const auto H = static_cast<size_t>(config.model.horizon);
  const data::Split split = make_split(config.data, series, L);
  data::validate_split(split, L, H, series.source);
  const bool mixed = config.model.channel_mode == model::ChannelMode::kMixed;
  const int C = static_cast<int>(series.num_channels());
  resolve_model_channels(config, series.num_channels());
  const data::Scaler scaler = data::Scaler::fit(series, split.train);
  data::TimeSeries scaled = series;
  scaler.apply(scaled);

  const nlohmann::json resolved = to_json(config);
  const std::string config_json = resolved.dump(2) + "\n";
  if (opt.resume) check_resume_config(opt.out_dir, resolved);
  write_file_atomic(run_file(opt.out_dir, "config.json"), config_json);

  ag::ParameterSet params;
  model::PatchTransformer net(config.model, params, tc.seed);
  LoopState st;
  if (!opt.resume && config.model.linear_lookback > 0 && tc.linear_init == "least_squares") {
    const std::vector<float> values = scaled_with_gaps(series, scaler);
    const LinearStart ls = init_linear_shortcut(
        net, {values.data(), static_cast<int64_t>(series.rows()), C}, split, tc.linear_ridge);
    if (std::isnan(ls.val_mse))
      spdlog::info("linear shortcut: least squares on {} training windows, ridge {:g}", ls.windows,
                   ls.ridge);
    else
      spdlog::info(
          "linear shortcut: least squares on {} training windows, ridge {:g} (validation MSE "
          "{:.5f}, the lowest of the candidates)",
          ls.windows, ls.ridge, ls.val_mse);
    st.linear_start = {{"ridge", ls.ridge}, {"windows", ls.windows}};
    st.linear_start["val_mse"] =
        std::isnan(ls.val_mse) ? nlohmann::json() : nlohmann::json(ls.val_mse);
  }
  ag::AdamW adam(params, static_cast<float>(tc.beta1), static_cast<float>(tc.beta2),
                 static_cast<float>(tc.eps), static_cast<float>(tc.weight_decay));
  adam.set_lr_scale("linear_skip.", static_cast<float>(tc.linear_lr_scale));
  nlohmann::json cols = series.channels;
  const std::map<std::string, std::string> meta{{"config", resolved.dump()},
                                                {"scaler", scaler.to_json().dump()},
                                                {"columns", cols.dump()},
                                                {"frequency", series.frequency.name()}};
  const auto dmode = mixed ? data::ChannelMode::kMixed : data::ChannelMode::kIndependent;
  data::WindowSampler train_windows(scaled, split.train, L, H, dmode);
  data::WindowSampler val_windows(scaled, split.val, L, H, dmode);
  const size_t W = train_windows.width();
  const int64_t B = tc.batch_size;
  int64_t steps_per_epoch = static_cast<int64_t>(train_windows.num_batches(B));
  if (tc.max_steps_per_epoch > 0)
    steps_per_epoch = std::min(steps_per_epoch, tc.max_steps_per_epoch);
  LrSchedule sched{tc.schedule,
                   tc.lr,
                   tc.min_lr,
                   tc.warmup_steps,
                   tc.epochs * steps_per_epoch,
                   tc.step_epochs * steps_per_epoch,
                   tc.gamma};

  st.stopper = EarlyStopping(tc.patience, tc.min_delta);
  if (opt.resume) {
    const model::Checkpoint ck = model::Checkpoint::read(ckpt_path);
    ck.load_into(net);
    adam.load_state(ck.extra());
    st.load(nlohmann::json::parse(ck.meta("train_state", "{}")));
    spdlog::info("resuming {} at epoch {}, step {}", opt.out_dir, st.epoch + 1, st.step_in_epoch);
  }
  auto save_state = [&] {
    auto m = meta;
    m["train_state"] = st.to_json().dump();
    model::save_checkpoint(ckpt_path, net, m, adam.state());
  };

  spdlog::info("{}: {}; {} training windows, {} validation windows, {} parameters", series.source,
               series.describe(), train_windows.num_windows(), val_windows.num_windows(),
               net.num_parameters());
  const size_t win = (L + H) * W;
  std::vector<float> ctx(B * L * W), tgt(B * H * W), tmask(B * H * W), cmask(B * L * W),
      window(B * win), observed(B * win);
  ag::Graph graph;
  Progress progress(opt.tty, tc.epochs, steps_per_epoch, B);
  int64_t steps_this_call = 0;
  double last_val = st.records.empty() ? std::nan("") : st.records.back().val_loss;
  if (!opt.resume) {
    // The starting point is a candidate too (update 0 of the early stopper, "epoch 0"):
    // with a least-squares shortcut or a zero head it is already a fair forecaster, and
    // when no training epoch beats it on validation, the run keeps it instead of an
    // epoch that only overfitted.
    last_val = validation_mse(net, val_windows, tc.eval_batch_size, tc.max_val_windows);
    spdlog::info("initial model: validation MSE {:.5f}", last_val);
    if (st.stopper.update(last_val)) model::save_checkpoint(model_path, net, meta);
  }

  while (st.epoch < tc.epochs && !st.stopper.should_stop()) {
    train_windows.shuffle(kernels::random_bits(tc.seed ^ kShuffleStream, st.epoch));
    auto t0 = std::chrono::steady_clock::now();
    int64_t samples = 0;
    for (; st.step_in_epoch < steps_per_epoch;) {
      const size_t n = train_windows.fill_batch(st.step_in_epoch, B, ctx.data(), tgt.data(),
                                                tmask.data(), cmask.data());
      for (size_t s = 0; s < n; ++s) {  // context then its future, one row per window
        std::memcpy(&window[s * win], &ctx[s * L * W], L * W * sizeof(float));
        std::memcpy(&window[s * win + L * W], &tgt[s * H * W], H * W * sizeof(float));
        std::memcpy(&observed[s * win], &cmask[s * L * W], L * W * sizeof(float));
        std::memcpy(&observed[s * win + L * W], &tmask[s * H * W], H * W * sizeof(float));
      }
      const auto nn = static_cast<int64_t>(n), lw = static_cast<int64_t>(L + H);
      const ag::Shape shape =
          W == 1 ? ag::Shape{nn, lw} : ag::Shape{nn, lw, static_cast<int64_t>(W)};
      graph.reset();
      ag::GraphScope scope(graph);
      params.zero_grad();
      const ag::Tensor x = ag::from_data(shape, window.data());
      const ag::Tensor mask = ag::from_data(shape, observed.data());
      const model::ForwardOptions fo{
          .training = true,
          .dropout_seed = kernels::random_bits(tc.seed ^ kDropoutStream, st.global_step)};
      const ag::Tensor loss = net.loss(x, mask, fo);
      const double lv = loss.item();
      const std::string where = "step " + std::to_string(st.global_step + 1) + " (epoch " +
                                std::to_string(st.epoch + 1) + ", batch " +
                                std::to_string(st.step_in_epoch + 1) + ")";
      if (!std::isfinite(lv))
        throw std::runtime_error("training diverged at " + where + ": the loss is " +
                                 std::to_string(lv) +
                                 "; no model was saved from this step. "
                                 "Try a lower train.lr or train.grad_clip, or check the data");
      graph.backward(loss);
      const float norm = ag::clip_grad_norm(
          params, tc.grad_clip > 0 ? static_cast<float>(tc.grad_clip) : INFINITY);
      if (!std::isfinite(norm))
        throw std::runtime_error("training diverged at " + where + ": the gradient norm is " +
                                 std::to_string(norm) +
                                 "; no model was saved from this step. "
                                 "Try a lower train.lr or train.grad_clip");
      adam.step(static_cast<float>(sched.lr_at(st.global_step)));
      st.epoch_loss_sum += lv;
      ++st.step_in_epoch, ++st.global_step, ++steps_this_call;
      samples += nn;
      progress.step(st.epoch + 1, st.step_in_epoch, st.epoch_loss_sum / st.step_in_epoch, last_val);
      const bool stop_now =
          (opt.interrupt && opt.interrupt->load()) ||
          (opt.interrupt_after_steps > 0 && steps_this_call >= opt.interrupt_after_steps);
      if (stop_now) {
        progress.finish();
        st.epoch_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        save_state();
        spdlog::warn(
            "interrupted at {}; saved a resumable checkpoint to {}. Continue with: attnfc "
            "train --out {} --resume",
            where, ckpt_path, opt.resume_dir.empty() ? opt.out_dir : opt.resume_dir);
        return {TrainResult::Status::kInterrupted,
                st.epoch,
                st.stopper.best_epoch(),
                st.stopper.best(),
                st.global_step,
                nullptr,
                steps_this_call};
      }
    }
    const double seconds =
        st.epoch_seconds +
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double val = validation_mse(net, val_windows, tc.eval_batch_size, tc.max_val_windows);
    last_val = val;
    EpochRecord rec{st.epoch + 1,
                    st.global_step,
                    st.epoch_loss_sum / std::max<int64_t>(1, st.step_in_epoch),
                    val,
                    sched.lr_at(st.global_step - 1),
                    seconds,
                    samples / std::max(seconds, 1e-9),
                    st.stopper.update(val)};
    st.records.push_back(rec);
    if (rec.best) model::save_checkpoint(model_path, net, meta);
    progress.epoch_done(rec, tc.patience > 0 ? tc.patience - st.stopper.bad_epochs() : -1);
    write_file_atomic(run_file(opt.out_dir, "train_log.csv"), format_train_log(st.records));
    if (st.stopper.should_stop())
      spdlog::info("early stopping: no improvement for {} epochs", tc.patience);
    ++st.epoch;
    st.step_in_epoch = 0, st.epoch_loss_sum = 0, st.epoch_seconds = 0;
    save_state();  // resumable from the next epoch
  }
  if (st.stopper.best_epoch() < 0)
    throw std::runtime_error("no epoch produced a finite validation loss; no model was saved");

  // Score the best epoch's model beside the baselines on the same windows.
  model::Checkpoint::read(model_path).load_into(net);
  TrainResult result{TrainResult::Status::kFinished,
                     st.epoch,
                     st.stopper.best_epoch(),
                     st.stopper.best(),
                     st.global_step,
                     nullptr,
                     steps_this_call};
  double total_seconds = 0;
  for (const auto& r : st.records) total_seconds += r.seconds;
  std::vector<std::string> parts{"val"};
  if (tc.evaluate_test) parts.push_back("test");
  std::string table;
  nlohmann::json metrics =
      evaluate_model({&net}, series, scaler, split, parts, tc.eval_batch_size, &table);
  spdlog::info("best epoch {} of {}:\n{}", result.best_epoch, result.epochs_run, table);
  metrics.update({{"best_epoch", result.best_epoch},
                  {"best_val_loss", result.best_val_loss},
                  {"epochs_run", result.epochs_run},
                  {"steps", result.steps},
                  {"parameters", net.num_parameters()},
                  {"train_seconds", total_seconds}});
  if (!st.linear_start.is_null()) metrics["linear_start"] = st.linear_start;
  write_file_atomic(metrics_path, metrics.dump(2) + "\n");
  result.metrics = metrics;
  return result;
}

}  // namespace attnfc::train
