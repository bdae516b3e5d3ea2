// The refit of phase 7 (phases.hpp): once validation has chosen the kept model, it and its
// least-squares start learn from the validation rows too.
//
// Why: a split keeps the rows just before the forecast origin out of training, to choose
// the epoch, the ridge and the interval corrections; they are also each series' most recent
// behaviour. On M4 Hourly a 504-hour network whose training rows ended 48 hours later
// forecast the following 48 hours with an OWA 5% lower (docs/RESULTS.md). The refit keeps
// every choice made on validation and moves only the weights; it reads no test row.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "attnfc/autograd/optim.hpp"
#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/train/linear_init.hpp"
#include "phases.hpp"

namespace attnfc::train::detail {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kRefitShuffleStream = 0x726566697453ULL;  // not the epochs' stream

// Each series' training part extended by its validation targets (val.end: the rows up to
// the last validation target; the test targets come after).
std::vector<data::Split> with_validation_rows(const data::PanelSplit& split) {
  std::vector<data::Split> out = split.splits;
  for (data::Split& sp : out) sp.train.end = sp.val.end;
  return out;
}

// Fresh AdamW moments: the kept epoch's were not saved, and the last epoch's belong to
// other weights.
void reset_moments(ag::AdamW& adam) {
  std::vector<ag::StateTensor> state = adam.state();
  for (ag::StateTensor& s : state) std::fill(s.values.begin(), s.values.end(), 0.0f);
  adam.load_state(state);
}

// The least-squares start fitted again on the longer rows, at the ridge validation chose.
// Returns its fitted windows (0: the run has no least-squares start).
int64_t refit_linear_start(Training& t, const std::vector<data::Split>& splits,
                           const std::string& selected_start, const std::string& start_out) {
  if (t.state.linear_start.is_null() || !fs::exists(selected_start)) return 0;
  model::Checkpoint::read(selected_start).load_into(t.net);
  const data::TimeSeries& s = t.data.series;
  const std::vector<float> values = scaled_with_gaps(s, t.data.split, t.data.scaler);
  const LinearStart ls = init_linear_shortcut(
      t.net, {values.data(), static_cast<int64_t>(s.rows()), static_cast<int>(s.num_channels())},
      splits, t.state.linear_start.at("ridge").get<double>());
  auto meta = t.meta;
  meta["epoch"] = "0";
  meta["refit"] = nlohmann::json{{"linear_start_windows", ls.windows}}.dump();
  model::save_checkpoint(start_out, t.net, meta);
  return ls.windows;
}

}  // namespace

nlohmann::json refit_selected(Training& t, const std::string& selected,
                              const std::string& selected_start, const std::string& start_out,
                              const TrainOptions& opt) {
  const TrainConfig& tc = t.config.train;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<data::Split> splits = with_validation_rows(t.data.split);
  const int64_t start_windows = refit_linear_start(t, splits, selected_start, start_out);

  data::WindowSampler windows(t.data.scorer->scaled(), train_parts(splits),
                              static_cast<size_t>(t.config.model.context_length),
                              static_cast<size_t>(t.config.model.horizon),
                              t.config.model.channel_mode);
  int64_t per_epoch = static_cast<int64_t>(windows.num_batches(tc.batch_size));
  if (tc.max_steps_per_epoch > 0) per_epoch = std::min(per_epoch, tc.max_steps_per_epoch);
  const auto total = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(tc.refit_epochs * static_cast<double>(per_epoch))));
  // Cosine from refit_lr to min_lr over the refit's steps, as the epochs' schedule falls.
  const LrSchedule lr{
      ScheduleKind::kCosine, tc.refit_lr, std::min(tc.min_lr, tc.refit_lr), 0, total, 1, 0.5};

  model::Checkpoint::read(selected).load_into(t.net);
  reset_moments(t.adam);
  std::swap(t.train_windows, windows);  // train_step reads t.train_windows
  const LoopState saved = t.state;
  LoopState& st = t.state;
  double loss_sum = 0;
  int64_t samples = 0;
  try {
    for (int64_t k = 0; k < total; ++k) {
      if (k % per_epoch == 0) {
        const uint64_t seed = kernels::random_bits(tc.seed ^ kRefitShuffleStream, k / per_epoch);
        if (tc.series_weighting == "series")
          t.train_windows.draw_by_series(seed);
        else
          t.train_windows.shuffle(seed);
      }
      if (opt.interrupt && opt.interrupt->load()) throw ScoringInterrupted();
      st.step_in_epoch = k % per_epoch;
      st.global_step = saved.global_step + k;  // dropout streams the epochs did not draw
      t.threads.begin_step();
      loss_sum += train_step(t, samples, lr.lr_at(k));
      t.threads.end_step();
    }
  } catch (...) {
    std::swap(t.train_windows, windows);
    t.state = saved;
    throw;
  }
  std::swap(t.train_windows, windows);
  t.state = saved;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info(
      "refit on training and validation rows: {} steps over {} windows, lr {:g}, loss {:.5f}, "
      "{:.1f} s",
      total, windows.num_windows(), tc.refit_lr, loss_sum / static_cast<double>(total), seconds);
  nlohmann::json out = {{"epochs", tc.refit_epochs},
                        {"steps", total},
                        {"windows", windows.num_windows()},
                        {"lr", tc.refit_lr},
                        {"train_loss", loss_sum / static_cast<double>(total)},
                        {"seconds", seconds}};
  if (start_windows > 0) out["linear_start_windows"] = start_windows;
  return out;
}

std::string refit_metadata(const nlohmann::json& refit_entry) {
  nlohmann::json recorded = refit_entry;
  recorded.erase("seconds");
  return recorded.dump();
}

void keep_selected(const RunPaths& paths) {
  const std::pair<std::string, std::string> copies[] = {
      {paths.model(), paths.selected()}, {paths.linear_start(), paths.selected_linear_start()}};
  for (const auto& [from, to] : copies)
    if (fs::exists(from) && !fs::exists(to))
      write_file_atomic(to, read_input_file(from, uint64_t{1} << 36, "model file"));
}

void evaluate_part(Scorer& scorer, const std::string& part, const Members& model,
                   const Members& start, std::string* table, const std::atomic<bool>* stop,
                   const Calibration* cal, nlohmann::json& metrics) {
  const std::vector<std::string> parts = scorer.evaluated_parts();
  if (std::find(parts.begin(), parts.end(), part) == parts.end()) return;
  scorer.set_evaluated_parts({part});
  nlohmann::json scored;
  try {
    scored = scorer.evaluate(model, start, table, stop, nullptr, cal);
  } catch (...) {
    scorer.set_evaluated_parts(parts);
    throw;
  }
  scorer.set_evaluated_parts(parts);
  if (metrics.is_null())
    metrics = std::move(scored);
  else
    metrics[part] = std::move(scored[part]);
}

}  // namespace attnfc::train::detail
