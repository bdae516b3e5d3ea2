#pragma once
// ModelConfig: every architecture choice of the patch Transformer, read from the
// "model" section of a run config (docs/CONFIG.md documents each key; the JSON
// schema is configs/schema.json). Defaults below are the documented defaults.
// Parsed with the strict reader of base/json_config.hpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/base/json_config.hpp"
#include "attnfc/base/sample.hpp"  // ChannelMode

namespace attnfc::model {

enum class InputNorm { kNone, kInstance, kCausal };              // "none" | "instance" | "causal"
enum class PatchEmbedding { kLinear, kResidualMlp };             // "linear" | "mlp"
enum class PositionalEncoding { kSinusoidal, kLearned, kNone };  // "sinusoidal"|"learned"|"none"
enum class HeadTarget { kValue, kDeltaFromLast };                // "value" | "delta"
enum class LossPositions { kAll, kLast };                        // "all" | "last"
enum class LossKind { kMse, kMae, kHuber };                      // "mse" | "mae" | "huber"
enum class Decoder { kLinear, kCrossAttention };                 // "linear" | "cross_attention"

struct ModelConfig {
  // Tokens: patches of patch_len steps, token n covering steps [n S, n S + patch_len) with
  // S = stride() (patch_stride, 0 = patch_len: no overlap; PatchTST overlaps, S = P / 2).
  // (context_length - patch_len) must be a multiple of S; num_patches() = (L - P) / S + 1.
  int context_length = 336;  // [1, 65536]
  int patch_len = 16;        // [1, 4096]; 1 = one token per time step
  int patch_stride = 0;      // [0, patch_len]; 0 = patch_len
  int horizon = 96;          // H: values each position predicts, [1, 65536]
  ChannelMode channel_mode = ChannelMode::kIndependent;
  int channels = 1;  // [1, 4096]; series per token in "mixed" mode (ignored when independent)
  // "mixed" only: the first target_channels channels are forecast and trained on, the rest
  // are past covariates (inputs, never targets: left out of the loss at every position).
  // 0 = every channel is a target. Set from data.targets / data.past_covariates.
  int target_channels = 0;

  InputNorm norm = InputNorm::kCausal;
  float norm_eps = 1e-5f;  // (0, 1]: sigma = sqrt(var + norm_eps)
  HeadTarget target = HeadTarget::kDeltaFromLast;
  // Linear shortcut (NLinear-style): each position also maps the last
  // linear_lookback normalised values up to its own end straight to its H outputs,
  // added to the Transformer head. 0 disables; [0, 65536]; independent channels only.
  int linear_lookback = 0;

  PatchEmbedding embedding = PatchEmbedding::kLinear;
  PositionalEncoding positional = PositionalEncoding::kSinusoidal;

  int d_model = 64;             // [1, 4096], divisible by n_heads
  int n_heads = 4;              // [1, 256]
  int n_layers = 2;             // [0, 64]
  int ff_mult = 4;              // [1, 16]: feed-forward width ff_mult * d_model
  float dropout = 0.2f;         // [0, 0.9]
  float layernorm_eps = 1e-5f;  // (0, 0.1]

  // How the forecast is read from the encoder. "linear": the head maps each position's
  // state to its H values. "cross_attention": one query per horizon step, built from a
  // learned step embedding, the step's known features and the series' static values,
  // cross-attends to the encoder's N outputs (docs/MODEL.md section 4b); forecasts from
  // the last position only (loss_positions "last").
  Decoder decoder = Decoder::kLinear;
  int decoder_layers = 1;  // [1, 16], cross_attention only
  // What the decoder reads beside the history (base/sample.hpp KnownInputs), set by the
  // train layer from data.future_covariates / data.calendar / data.holidays / data.static:
  int known_features = 0;              // K per horizon step, [0, 4096]
  int static_numeric = 0;              // S per series, [0, 4096]
  std::vector<int> static_categories;  // per categorical static: categories + 1 (0 = unseen)

  // Quantile forecasting: the head outputs every level for every step and channel, trained
  // with the mean pinball loss over the levels (replacing model.loss); strictly increasing
  // levels in (0, 1) that include 0.5, whose forecast is the point forecast. Monotone by
  // construction (docs/MODEL.md section 4c). Empty = point forecasts.
  std::vector<float> quantiles;
  // Where the levels other than the median are trained (quantile models, loss_positions
  // "all"): at every position, as the median is, or at the last position only, where
  // forecasts are read; "last" computes the head's other levels for one position instead
  // of N (docs/MODEL.md 4c).
  LossPositions quantile_positions = LossPositions::kAll;

  LossPositions loss_positions = LossPositions::kAll;
  LossKind loss = LossKind::kMse;
  float huber_delta = 1.0f;  // (0, 1e6], used when loss == "huber"

  int stride() const { return patch_stride > 0 ? patch_stride : patch_len; }
  int num_patches() const { return (context_length - patch_len) / stride() + 1; }
  // One past token n's last step: its forecast origin (targets start here).
  int64_t patch_end(int64_t n) const { return n * stride() + patch_len; }
  int token_channels() const { return channel_mode == ChannelMode::kMixed ? channels : 1; }
  // Values per step and channel the head writes: the quantile levels, or 1.
  int levels() const { return quantiles.empty() ? 1 : static_cast<int>(quantiles.size()); }
  // The index of level 0.5 (the point forecast), 0 without quantiles.
  int median_level() const;

  // Checks ranges and cross-key rules; throws InputError naming "model.<key>".
  void validate() const;
  void validate_decoder() const;
  void validate_quantiles() const;
  bool cross_attention() const { return decoder == Decoder::kCrossAttention; }
};

// The symmetric pairs (q, 1 - q) of quantile `levels` as (lo, hi) indices, widest first:
// the intervals a quantile model has.
std::vector<std::pair<int, int>> symmetric_pairs(const std::vector<float>& levels);

// The index of the 0.5 level in `levels` (0 when there is none).
int median_level(const std::vector<float>& levels);

// `config` reading a context of `context_length` steps instead (an ensemble member of
// train.ensemble_contexts): its linear shortcut reads min(linear_lookback, context_length).
// Not validated: the caller validates (the same patch rules hold for every length).
ModelConfig with_context(const ModelConfig& config, int context_length);

// Reads the "model" object (the value of the "model" key, not the whole file).
// Missing keys take their defaults. `path` prefixes keys in messages ("model").
ModelConfig parse_model_config(const nlohmann::json& section, const std::string& path = "model");
// Every key with its resolved value (round-trips through parse_model_config).
nlohmann::json to_json(const ModelConfig& config);

}  // namespace attnfc::model

// The config words of each enum, in enumerator order (base/enum_names.hpp).
template <>
struct attnfc::EnumNames<attnfc::ChannelMode> {
  static constexpr std::array<const char*, 2> words{"independent", "mixed"};
};
template <>
struct attnfc::EnumNames<attnfc::model::InputNorm> {
  static constexpr std::array<const char*, 3> words{"none", "instance", "causal"};
};
template <>
struct attnfc::EnumNames<attnfc::model::PatchEmbedding> {
  static constexpr std::array<const char*, 2> words{"linear", "mlp"};
};
template <>
struct attnfc::EnumNames<attnfc::model::PositionalEncoding> {
  static constexpr std::array<const char*, 3> words{"sinusoidal", "learned", "none"};
};
template <>
struct attnfc::EnumNames<attnfc::model::HeadTarget> {
  static constexpr std::array<const char*, 2> words{"value", "delta"};
};
template <>
struct attnfc::EnumNames<attnfc::model::LossPositions> {
  static constexpr std::array<const char*, 2> words{"all", "last"};
};
template <>
struct attnfc::EnumNames<attnfc::model::Decoder> {
  static constexpr std::array<const char*, 2> words{"linear", "cross_attention"};
};
template <>
struct attnfc::EnumNames<attnfc::model::LossKind> {
  static constexpr std::array<const char*, 3> words{"mse", "mae", "huber"};
};
