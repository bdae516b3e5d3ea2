#pragma once
// Whether the kept model earns its keep. A run keeps the epoch with the lowest
// validation MSE, and epoch 0 (the model before training: with a least-squares
// shortcut, exactly the NLinear inside the model) is a candidate too. When no
// training epoch beats it, or a baseline beats the kept model on validation, the
// tables must not pass the result off as the attention model's: metrics.json says
// what was kept, and `train` ends with a warning that says which and what to try.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnfc::train {

struct KeptModel {
  // The epoch kept (0 = the model before training); for an ensemble, member 1's.
  int epoch = 0;
  // Every member kept epoch 0 (one network: epoch == 0).
  bool untrained = false;
  // The model before training was the least-squares linear start (train.linear_init).
  bool linear_start = false;
  // The model before training was another run's model (a warm-started backtest fold).
  bool warm_start = false;
};

// The "kept" entry of metrics.json: {"epoch", "model": "trained" | "linear start" |
// "initial model" | "warm start"}.
nlohmann::json kept_entry(const KeptModel& kept);

// One-line warnings about the kept model, read from the "val" part of `metrics` (what
// Scorer::evaluate wrote): the kept model is its starting point, or a baseline (or the
// linear start) has a lower validation MSE. Empty when neither holds or there is no
// validation part.
std::vector<std::string> kept_model_warnings(const nlohmann::json& metrics, const KeptModel& kept);

}  // namespace attnfc::train
