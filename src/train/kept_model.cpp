// Whether the kept model earns its keep (kept_model.hpp).
#include "attnfc/train/kept_model.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace attnfc::train {

namespace {

// What to change when training adds nothing over the starting point.
constexpr const char* kWhatToTry =
    "try more train.epochs with train.warmup_steps, a lower train.lr, a smaller model "
    "(model.d_model, model.n_layers) or more dropout; or use the linear start as it is";

std::string format_mse(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5f", v);
  return buf;
}

}  // namespace

nlohmann::json kept_entry(const KeptModel& kept) {
  const char* what = "trained";
  if (kept.untrained)
    what = kept.warm_start ? "warm start" : kept.linear_start ? "linear start" : "initial model";
  return {{"epoch", kept.epoch}, {"model", what}};
}

std::vector<std::string> kept_model_warnings(const nlohmann::json& metrics, const KeptModel& kept) {
  std::vector<std::string> out;
  // A warm start that fine-tuning did not beat is a trained model still: only the
  // baselines' check below applies to it.
  if (kept.untrained && !kept.warm_start) {
    const char* start = kept.linear_start ? "its linear start (the least-squares NLinear inside "
                                            "the model)"
                                          : "the untrained initial model";
    out.push_back(std::string("the kept model is ") + start +
                  ": no training epoch beat it on validation, so the attention layers add "
                  "nothing here; " +
                  kWhatToTry);
    return out;
  }
  if (!metrics.contains("val")) return out;
  const nlohmann::json& models = metrics["val"]["models"];
  const double own = models["attnfc"]["scaled"]["mse"].get<double>();
  std::string best_name;
  double best = own;
  for (auto it = models.begin(); it != models.end(); ++it) {
    if (it.key() == "attnfc") continue;
    const double v = it.value()["scaled"]["mse"].get<double>();
    if (v < best) best = v, best_name = it.key();
  }
  if (!best_name.empty())
    out.push_back("on validation the kept model (epoch " + std::to_string(kept.epoch) + ", MSE " +
                  format_mse(own) + ") loses to " + best_name + " (MSE " + format_mse(best) +
                  "); " + kWhatToTry);
  return out;
}

}  // namespace attnfc::train
