#pragma once
// PatchTransformer: a decoder-only causal Transformer over non-overlapping patches
// (docs/MODEL.md states it exactly; scripts/torch_reference.py rebuilds it).
//
// A window of context_length = N * P steps becomes N tokens. Position n sees
// patches 0..n only and predicts the H values that follow patch n, so one window
// yields N training targets and no position ever sees its future.
//
// Shapes (B windows, L = context_length, P = patch_len, N = L / P, H = horizon,
// C = token channels: 1 when channel-independent, config.channels when mixed):
//   samples              base/sample.hpp: context [B, L, C], target [B, H, C], uint8 masks
//   predictions          [B, N, H * C]   position n, row-major [H, C]
// Values are in the data layer's (already scaled) units; the model normalises
// internally (config.norm) and returns predictions in the same units.
// observed: 1 = observed, 0 = missing. A missing input value is replaced by the
// normalisation mean and flagged to the embedding; a missing target is left out
// of the loss.
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/autograd/tensor.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/nn/attention.hpp"
#include "attnfc/nn/layers.hpp"

namespace attnfc::model {

// What forecast throws when the network's output for a window is NaN or infinite (inputs
// far outside what it was trained on, or weights that are not finite): window() is the
// window's index in the call, so that a caller can name the series.
class NonFiniteForecast : public std::runtime_error {
 public:
  explicit NonFiniteForecast(int64_t window)
      : std::runtime_error("forecast: the model produced a non-finite value for window " +
                           std::to_string(window) + " (diverged weights?)"),
        window_(window) {}
  int64_t window() const { return window_; }

 private:
  int64_t window_;
};

// What forecast throws when a window's context holds no observed value at all: an input
// error (exit 2), with the window's index in the call so that a caller can name the series
// and, for a channel-independent model, the column (see train::model_forecaster).
class UnobservedContext : public InputError {
 public:
  UnobservedContext(int64_t window, int64_t steps, int64_t channel = -1)
      : InputError("forecast: window " + std::to_string(window) +
                   (channel >= 0 ? ", channel " + std::to_string(channel) : std::string()) +
                   " has no observed value in its last " + std::to_string(steps) +
                   " steps; expected at least one"),
        window_(window),
        steps_(steps),
        channel_(channel) {}
  int64_t window() const { return window_; }
  int64_t steps() const { return steps_; }
  int64_t channel() const { return channel_; }  // -1: every channel of the window

 private:
  int64_t window_, steps_, channel_;
};

namespace detail {
struct Prepared;
struct SeriesView;
class CrossAttentionDecoder;
}  // namespace detail

struct ForwardOptions {
  bool training = false;      // dropout on when true
  uint64_t dropout_seed = 0;  // vary per step (e.g. hash of run seed and step)
};

class PatchTransformer {
 public:
  // Registers every parameter in `params` under the names of docs/MODEL.md and
  // initialises them deterministically from `seed`. Validates the config.
  // `params` must outlive the model.
  PatchTransformer(const ModelConfig& config, ag::ParameterSet& params, uint64_t seed);

  const ModelConfig& config() const { return config_; }
  ag::ParameterSet& parameters() const { return *params_; }

  // Per-position predictions [B, N, H*C] ([B, 1, H*C] from the cross-attention decoder)
  // for the contexts of `batch` (its targets are not read) on the current graph (GraphScope
  // required; under NoGradScope nothing is recorded).
  ag::Tensor forward(const SampleBatch& batch, const ForwardOptions& options = {}) const;

  // Training loss (one element) for samples of context L and target H (base/sample.hpp):
  // position n's targets are steps [(n+1)P, (n+1)P + H) of the context followed by its
  // target. Averaged over all positions or only the last (config.loss_positions), over
  // counted targets only. Throws InputError if a batch has no counted target at all.
  ag::Tensor loss(const SampleBatch& batch, const ForwardOptions& options = {}) const;

  // Inference from the last position (no tape; uses its own scratch graph).
  // context: row-major [batch, length, C]; observed same shape or nullptr (all
  // observed). length may differ from context_length: a longer context uses its
  // last L steps, a shorter one is padded in front with unobserved steps.
  // horizon 0 means config.horizon; beyond it the forecast is rolled out
  // autoregressively (predictions appended to the context, last L steps kept).
  // Returns row-major [batch, horizon, C]. Throws InputError on a non-finite input
  // or when the whole context is unobserved; never returns NaN (throws instead).
  // `known`: what the cross-attention decoder reads for each window (base/sample.hpp;
  // its known features cover config.horizon steps, so such a model forecasts at most H).
  // `levels` (optional, quantile models): every level, [batch, horizon, Q, C], strictly
  // increasing along Q; the return value is level 0.5 (a rollout feeds it back).
  std::vector<float> forecast(const float* context, const uint8_t* observed, int64_t batch,
                              int64_t length, int horizon = 0, const KnownInputs& known = {},
                              std::vector<float>* levels = nullptr) const;
  // One channel-independent series (C == 1): the last values -> [horizon].
  std::vector<float> forecast(std::span<const float> context, int horizon = 0) const;

  // Attention weights of one window (batch 1) for inspection: one entry per layer,
  // each row-major [n_heads, N, N] (row = query position; causal, so upper triangle 0).
  std::vector<std::vector<float>> attention_maps(const float* context, const uint8_t* observed,
                                                 int64_t length) const;

  // Number of trainable values.
  int64_t num_parameters() const;

  // For the quantile start (quantile models, train/quantile_start.hpp). The errors of the
  // median at the last position of every sample of `batch` (which must carry targets), in
  // the head's units: (y - level 0.5) / sigma, [count, H, C], NaN where a target does not
  // count. Inference only, on its own scratch graph.
  std::vector<float> median_errors(const SampleBatch& batch) const;
  // Sets the head's bias so that, while its weight is zero, neighbouring levels of step k and
  // channel c sit gaps[(k Q + j) C + c] apart (head units): level j > m that far above level
  // j - 1, level j < m that far below level j + 1. Entry m is not read: the median's bias
  // stays 0, so the point forecast is unchanged. gaps is [H, Q, C], or [1, Q, C] for the
  // cross-attention decoder (one head for every step); each gap positive and finite.
  void set_level_gaps(const std::vector<double>& gaps);

 private:
  struct Block {
    nn::LayerNorm norm1, norm2;
    nn::MultiHeadAttention attn;
    nn::Linear ff_in, ff_out;
  };
  // [B, N_out, Q * H, C] predictions, level-major (N_out = 1 when last_only; Q = 1 without
  // quantiles).
  ag::Tensor predict_positions(const detail::SeriesView& view, const ForwardOptions& options,
                               bool last_only, std::vector<ag::Tensor>* attention) const;
  ag::Tensor forward_prepared(const detail::Prepared& inputs, const ForwardOptions& options,
                              bool last_only, std::vector<ag::Tensor>* attention) const;
  bool head_is_zero() const;
  ag::Tensor bias_only_head(int64_t B, int64_t n) const;
  // The embedding and the blocks: [B, N, d] ([B, 1, d] when last_block_short: the final
  // block at the last position only, its keys and values at every position).
  ag::Tensor encode(const detail::Prepared& inputs, const ForwardOptions& options,
                    bool last_block_short, std::vector<ag::Tensor>* attention) const;
  ag::Tensor loss_on(const detail::SeriesView& series, const ForwardOptions& options) const;
  // quantile_positions "last": the median's pinball at every position, the other levels' at
  // the last; targets and mask [B, N, H, C].
  ag::Tensor median_everywhere_loss(const detail::Prepared& inputs, const ag::Tensor& targets,
                                    const ag::Tensor& mask, const ForwardOptions& options) const;
  // raw [B, n_out, Q * H * C] -> predictions [B, n_out, Q * H, C] (Q levels of the head: the
  // config's, or 1 for the median alone).
  ag::Tensor head_output(ag::Tensor raw, const detail::Prepared& in, int64_t B, int64_t n_out,
                         int64_t Q) const;
  // The point forecast (level 0.5) of predictions [B, n, Q * H, C] -> [B, n, H, C].
  ag::Tensor point_of(const ag::Tensor& pred) const;

  ModelConfig config_;
  ag::ParameterSet* params_;
  nn::Linear embed_, embed_hidden_, embed_skip_;  // linear uses embed_ only
  ag::Tensor pos_embedding_;                      // [N, d] when learned
  std::vector<float> sinusoid_;                   // [N, d] when sinusoidal
  std::vector<Block> blocks_;
  nn::LayerNorm final_norm_;
  // "cross_attention" only (shared: the decoder holds tensor handles, like the members here).
  std::shared_ptr<const detail::CrossAttentionDecoder> decoder_;
  nn::Linear head_;  // [H * C, d] for the linear decoder, [C, d] per step for cross-attention
  nn::Linear linear_skip_;       // weight [H, linear_lookback], no bias: see below
  ag::Tensor linear_skip_bias_;  // [H], added after de-normalisation (data units)
};

}  // namespace attnfc::model
