// The cross-attention decoder: construction and the differentiable forward.
// docs/MODEL.md section 4b is the specification this file implements.
#include "decoder.hpp"

#include <algorithm>
#include <string>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/random.hpp"
#include "model_ops.hpp"

namespace attnfc::model::detail {

CrossAttentionDecoder::CrossAttentionDecoder(const ModelConfig& c, ag::ParameterSet& params,
                                             uint64_t seed)
    : horizon_(c.horizon),
      d_model_(c.d_model),
      known_(c.known_features),
      numeric_(c.static_numeric) {
  // Seeds from their own stream (module ids from 1000 on): adding the decoder leaves the
  // encoder's initial weights as they are without it.
  uint64_t module = 1000;
  auto next_seed = [&] { return kernels::random_bits(seed, module++); };
  const int d = c.d_model;
  step_embedding_ = params.create("decoder.step_embedding", {c.horizon, d});
  ag::init_normal(step_embedding_, 0.02f, next_seed());
  if (known_ > 0)
    known_proj_ = nn::Linear(params, "decoder.known_proj", known_, d, true, next_seed());
  if (numeric_ > 0)
    static_proj_ = nn::Linear(params, "decoder.static_proj", numeric_, d, true, next_seed());
  for (size_t g = 0; g < c.static_categories.size(); ++g) {
    ag::Tensor t =
        params.create("decoder.static_embedding." + std::to_string(g), {c.static_categories[g], d});
    ag::init_normal(t, 0.02f, next_seed());
    // Row 0 is the "unseen category" of predict. Training never sees it (its gradient stays
    // 0 and weight decay keeps it at 0), so it starts at zero: "no information", rather
    // than an arbitrary vector.
    std::fill_n(t.data(), c.d_model, 0.0f);
    category_tables_.push_back(t);
  }
  for (int i = 0; i < c.decoder_layers; ++i) {
    const std::string p = "decoder.blocks." + std::to_string(i) + ".";
    Block b;
    b.norm1 = nn::LayerNorm(params, p + "norm1", d, c.layernorm_eps);
    b.cross = nn::MultiHeadAttention(params, p + "cross_attn", d, c.n_heads, true, next_seed());
    b.norm2 = nn::LayerNorm(params, p + "norm2", d, c.layernorm_eps);
    b.ff_in = nn::Linear(params, p + "ff_in", d, c.ff_mult * d, true, next_seed());
    b.ff_out = nn::Linear(params, p + "ff_out", c.ff_mult * d, d, true, next_seed());
    blocks_.push_back(b);
  }
  final_norm = nn::LayerNorm(params, "decoder.final_norm", d, c.layernorm_eps);
}

void CrossAttentionDecoder::check(const KnownInputs& k) const {
  const auto G = static_cast<int64_t>(category_tables_.size());
  const bool ok = k.known_width == known_ && (known_ == 0 || k.known) &&
                  k.numeric_width == numeric_ && (numeric_ == 0 || k.static_numeric) &&
                  k.category_width == G && (G == 0 || k.static_codes);
  if (!ok)
    throw InputError(
        "model: the samples carry " + std::to_string(k.known_width) + " known features a step, " +
        std::to_string(k.numeric_width) + " numeric and " + std::to_string(k.category_width) +
        " categorical static values, but the model was built for " + std::to_string(known_) + ", " +
        std::to_string(numeric_) + " and " + std::to_string(G) +
        " (model.known_features, model.static_numeric, "
        "model.static_categories)");
}

// q[b, h] = step_embedding[h] + known_proj(known[b, h]) + static_proj(static[b])
//           + sum over g of static_embedding.g[codes[b, g]]
ag::Tensor CrossAttentionDecoder::queries(const KnownInputs& k, int64_t B) const {
  const int64_t H = horizon_, d = d_model_;
  const ag::Tensor base = known_ > 0 ? known_proj_.forward(ag::from_data({B, H, known_}, k.known))
                                     : ag::zeros({B, H, d});
  ag::Tensor q = add_positional(base, step_embedding_);
  ag::Tensor per_series;  // [B, 1, d]
  if (numeric_ > 0)
    per_series = static_proj_.forward(ag::from_data({B, 1, numeric_}, k.static_numeric));
  for (size_t g = 0; g < category_tables_.size(); ++g) {
    const ag::Tensor e = gather_rows(category_tables_[g], k.static_codes + g, B, k.category_width)
                             .reshape({B, 1, d});
    per_series = per_series.defined() ? ag::add(per_series, e) : e;
  }
  return per_series.defined() ? ag::add(q, per_series) : q;
}

ag::Tensor CrossAttentionDecoder::forward(const ag::Tensor& encoded, const KnownInputs& known,
                                          const DecoderDropout& o) const {
  check(known);
  const int64_t B = encoded.size(0);
  ag::Tensor y = queries(known, B);
  // Pre-norm blocks as in the encoder, with the self-attention replaced by attention from
  // the queries to the encoder: no mask, since every encoder position is in the past.
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    const uint64_t site = o.first_site + 2 * i;
    const ag::Tensor read = b.cross.forward(b.norm1.forward(y), encoded, nn::AttentionMask{});
    y = ag::add_dropout(y, read, o.p, kernels::random_bits(o.seed, site), o.training);
    y = nn::feed_forward(
        b.ff_in, b.ff_out, y, kernels::Activation::GeluTanh, b.norm2.as_prenorm(),
        ag::ResidualDropout{y, o.p, kernels::random_bits(o.seed, site + 1), o.training});
  }
  return y;
}

}  // namespace attnfc::model::detail
