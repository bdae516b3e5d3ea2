// What plot reads of the run besides the forecasts (plot_data.hpp): the training curves
// with what metrics.json records of epoch 0 and the kept epoch, and one window's attention.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/base/json_parse.hpp"
#include "attnfc/train/run_folder.hpp"
#include "commands.hpp"
#include "plot_data.hpp"

namespace attnfc::cli {

namespace {

namespace fs = std::filesystem;

// The logs to draw: --log, the run's train_log.csv, or an ensemble's members' (label
// suffix, path).
std::vector<std::pair<std::string, std::string>> training_logs(const PlotOptions& a,
                                                               const train::LoadedModel& lm) {
  const train::RunPaths run{fs::path(a.model).parent_path().string()};
  if (!a.log.empty()) return {{"", a.log}};
  if (lm.networks.size() == 1 || fs::exists(run.train_log())) return {{"", run.train_log()}};
  std::vector<std::pair<std::string, std::string>> out;
  for (int k = 1; k <= static_cast<int>(lm.networks.size()); ++k)
    out.emplace_back(", member " + std::to_string(k), run.member(k).train_log());
  return out;
}

// Epoch 0 and the kept epoch from the metrics.json beside a log (a finished run): the kept
// epoch is best_epoch; epoch 0's validation MSE is the linear start's (linear_start.val_mse)
// or, when the untrained model was kept, best_val_loss.
void read_metrics(TrainingCurve& c, const fs::path& metrics) {
  try {
    const nlohmann::json j = parse_json_bounded(
        read_input_file(metrics.string(), 64 << 20, "metrics.json"), metrics.string());
    if (j.contains("best_epoch") && j["best_epoch"].is_number_integer())
      c.kept_epoch = j["best_epoch"].get<int>();
    const nlohmann::json start = j.value("linear_start", nlohmann::json());
    if (j.value("initial_val_loss", nlohmann::json()).is_number()) {  // every run since then
      c.epoch0_val = j["initial_val_loss"].get<double>();
      c.epoch0_what = start.is_object() ? "linear start" : "initial model";
    } else if (start.is_object() && start.value("val_mse", nlohmann::json()).is_number()) {
      c.epoch0_val = start["val_mse"].get<double>();
      c.epoch0_what = "linear start";
    } else if (c.kept_epoch == 0 && j.value("best_val_loss", nlohmann::json()).is_number()) {
      c.epoch0_val = j["best_val_loss"].get<double>();
      c.epoch0_what = "initial model";
    } else {
      c.note =
          "epoch 0 not marked: this run's metrics.json predates initial_val_loss and it had "
          "no linear start (model.linear_lookback) and kept a trained epoch";
    }
  } catch (const InputError& e) {
    c.note = std::string("epoch 0 and the kept epoch not marked: ") + e.what();
  }
}

TrainingCurve read_curve(const std::string& suffix, const std::string& log, int model_epoch) {
  TrainingCurve c;
  c.suffix = suffix;
  c.log_path = log;
  c.records = train::parse_train_log(read_input_file(log, 256 << 20, "training log"), log);
  const fs::path metrics = fs::path(log).parent_path() / "metrics.json";
  if (fs::exists(metrics)) {
    read_metrics(c, metrics);
  } else {
    // A run still training (or a log copied alone): the model file says which epoch it
    // holds; else the last epoch the log marks as best.
    c.kept_epoch = model_epoch;
    for (const train::EpochRecord& r : c.records)
      if (model_epoch < 0 && r.best) c.kept_epoch = r.epoch;
    c.note = "no metrics.json beside " + log + ": epoch 0 is not recorded";
  }
  return c;
}

}  // namespace

std::vector<TrainingCurve> gather_curves(const PlotOptions& a, const train::LoadedModel& lm) {
  std::vector<TrainingCurve> out;
  const auto logs = training_logs(a, lm);
  for (const auto& [suffix, log] : logs) {
    if (!fs::exists(log)) continue;
    // The model file's epoch is the kept one of its own run's log only, not of a --log
    // from elsewhere.
    const fs::path folder = fs::absolute(log).parent_path();
    const bool own =
        logs.size() == 1 && fs::equivalent(folder, fs::absolute(a.model).parent_path());
    out.push_back(read_curve(suffix, log, own ? lm.epoch : -1));
  }
  return out;
}

AttentionView gather_attention(const train::LoadedModel& lm, const data::TimeSeries& scaled,
                               size_t origin, long window_index) {
  const model::ModelConfig& cfg = lm.config();
  const int L = lm.context(), C = static_cast<int>(scaled.num_channels());
  // A channel-independent model reads each channel alone: the first channel's window; a
  // mixed one reads them all.
  const bool mixed = cfg.channel_mode == ChannelMode::kMixed;
  const int width = mixed ? C : 1;
  std::vector<float> context(static_cast<size_t>(L) * width);
  std::vector<uint8_t> observed(context.size());
  for (int k = 0; k < L; ++k)
    for (int c = 0; c < width; ++c) {
      const size_t src = (origin - L + k) * C + c, dst = static_cast<size_t>(k) * width + c;
      observed[dst] = scaled.observed[src];
      context[dst] = observed[dst] ? scaled.values[src] : 0.0f;
    }
  AttentionView v;
  v.maps = lm.networks.front()->attention_maps(context.data(), observed.data(), L);
  v.n = cfg.num_patches(), v.heads = cfg.n_heads, v.patch_len = cfg.patch_len;
  v.stride = cfg.stride();
  v.about = "window " + std::to_string(window_index) + " (forecast from " +
            scaled.format_time(scaled.timestamps[origin]) + ")" +
            (mixed ? ", all channels" : ", channel " + scaled.channels[0]) +
            (lm.networks.size() > 1
                 ? ", member 1 of the ensemble of " + std::to_string(lm.networks.size())
                 : std::string());
  return v;
}

}  // namespace attnfc::cli
