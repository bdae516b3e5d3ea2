// Saving and range-checked loading of the loop position (loop_state.hpp).
#include "loop_state.hpp"

#include <cmath>
#include <limits>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"

namespace attnfc::train::detail {

nlohmann::json LoopState::to_json() const {
  nlohmann::json recs = nlohmann::json::array();
  for (const auto& r : records) recs.push_back(train::to_json(r));
  nlohmann::json j = {
      {"epoch", epoch},
      {"step_in_epoch", step_in_epoch},
      {"global_step", global_step},
      {"epoch_loss_sum", epoch_loss_sum},
      {"epoch_seconds", epoch_seconds},
      {"early_stopping", stopper.to_json()},
      {"records", recs},
      {"linear_start", linear_start},
      {"initial_val_loss",
       std::isfinite(initial_val_loss) ? nlohmann::json(initial_val_loss) : nlohmann::json()}};
  if (!warm_start.empty()) j["warm_start"] = warm_start;  // absent: a checkpoint as before
  return j;
}

namespace {

constexpr double kHuge = std::numeric_limits<double>::max();

// A key that must be present (ConfigSection's reads take a fallback when it is absent).
void require(const ConfigSection& s, const std::string& key) {
  if (!s.has(key)) throw InputError("key '" + s.key_path(key) + "' is missing");
}

}  // namespace

LoopState load_loop_state(const std::string& text, const std::string& source, int epochs,
                          int64_t steps_per_epoch, const EarlyStopping& stopper) {
  try {
    if (text.empty()) throw InputError("metadata 'train_state' is missing");
    const nlohmann::json j = parse_json_bounded(text, "train_state");
    ConfigSection s(j, "train_state");
    for (const char* key : {"epoch", "step_in_epoch", "global_step", "epoch_loss_sum",
                            "epoch_seconds", "early_stopping", "records"})
      require(s, key);
    LoopState st;
    st.epoch = static_cast<int>(s.get_int("epoch", 0, 0, epochs));
    st.step_in_epoch = s.get_int("step_in_epoch", 0, 0, steps_per_epoch);
    st.global_step = s.get_int("global_step", 0, 0, static_cast<int64_t>(epochs) * steps_per_epoch);
    st.epoch_loss_sum = s.get_number("epoch_loss_sum", 0, -kHuge, kHuge);
    st.epoch_seconds = s.get_number("epoch_seconds", 0, 0, kHuge);
    st.linear_start = s.has("linear_start") ? j.at("linear_start") : nlohmann::json();
    s.allow("linear_start");
    // Absent in checkpoints written before it was kept, null when not finite: unknown.
    if (s.has("initial_val_loss") && j.at("initial_val_loss").is_number())
      st.initial_val_loss = s.get_number("initial_val_loss", 0, 0, kHuge);
    s.allow("initial_val_loss");
    st.warm_start = s.get_string("warm_start", "");
    const nlohmann::json& stop = s.get_object("early_stopping");
    const nlohmann::json& recs = j.at("records");
    s.allow("records");
    s.finish();
    if (!recs.is_array() || recs.size() != static_cast<size_t>(st.epoch))
      throw InputError("key 'train_state.records': expected one record per finished epoch (" +
                       std::to_string(st.epoch) + ")");
    try {
      st.stopper = stopper;
      st.stopper.load_json(stop);
      for (const auto& r : recs) st.records.push_back(epoch_record_from_json(r));
    } catch (const nlohmann::json::exception& e) {
      throw InputError("key 'train_state.early_stopping' or 'train_state.records': " +
                       std::string(e.what()));
    }
    if (st.stopper.best_epoch() > st.epoch)
      throw InputError("key 'train_state.early_stopping.best_epoch': found " +
                       std::to_string(st.stopper.best_epoch()) + ", expected at most " +
                       std::to_string(st.epoch));
    return st;
  } catch (const InputError& e) {
    throw InputError(source + ": " + e.what() +
                     " (the checkpoint is damaged; delete it to train again from scratch)");
  }
}

}  // namespace attnfc::train::detail
