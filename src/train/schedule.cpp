#include "attnfc/train/schedule.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace attnfc::train {

double LrSchedule::lr_at(int64_t step) const {
  if (warmup_steps > 0 && step < warmup_steps)
    return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  const int64_t after = step - warmup_steps;
  switch (kind) {
    case ScheduleKind::kConstant:
      return base_lr;
    case ScheduleKind::kStep:
      return base_lr *
             std::pow(gamma, static_cast<double>(after / std::max<int64_t>(1, step_size)));
    case ScheduleKind::kCosine: {
      const int64_t span = std::max<int64_t>(1, total_steps - warmup_steps);
      const double progress = std::min(1.0, static_cast<double>(after) / static_cast<double>(span));
      return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + std::cos(M_PI * progress));
    }
  }
  return base_lr;
}

bool EarlyStopping::update(double val_loss) {
  const int epoch = epochs_++;
  const bool improved = !std::isnan(val_loss) && (best_epoch_ < 0 || val_loss < best_ - min_delta_);
  if (improved) {
    best_ = val_loss;
    best_epoch_ = epoch;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  return improved;
}

nlohmann::json EarlyStopping::to_json() const {
  return {{"best", best_},
          {"best_epoch", best_epoch_},
          {"epochs", epochs_},
          {"bad_epochs", bad_epochs_}};
}

void EarlyStopping::load_json(const nlohmann::json& j) {
  best_ = j.at("best").get<double>();
  best_epoch_ = j.at("best_epoch").get<int>();
  epochs_ = j.at("epochs").get<int>();
  bad_epochs_ = j.at("bad_epochs").get<int>();
}

}  // namespace attnfc::train
