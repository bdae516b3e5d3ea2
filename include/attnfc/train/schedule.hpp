#pragma once
// Learning-rate schedules and early stopping. Both are pure functions of their
// inputs (step number; the sequence of validation losses), so a resumed run
// recomputes exactly what an uninterrupted one would have.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/base/enum_names.hpp"

namespace attnfc::train {

enum class ScheduleKind { kConstant, kCosine, kStep };  // "constant" | "cosine" | "step"

struct LrSchedule {
  ScheduleKind kind = ScheduleKind::kCosine;
  double base_lr = 1e-3;
  double min_lr = 0.0;       // cosine floor
  int64_t warmup_steps = 0;  // linear ramp from base_lr / warmup_steps to base_lr
  int64_t total_steps = 1;   // cosine decays over [warmup_steps, total_steps)
  int64_t step_size = 1;     // step: multiply by gamma every step_size steps (after warm-up)
  double gamma = 0.5;

  // Learning rate for optimiser step `step` (0-based).
  double lr_at(int64_t step) const;
};

class EarlyStopping {
 public:
  // patience 0 disables stopping (every epoch runs; the best epoch is still tracked).
  explicit EarlyStopping(int patience = 0, double min_delta = 0.0)
      : patience_(patience), min_delta_(min_delta) {}
  // Records one validation loss; returns true when it is the best so far
  // (better than the previous best by more than min_delta). A NaN is never best.
  bool update(double val_loss);
  bool should_stop() const { return patience_ > 0 && bad_epochs_ >= patience_; }
  double best() const { return best_; }
  int best_epoch() const { return best_epoch_; }  // 0-based, -1 before any update
  int bad_epochs() const { return bad_epochs_; }

  nlohmann::json to_json() const;
  void load_json(const nlohmann::json& j);

 private:
  int patience_;
  double min_delta_;
  double best_ = 0;
  int best_epoch_ = -1, epochs_ = 0, bad_epochs_ = 0;
};

}  // namespace attnfc::train

template <>
struct attnfc::EnumNames<attnfc::train::ScheduleKind> {
  static constexpr std::array<const char*, 3> words{"constant", "cosine", "step"};
};
