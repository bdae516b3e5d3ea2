#pragma once
// The members' forecasts of one batch, summed per sample (train::model_forecaster's inner
// loop): an ensemble's mean in the members' order, members that cannot read a sample's
// context abstaining from it (loaded_model.hpp).
#include <cstdint>
#include <vector>

#include "attnfc/base/sample.hpp"
#include "attnfc/train/loaded_model.hpp"

namespace attnfc::train::detail {

// Per sample ([samples, L, width] contexts): the sum of the point forecasts and, when asked
// for, of the levels, over the members that forecast it, in the members' order (as the
// mean's bits need), and how many did.
struct MemberSums {
  std::vector<float> point;   // [samples, H, width]
  std::vector<float> levels;  // [samples, H, Q, width] when asked for
  std::vector<int> count;     // [samples]
};

// A shorter member (train.ensemble_contexts) abstains from the samples it sees no observed
// value of, rather than failing the batch: it forecasts a copy of the batch in which their
// last step reads 0 in every channel, and that forecast is dropped. Member 1 reads the
// whole context, so every sample keeps at least its forecast, or fails as a single
// network would; with nan_for_unreadable it abstains too, and the sample counts no member.
MemberSums sum_members(const Members& members, const float* values, const uint8_t* observed,
                       int64_t samples, int L, int width, int H, const KnownInputs& inputs,
                       bool want_levels, bool nan_for_unreadable);

// Each sample's sums divided by the number of members that forecast it (NaN for none).
void divide_by_count(std::vector<float>& v, const std::vector<int>& count);

// The members' mean levels, reordered into the window layout [batch, H, Q, C] (a
// channel-independent sample b * C + c is window b's channel c).
void window_levels(const std::vector<float>& mean, int Q, int H, bool mixed, int64_t batch, int C,
                   std::vector<float>& out);

}  // namespace attnfc::train::detail
