#pragma once
// The model's non-differentiable front and back ends: per-position normalisation
// statistics, token features and loss targets. They are data, not parameters, so
// they are computed in plain loops (statistics in double) into arena tensors.
#include <cstdint>

#include "attnfc/autograd/tensor.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/model/config.hpp"

namespace attnfc::model::detail {

// A [B, T, C] series given as raw row-major values and an optional observed mask
// (nullptr = all observed; uint8 0/1 as in base/sample.hpp). A sample's context and
// its target sit in two buffers, so the series is split at `split` time steps.
struct SeriesView {
  int64_t batch = 0, length = 0, channels = 1;
  const float* head = nullptr;             // [B, split, C]
  const uint8_t* head_observed = nullptr;  // or nullptr
  const float* tail = nullptr;             // [B, length - split, C], null if split == length
  const uint8_t* tail_observed = nullptr;
  int64_t split = 0;
  KnownInputs known;  // what the cross-attention decoder reads beside the values

  float value(int64_t b, int64_t t, int64_t c) const {
    return t < split ? head[(b * split + t) * channels + c]
                     : tail[(b * (length - split) + (t - split)) * channels + c];
  }
  bool observed(int64_t b, int64_t t, int64_t c) const {
    const uint8_t* m = t < split ? head_observed : tail_observed;
    if (!m) return true;
    return t < split ? m[(b * split + t) * channels + c] != 0
                     : m[(b * (length - split) + (t - split)) * channels + c] != 0;
  }
};

struct Prepared {
  ag::Tensor features;  // [B, N, 2 P C]: normalised patch values, then observed flags
  ag::Tensor scale;     // [B, N_out, 1, C]: sigma of each output position
  ag::Tensor offset;    // [B, N_out, 1, C]: last observed value (delta) or mu (value)
  // [B, N_out, K] with K = linear_lookback > 0 (C == 1): (x_t - offset) / scale for the
  // K steps ending at the position's last step, oldest first; 0 before the window
  // start and where unobserved (0 means "equal to the offset").
  ag::Tensor lookback;
  KnownInputs known;  // passed through from the SeriesView
};

// Where the values of window b, level j, step h sit in one position's predictions
// [B, 1, Q H, C] (level-major, as PatchTransformer::head_output writes them): its C
// channels start at at(b, j, h).
struct LevelMajor {
  int64_t Q, H, C;
  int64_t at(int64_t b, int64_t j, int64_t h) const { return ((b * Q + j) * H + h) * C; }
};

// Builds the features of the first config.context_length steps of `series`
// (in the current graph's arena). last_only: scale/offset only for position N-1.
Prepared prepare_inputs(const ModelConfig& config, const SeriesView& series, bool last_only);

// Targets and mask [B, N_out, H, C] from a series of context_length + horizon steps:
// position n's targets are steps E .. E + H - 1 with E = config.patch_end(n) (n S + P). Returns the
// number of observed targets (the loss is undefined when it is 0). The series view of a sample
// batch: its context, followed by its target when with_target. Throws when the batch is not shaped
// for this model.
SeriesView view_of(const SampleBatch& batch, const ModelConfig& cfg, bool with_target);

int64_t prepare_targets(const ModelConfig& config, const SeriesView& series, bool last_only,
                        ag::Tensor* targets, ag::Tensor* mask);

// Sinusoidal positional encoding [positions, d]: pe[n, 2i] = sin(n / 10000^(2i/d)),
// pe[n, 2i+1] = cos(n / 10000^(2i/d)).
void sinusoidal_table(int positions, int d, float* out);

}  // namespace attnfc::model::detail
