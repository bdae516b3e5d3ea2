#pragma once
// The one layout of a batch of forecasting samples, from the window sampler (data) to the
// loss and the forecast (model): training, validation, evaluate and predict all pass it.
// Each sample is a context of L steps followed by its target of H steps, W values a step
// (W = 1 for a channel-independent sample, the number of channels for a mixed one):
//   context           [count, L, W]  values in the model's (scaled) units
//   context_observed  [count, L, W]  1 = observed, 0 = missing (its value is meaningless)
//   target            [count, H, W]  values; may be null when there is no future (predict)
//   target_observed   [count, H, W]  1 = counts in the loss and the metrics, 0 = left out
// Missing values are flagged in one encoding, uint8 0/1, everywhere after the CSV reader.
// The data and model layers both use it, so it lives below them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnfc {

// How a multichannel series becomes samples (config key model.channel_mode).
enum class ChannelMode {
  kIndependent,  // "independent": every channel is its own univariate sample (shared weights)
  kMixed,        // "mixed": one sample holds all channels at each time step
};

// What is known about a sample beyond its own values: read only by the cross-attention
// decoder (model.decoder "cross_attention"), null/0 otherwise.
//   known           [count, H, K]  future-known features at the H target steps (future
//                                  covariates in scaled units, calendar sin/cos, holiday flags)
//   static_numeric  [count, S]     the sample's series' numeric static values (standardised)
//   static_codes    [count, G]     its categorical static values: 1..V, 0 = unseen category
struct KnownInputs {
  int64_t known_width = 0;  // K
  const float* known = nullptr;
  int64_t numeric_width = 0;  // S
  const float* static_numeric = nullptr;
  int64_t category_width = 0;  // G
  const int32_t* static_codes = nullptr;

  // The same inputs from sample `first` on (pointer arithmetic only).
  KnownInputs from(int64_t first, int64_t horizon) const {
    KnownInputs k = *this;
    if (known) k.known = known + first * horizon * known_width;
    if (static_numeric) k.static_numeric = static_numeric + first * numeric_width;
    if (static_codes) k.static_codes = static_codes + first * category_width;
    return k;
  }
};

struct SampleBatch {
  int64_t count = 0;    // samples in this batch (the last batch of an epoch may be short)
  int64_t context = 0;  // L
  int64_t horizon = 0;  // H
  int64_t width = 1;    // W
  const float* context_values = nullptr;
  const uint8_t* context_observed = nullptr;  // nullptr = all observed
  const float* target_values = nullptr;
  const uint8_t* target_observed = nullptr;  // nullptr = all count
  KnownInputs known;
};

// Buffers for up to `capacity` samples, allocated once (a training step allocates nothing).
struct SampleBuffers {
  int64_t capacity = 0, context = 0, horizon = 0, width = 1;
  std::vector<float> context_values, target_values;
  std::vector<uint8_t> context_observed, target_observed;
  // The KnownInputs of each sample; empty when the model reads none (see reserve_known).
  int64_t known_width = 0, numeric_width = 0, category_width = 0;
  std::vector<float> known, static_numeric;
  std::vector<int32_t> static_codes;

  SampleBuffers() = default;
  SampleBuffers(int64_t capacity_, int64_t context_, int64_t horizon_, int64_t width_)
      : capacity(capacity_),
        context(context_),
        horizon(horizon_),
        width(width_),
        context_values(static_cast<size_t>(capacity_ * context_ * width_)),
        target_values(static_cast<size_t>(capacity_ * horizon_ * width_)),
        context_observed(context_values.size()),
        target_observed(target_values.size()) {}

  // Room for K known features a target step, S numeric and G categorical static values a
  // sample (allocated here, once, like the rest).
  void reserve_known(int64_t K, int64_t S, int64_t G) {
    known_width = K;
    numeric_width = S;
    category_width = G;
    known.assign(static_cast<size_t>(capacity * horizon * K), 0.0f);
    static_numeric.assign(static_cast<size_t>(capacity * S), 0.0f);
    static_codes.assign(static_cast<size_t>(capacity * G), 0);
  }

  // A view of the first `count` samples (count <= capacity).
  SampleBatch view(int64_t count) const {
    KnownInputs k{known_width,    known_width ? known.data() : nullptr,
                  numeric_width,  numeric_width ? static_numeric.data() : nullptr,
                  category_width, category_width ? static_codes.data() : nullptr};
    return {count,
            context,
            horizon,
            width,
            context_values.data(),
            context_observed.data(),
            target_values.data(),
            target_observed.data(),
            k};
  }
};

}  // namespace attnfc
