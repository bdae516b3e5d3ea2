// Scaled-dot-product and multi-head attention on the autograd ops.
//
// Head split without copies: the packed projection [B, L, 3d] is viewed as
// [B, L, 3H, Dh], permuted to [B, 3H, L, Dh] and sliced into Q, K, V [B, H, L, Dh];
// the fused kernel reads those strides directly and writes its output heads-last
// ([B, L, H, Dh] in memory), so the head merge before the output projection is a view
// too (the materialising path copies, as torch does).
#include "attnfc/nn/attention.hpp"

#include <cmath>
#include <string>

#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/kernels/softmax.hpp"

namespace attnfc::nn {

namespace {

// The fused kernel handles head widths up to this; wider heads take the materialising path.
constexpr int64_t kFusedMaxHeadDim = 256;

void check_qkv(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
  const bool ok = q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 && k.shape() == v.shape() &&
                  q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3);
  if (!ok)
    throw std::invalid_argument(
        "scaled_dot_product_attention: expected q [B, H, Lq, D] and k, v "
        "[B, H, Lk, D], got q " +
        q.shape().str() + ", k " + k.shape().str() + ", v " + v.shape().str());
}

// softmax(q k^T / sqrt(D) + mask) v with the weights kept: [B, H, Lq, Lk].
ag::Tensor materialising_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v,
                                   const AttentionMask& mask, ag::Tensor* weights_out) {
  const int64_t H = q.size(1), Lq = q.size(2), D = q.size(3);
  ag::Tensor scores =
      ag::scale(ag::matmul(q, k, false, true), 1.0f / std::sqrt(static_cast<float>(D)));
  kernels::RowMask rm;
  rm.causal = mask.causal;  // top-left aligned: query i sees keys j <= i
  rm.rows_per_matrix = static_cast<int>(Lq);
  rm.causal_offset = 0;
  rm.key_padding = mask.key_padding;
  rm.rows_per_group = static_cast<int>(H * Lq);  // one padding row per batch element
  ag::Tensor weights = ag::softmax_masked(scores, rm);
  if (weights_out) *weights_out = weights;
  return ag::matmul(weights, v);
}

// [B, L, n*H*Dh] (contiguous) -> n views [B, H, L, Dh].
void split_heads(const ag::Tensor& packed, int n, int heads, ag::Tensor* out) {
  const int64_t B = packed.size(0), L = packed.size(1);
  const int64_t head_dim = packed.size(2) / (n * heads);
  const ag::Tensor grouped =
      packed.reshape({B, L, n * heads, head_dim}).permute({0, 2, 1, 3});  // [B, nH, L, Dh]
  for (int i = 0; i < n; ++i) out[i] = grouped.slice(1, i * heads, (i + 1) * heads);
}

// heads_last: the fused kernel writes the output as [B, Lq, H, D] (see merge_heads).
ag::Tensor attend(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v,
                  const AttentionMask& mask, ag::Tensor* weights_out, bool heads_last) {
  check_qkv(q, k, v);
  if (weights_out || q.size(3) > kFusedMaxHeadDim)
    return materialising_attention(q, k, v, mask, weights_out);
  ag::SdpaOptions opt;
  opt.causal = mask.causal;
  opt.key_padding = mask.key_padding;
  opt.heads_last_output = heads_last;
  return ag::scaled_dot_product_attention(q, k, v, opt);
}

// [B, H, L, Dh] -> [B, L, H*Dh]: a view when the output is already heads-last in memory
// (the fused path), else a copy, as in torch.
ag::Tensor merge_heads(const ag::Tensor& o, int64_t d_model) {
  return o.permute({0, 2, 1, 3}).contiguous().reshape({o.size(0), o.size(2), d_model});
}

}  // namespace

ag::Tensor scaled_dot_product_attention(const ag::Tensor& q, const ag::Tensor& k,
                                        const ag::Tensor& v, const AttentionMask& mask,
                                        ag::Tensor* weights_out) {
  return attend(q, k, v, mask, weights_out, false);
}

MultiHeadAttention::MultiHeadAttention(ag::ParameterSet& params, const std::string& name,
                                       int d_model, int heads, bool bias, uint64_t seed)
    : d_model(d_model), heads(heads) {
  if (d_model < 1 || heads < 1 || d_model % heads != 0)
    throw InputError("multi-head attention '" + name + "': d_model (" + std::to_string(d_model) +
                     ") must be a positive multiple of heads (" + std::to_string(heads) + ")");
  const int d = d_model;
  in_proj_weight = params.create(name + ".in_proj_weight", {3 * d, d});
  out_proj_weight = params.create(name + ".out_proj.weight", {d, d});
  // torch.nn.MultiheadAttention: xavier_uniform_ on the packed [3d, d] weight,
  // bound sqrt(6 / (d + 3d)); out_proj keeps nn.Linear's kaiming bound 1/sqrt(d);
  // both biases start at zero.
  ag::init_uniform(in_proj_weight, std::sqrt(6.0f / (4.0f * d)), kernels::random_bits(seed, 0));
  ag::init_uniform(out_proj_weight, 1.0f / std::sqrt(static_cast<float>(d)),
                   kernels::random_bits(seed, 1));
  if (bias) {
    in_proj_bias = params.create(name + ".in_proj_bias", {3 * d});
    out_proj_bias = params.create(name + ".out_proj.bias", {d});
  }
}

namespace {

void check_input(const ag::Tensor& t, int d_model, const char* what) {
  if (t.ndim() != 3 || t.size(2) != d_model)
    throw std::invalid_argument(std::string("MultiHeadAttention: ") + what + " must be [B, L, " +
                                std::to_string(d_model) + "], got " + t.shape().str());
}

// Sub-range [begin, end) of rows of a packed weight or bias (a view: gradients land in
// the packed parameter's gradient).
ag::Tensor rows(const ag::Tensor& t, int64_t begin, int64_t end) {
  return t.defined() ? t.slice(0, begin, end) : ag::Tensor{};
}

}  // namespace

ag::Tensor MultiHeadAttention::forward(const ag::Tensor& x, const AttentionMask& mask,
                                       ag::Tensor* weights_out) const {
  check_input(x, d_model, "x");
  ag::Tensor qkv[3];
  split_heads(ag::linear(x, in_proj_weight, in_proj_bias), 3, heads, qkv);  // one GEMM for Q, K, V
  const ag::Tensor o = attend(qkv[0], qkv[1], qkv[2], mask, weights_out, true);
  return ag::linear(merge_heads(o, d_model), out_proj_weight, out_proj_bias);
}

ag::Tensor MultiHeadAttention::forward(const ag::Tensor& x, const ag::PreNorm& norm,
                                       const AttentionMask& mask, const ag::ResidualDropout& res,
                                       ag::Tensor* weights_out) const {
  check_input(x, d_model, "x");
  ag::Tensor qkv[3];
  split_heads(ag::linear(x, norm, in_proj_weight, in_proj_bias, {}), 3, heads, qkv);
  const ag::Tensor o = attend(qkv[0], qkv[1], qkv[2], mask, weights_out, true);
  return ag::linear(merge_heads(o, d_model), {}, out_proj_weight, out_proj_bias, res);
}

ag::Tensor MultiHeadAttention::forward_last(const ag::Tensor& x, const ag::PreNorm& norm) const {
  check_input(x, d_model, "x");
  const int64_t L = x.size(1);
  ag::Tensor qkv[3];
  split_heads(ag::linear(x, norm, in_proj_weight, in_proj_bias, {}), 3, heads, qkv);
  const ag::Tensor q = qkv[0].slice(2, L - 1, L);  // [B, H, 1, D]: sees keys 0..L-1
  const ag::Tensor o = attend(q, qkv[1], qkv[2], {}, nullptr, true);
  const ag::Tensor last = x.slice(1, L - 1, L).contiguous();
  return ag::linear(merge_heads(o, d_model), {}, out_proj_weight, out_proj_bias,
                    ag::ResidualDropout{last, 0.0f, 0, false});
}

ag::Tensor MultiHeadAttention::forward(const ag::Tensor& query, const ag::Tensor& key_value,
                                       const AttentionMask& mask, ag::Tensor* weights_out) const {
  check_input(query, d_model, "query");
  check_input(key_value, d_model, "key_value");
  if (query.size(0) != key_value.size(0))
    throw std::invalid_argument("MultiHeadAttention: query batch " + query.shape().str() +
                                " and key_value batch " + key_value.shape().str() + " differ");
  const int64_t d = d_model;
  ag::Tensor q, kv[2];
  split_heads(ag::linear(query, rows(in_proj_weight, 0, d), rows(in_proj_bias, 0, d)), 1, heads,
              &q);
  split_heads(ag::linear(key_value, rows(in_proj_weight, d, 3 * d), rows(in_proj_bias, d, 3 * d)),
              2, heads, kv);
  const ag::Tensor o = attend(q, kv[0], kv[1], mask, weights_out, true);
  return ag::linear(merge_heads(o, d_model), out_proj_weight, out_proj_bias);
}

}  // namespace attnfc::nn
