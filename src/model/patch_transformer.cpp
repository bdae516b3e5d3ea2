// PatchTransformer: construction, the differentiable forward, and the loss.
// docs/MODEL.md is the specification this file implements.
#include "attnfc/model/patch_transformer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/random.hpp"
#include "decoder.hpp"
#include "inputs.hpp"
#include "model_ops.hpp"

namespace attnfc::model {

namespace {

// Dropout call sites get independent masks: embedding 0, block i attention 1 + 2i,
// block i feed-forward 2 + 2i.
uint64_t site_seed(const ForwardOptions& o, uint64_t site) {
  return kernels::random_bits(o.dropout_seed, site);
}

}  // namespace

// The series view of a sample batch: its context, followed by its target when
// with_target. Throws when the batch is not shaped for this model.
detail::SeriesView detail::view_of(const SampleBatch& batch, const ModelConfig& cfg,
                                   bool with_target) {
  const int64_t L = cfg.context_length, H = cfg.horizon, C = cfg.token_channels();
  if (batch.width != C)
    throw InputError("model: the samples have " + std::to_string(batch.width) +
                     " values per step, but the model was built for " + std::to_string(C) +
                     " (model.channel_mode/model.channels)");
  if (batch.context != L || (with_target && (batch.horizon != H || !batch.target_values)))
    throw std::invalid_argument("PatchTransformer: samples of context " +
                                std::to_string(batch.context) + " and horizon " +
                                std::to_string(batch.horizon) + ", expected " + std::to_string(L) +
                                " and " + std::to_string(H) + (with_target ? " with targets" : ""));
  detail::SeriesView view;
  view.batch = batch.count;
  view.channels = C;
  view.split = L;
  view.length = with_target ? L + H : L;
  view.head = batch.context_values;
  view.head_observed = batch.context_observed;
  view.known = batch.known;
  if (with_target) {
    view.tail = batch.target_values;
    view.tail_observed = batch.target_observed;
  }
  return view;
}

PatchTransformer::PatchTransformer(const ModelConfig& config, ag::ParameterSet& params,
                                   uint64_t seed)
    : config_(config), params_(&params) {
  config_.validate();
  const int P = config_.patch_len, C = config_.token_channels(), d = config_.d_model;
  const int N = config_.num_patches(), H = config_.horizon;
  const int in = 2 * P * C;
  uint64_t module = 0;
  auto next_seed = [&] { return kernels::random_bits(seed, module++); };
  if (config_.embedding == PatchEmbedding::kLinear) {
    embed_ = nn::Linear(params, "embed", in, d, true, next_seed());
  } else {
    embed_hidden_ = nn::Linear(params, "embed.hidden", in, d, true, next_seed());
    embed_ = nn::Linear(params, "embed.output", d, d, true, next_seed());
    embed_skip_ = nn::Linear(params, "embed.skip", in, d, true, next_seed());
  }
  if (config_.positional == PositionalEncoding::kLearned) {
    pos_embedding_ = params.create("pos_embedding", {N, d});
    ag::init_normal(pos_embedding_, 0.02f, next_seed());
  } else if (config_.positional == PositionalEncoding::kSinusoidal) {
    sinusoid_.resize(static_cast<size_t>(N) * d);
    detail::sinusoidal_table(N, d, sinusoid_.data());
  }
  for (int i = 0; i < config_.n_layers; ++i) {
    const std::string p = "blocks." + std::to_string(i) + ".";
    Block b;
    b.norm1 = nn::LayerNorm(params, p + "norm1", d, config_.layernorm_eps);
    b.attn = nn::MultiHeadAttention(params, p + "attn", d, config_.n_heads, true, next_seed());
    b.norm2 = nn::LayerNorm(params, p + "norm2", d, config_.layernorm_eps);
    b.ff_in = nn::Linear(params, p + "ff_in", d, config_.ff_mult * d, true, next_seed());
    b.ff_out = nn::Linear(params, p + "ff_out", config_.ff_mult * d, d, true, next_seed());
    blocks_.push_back(b);
  }
  final_norm_ = nn::LayerNorm(params, "final_norm", d, config_.layernorm_eps);
  // The cross-attention decoder's head maps each step's state to its C values.
  const int Q = config_.levels();
  head_ =
      nn::Linear(params, "head", d, (config_.cross_attention() ? 1 : H) * Q * C, true, next_seed());
  // A zero head makes the untrained model forecast the last observed value
  // (target "delta") or the running mean (target "value"): training starts from
  // the naive baseline instead of from noise (issue 9: repeating the last value
  // already beats an overfitted Transformer).
  ag::init_constant(head_.weight, 0.0f);
  ag::init_constant(head_.bias, 0.0f);
  if (config_.linear_lookback > 0) {
    // Also zero, for the same reason: the shortcut starts as "repeat the offset".
    // The bias is added after de-normalisation (data units), as NLinear's is, so that
    // a least-squares start carries over exactly (see docs/MODEL.md section 4).
    linear_skip_ = nn::Linear(params, "linear_skip", config_.linear_lookback, H, false, 0);
    linear_skip_bias_ = params.create("linear_skip.bias", {H});
    ag::init_constant(linear_skip_.weight, 0.0f);
    ag::init_constant(linear_skip_bias_, 0.0f);
  }
  if (config_.cross_attention())
    decoder_ = std::make_shared<const detail::CrossAttentionDecoder>(config_, params, seed);
}

int64_t PatchTransformer::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : params_->all()) n += p.tensor.numel();
  return n;
}

ag::Tensor PatchTransformer::predict_positions(const detail::SeriesView& view,
                                               const ForwardOptions& options, bool last_only,
                                               std::vector<ag::Tensor>* attention) const {
  // The cross-attention decoder forecasts from the origin only: one output position.
  const bool last = last_only || config_.cross_attention();
  return forward_prepared(detail::prepare_inputs(config_, view, last), options, last, attention);
}

ag::Tensor PatchTransformer::encode(const detail::Prepared& in, const ForwardOptions& options,
                                    bool last_block_short,
                                    std::vector<ag::Tensor>* attention) const {
  const int64_t N = config_.num_patches(), d = config_.d_model;
  const float p = config_.dropout;
  const bool train = options.training;

  // Patch embedding: [B, N, 2PC] -> [B, N, d].
  ag::Tensor x;
  ag::Tensor pe;
  if (config_.positional == PositionalEncoding::kLearned) {
    pe = pos_embedding_;
  } else if (config_.positional == PositionalEncoding::kSinusoidal) {
    pe = ag::from_data({N, d}, sinusoid_.data());
  }
  if (config_.embedding == PatchEmbedding::kLinear) {
    // One op for embedding, positions and dropout: only the dropped-out sum is stored.
    x = detail::embed_tokens(in.features, embed_.weight, embed_.bias, pe, p, site_seed(options, 0),
                             train);
  } else {
    const ag::Tensor hidden = embed_hidden_.forward(in.features, kernels::Activation::GeluTanh);
    x = ag::add(embed_.forward(hidden), embed_skip_.forward(in.features));
    if (pe.defined()) x = detail::add_positional(x, pe);
    x = ag::dropout(x, p, site_seed(options, 0), train);
  }

  const nn::AttentionMask causal{true, nullptr};
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    ag::Tensor weights;
    // x + dropout(attn(norm1(x))), then x + dropout(ff_out(gelu(ff_in(norm2(x))))): the
    // same values as the unfused ops, with the LayerNorms fused into the projections that
    // follow them and the residual dropouts into those that precede them, so neither the
    // normalised inputs, the branch outputs nor the GELU output are stored.
    if (last_block_short && i + 1 == blocks_.size())
      x = b.attn.forward_last(x, b.norm1.as_prenorm());  // [B, 1, d]; no dropout here
    else
      x = b.attn.forward(x, b.norm1.as_prenorm(), causal,
                         ag::ResidualDropout{x, p, site_seed(options, 1 + 2 * i), train},
                         attention ? &weights : nullptr);
    if (attention) attention->push_back(weights);
    x = nn::feed_forward(b.ff_in, b.ff_out, x, kernels::Activation::GeluTanh, b.norm2.as_prenorm(),
                         ag::ResidualDropout{x, p, site_seed(options, 2 + 2 * i), train});
  }
  return x;
}

ag::Tensor PatchTransformer::forward_prepared(const detail::Prepared& in,
                                              const ForwardOptions& options, bool last_only,
                                              std::vector<ag::Tensor>* attention) const {
  const int64_t B = in.features.size(0), N = config_.num_patches();
  const int64_t C = config_.token_channels(), H = config_.horizon;
  const float p = config_.dropout;
  const bool train = options.training;
  // A forecast from the last position (no training, no decoder reading every position, no
  // attention maps) needs of the final block only its last row: its keys and values at
  // every position, the rest at the last one (a third of the step's products on M4).
  const bool last_block_short = last_only && !train && !decoder_ && !attention;
  if (!train && !ag::grad_enabled() && !decoder_ && !attention && head_is_zero())
    return head_output(bias_only_head(B, last_only ? 1 : N), in, B, last_only ? 1 : N,
                       config_.levels());
  ag::Tensor x = encode(in, options, last_block_short, attention);
  ag::Tensor raw;
  int64_t n_out = 1;
  if (decoder_) {
    // Queries for the H steps read all N encoder outputs: [B, H, d] -> head -> [B, H, Q, C],
    // then level-major [B, 1, Q H C] as the linear head writes it (a copy only with levels).
    const detail::DecoderDropout drop{p, train, options.dropout_seed,
                                      static_cast<uint64_t>(1 + 2 * blocks_.size())};
    const ag::Tensor y = decoder_->forward(final_norm_.forward(x), in.known, drop);
    const int64_t Q = config_.levels();
    raw = ag::linear(y, decoder_->final_norm.as_prenorm(), head_.weight, head_.bias, {});
    if (Q > 1) raw = raw.reshape({B, H, Q, C}).transpose(1, 2).contiguous();
    raw = raw.reshape({B, 1, Q * H * C});
  } else {
    // The final LayerNorm is per position, so the last position may be sliced off first.
    if (last_only && !last_block_short) x = x.slice(1, N - 1, N).contiguous();
    n_out = last_only ? 1 : N;
    // Head and output de-normalisation: pred = head(final_norm(x)) * sigma + base,
    // [B, n_out, H, C].
    raw = ag::linear(x, final_norm_.as_prenorm(), head_.weight, head_.bias, {});
  }
  return head_output(raw, in, B, n_out, config_.levels());
}

// A zero head ignores what it reads: the untrained model (the quantile start reads its
// errors, the first validation scores it) and a run's linear start forecast its bias plus
// the shortcut, whatever the encoder says. Only without gradients: the head's weight
// gradient needs the encoder's output. Finite encoder outputs (LayerNorm's, of the
// checked finite inputs) times zero add +0 to the bias, so skipping the encoder gives the
// same values (M4 intervals config: a third of a run's scoring passes).
bool PatchTransformer::head_is_zero() const {
  const float* w = head_.weight.data();
  return std::all_of(w, w + head_.weight.numel(), [](float v) { return v == 0.0f; });
}

// The head's output when its weight is zero: 0 + its bias at every position, [B, n, Q H C].
ag::Tensor PatchTransformer::bias_only_head(int64_t B, int64_t n) const {
  return ag::add(ag::zeros({B, n, head_.bias.numel()}), head_.bias);
}

// raw [B, n_out, Q * H * C], level-major (level j's H steps and C channels contiguous: the
// non-crossing map and the pinball loss then run on contiguous rows) -> predictions
// [B, n_out, Q * H, C] in data units, in the same order.
ag::Tensor PatchTransformer::head_output(ag::Tensor raw, const detail::Prepared& in, int64_t B,
                                         int64_t n_out, int64_t Q) const {
  const int64_t C = config_.token_channels(), H = config_.horizon;
  if (Q > 1)  // non-crossing levels (docs/MODEL.md 4c)
    raw = detail::monotone_levels(raw.reshape({B * n_out, Q, H * C}), config_.median_level());
  if (config_.linear_lookback == 0)
    return detail::scale_shift(raw.reshape({B, n_out, Q * H, C}), in.scale, in.offset);
  // Linear shortcut (C == 1): s W^T [B, n_out, K] -> [B, n_out, H] joins the head before
  // de-normalising (the same shift for every level); its bias [H] is added after, in data
  // units.
  const ag::Tensor skip = linear_skip_.forward(in.lookback);
  if (Q == 1) {
    raw = ag::add(raw, skip).reshape({B, n_out, H, C});
    const ag::Tensor pred = detail::scale_shift(raw, in.scale, in.offset);
    return ag::add(pred, linear_skip_bias_.reshape({H, 1}));
  }
  raw = ag::add(raw.reshape({B, n_out, Q, H}), skip.reshape({B, n_out, 1, H}));
  const ag::Tensor pred =
      detail::scale_shift(raw.reshape({B, n_out, Q * H, 1}), in.scale, in.offset);
  return ag::add(pred.reshape({B, n_out, Q, H}), linear_skip_bias_.reshape({1, H}))
      .reshape({B, n_out, Q * H, 1});
}

ag::Tensor PatchTransformer::point_of(const ag::Tensor& pred) const {
  const int64_t Q = config_.levels();
  if (Q == 1) return pred;
  const int64_t B = pred.size(0), n = pred.size(1), C = pred.size(3), H = config_.horizon;
  const int m = config_.median_level();
  return pred.reshape({B * n, Q, H * C}).slice(1, m, m + 1).contiguous().reshape({B, n, H, C});
}

ag::Tensor PatchTransformer::forward(const SampleBatch& batch,
                                     const ForwardOptions& options) const {
  const ag::Tensor pred =
      point_of(predict_positions(detail::view_of(batch, config_, false), options, false, nullptr));
  return pred.reshape({pred.size(0), pred.size(1), pred.size(2) * pred.size(3)});
}

ag::Tensor PatchTransformer::loss(const SampleBatch& batch, const ForwardOptions& options) const {
  return loss_on(detail::view_of(batch, config_, true), options);
}

ag::Tensor PatchTransformer::loss_on(const detail::SeriesView& view,
                                     const ForwardOptions& options) const {
  const bool last_only = config_.loss_positions == LossPositions::kLast;
  ag::Tensor targets, mask;
  if (detail::prepare_targets(config_, view, last_only, &targets, &mask) == 0) {
    throw InputError("model: a training batch has no observed target value (all " +
                     std::to_string(view.batch) + " windows are missing their future)");
  }
  const detail::Prepared in = detail::prepare_inputs(config_, view, last_only);
  // validate() allows "last" only with quantiles and loss_positions "all" (so no decoder).
  if (config_.quantile_positions == LossPositions::kLast)
    return median_everywhere_loss(in, targets, mask, options);
  const ag::Tensor pred = forward_prepared(in, options, last_only, nullptr);
  if (config_.levels() > 1) {  // rows (b, n) of Q levels of H C values each
    const int64_t rows = pred.size(0) * pred.size(1), HC = targets.numel() / rows;
    return detail::pinball_over_levels(
        pred.reshape({rows, config_.levels() * HC}), targets.reshape({rows, HC}),
        mask.defined() ? mask.reshape({rows, HC}) : mask, config_.quantiles);
  }
  switch (config_.loss) {
    case LossKind::kMae:
      return ag::mae_loss(pred, targets, mask);
    case LossKind::kHuber:
      return ag::huber_loss(pred, targets, config_.huber_delta, mask);
    case LossKind::kMse:
      break;
  }
  return ag::mse_loss(pred, targets, mask);
}

// mean over every position's counted targets of rho_0.5(y - median) + (1/Q) sum over the other
// levels j of the mean over the last position's counted targets of rho_j(y - level j). The
// median has the weight a point model's loss has (it is the point forecast; with 1/Q, as in
// "all", the encoder learned less from the positions before the last: M4 validation OWA
// 6.5% worse over 4 seeds, docs/RESULTS.md). The median rows of the head run at every
// position ([B N, d] x [d, H C], the point model's cost), the whole head at the last one
// ([B, d] x [d, Q H C]).
ag::Tensor PatchTransformer::median_everywhere_loss(const detail::Prepared& in,
                                                    const ag::Tensor& targets,
                                                    const ag::Tensor& mask,
                                                    const ForwardOptions& options) const {
  const int64_t B = in.features.size(0), N = config_.num_patches();
  const int64_t HC = static_cast<int64_t>(config_.horizon) * config_.token_channels();
  const int64_t Q = config_.levels(), m = config_.median_level();
  const ag::Tensor x = encode(in, options, false, nullptr);  // [B, N, d]
  // Every position: the median's rows of the head -> [B, N, H, C] in data units.
  const ag::Tensor median_raw =
      ag::linear(x, final_norm_.as_prenorm(), head_.weight.slice(0, m * HC, (m + 1) * HC),
                 head_.bias.slice(0, m * HC, (m + 1) * HC), {});
  const ag::Tensor median = head_output(median_raw, in, B, N, 1);
  static const std::vector<float> kMedian{0.5f};  // not a temporary: no heap in a step
  const ag::Tensor median_loss =
      detail::pinball_over_levels(median.reshape({B * N, HC}), targets.reshape({B * N, HC}),
                                  mask.defined() ? mask.reshape({B * N, HC}) : mask, kMedian);
  // The last position: every level (the median's anchors the others through the map).
  auto last = [N](const ag::Tensor& t) { return t.slice(1, N - 1, N).contiguous(); };
  detail::Prepared at_last = in;
  at_last.scale = last(in.scale);
  at_last.offset = last(in.offset);
  if (in.lookback.defined()) at_last.lookback = last(in.lookback);
  const ag::Tensor raw =
      ag::linear(last(x), final_norm_.as_prenorm(), head_.weight, head_.bias, {});
  const ag::Tensor levels = head_output(raw, at_last, B, 1, Q);
  const ag::Tensor others = detail::pinball_over_levels(
      levels.reshape({B, Q * HC}), last(targets).reshape({B, HC}),
      mask.defined() ? last(mask).reshape({B, HC}) : mask, config_.quantiles, static_cast<int>(m));
  return ag::add(median_loss, others);
}

}  // namespace attnfc::model
