#pragma once
// Attention as the textbook defines it: softmax(Q K^T / sqrt(d_k)) V, a
// content-based weighted average of the values; h heads of width d/h run in
// parallel, are concatenated and mixed by W^O.
//
// Masks: causal (query i sees keys j <= i; top-left aligned like torch's
// is_causal) and key padding ([B, Lk], nonzero = padded, weight exactly 0).
// A query row with nothing to attend to yields zeros, never NaN.
#include <cstdint>
#include <string>

#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/autograd/tensor.hpp"

namespace attnfc::nn {

struct AttentionMask {
  bool causal = false;
  const uint8_t* key_padding = nullptr;  // [B, Lk], nonzero = padded
};

// q [B, H, Lq, D], k and v [B, H, Lk, D] -> [B, H, Lq, D].
// Without weights_out: the fused kernel (saves only the logsumexp).
// With weights_out: the materialising path, and *weights_out = [B, H, Lq, Lk].
ag::Tensor scaled_dot_product_attention(const ag::Tensor& q, const ag::Tensor& k,
                                        const ag::Tensor& v, const AttentionMask& mask = {},
                                        ag::Tensor* weights_out = nullptr);

// Parameters use torch.nn.MultiheadAttention's names and layout, so its weights
// load unchanged: "<name>.in_proj_weight" [3d, d], "<name>.in_proj_bias" [3d],
// "<name>.out_proj.weight" [d, d], "<name>.out_proj.bias" [d].
class MultiHeadAttention {
 public:
  MultiHeadAttention() = default;
  MultiHeadAttention(ag::ParameterSet& params, const std::string& name, int d_model, int heads,
                     bool bias, uint64_t seed);
  // Self-attention: x [B, L, d] -> [B, L, d].
  ag::Tensor forward(const ag::Tensor& x, const AttentionMask& mask = {},
                     ag::Tensor* weights_out = nullptr) const;
  // A pre-norm Transformer block's attention half, x [B, L, d] -> [B, L, d]:
  // res.residual + dropout(forward(layernorm(x, norm), mask)) with the same values, the
  // LayerNorm fused into the QKV projection and the residual dropout into the output
  // projection (ag::PreNorm, ag::ResidualDropout): neither is stored for the backward.
  ag::Tensor forward(const ag::Tensor& x, const ag::PreNorm& norm, const AttentionMask& mask,
                     const ag::ResidualDropout& res, ag::Tensor* weights_out = nullptr) const;
  // The same half for the last position only, without dropout: x [B, L, d] -> [B, 1, d],
  // the last row of forward(x, norm, causal, {x, 0, ...}). Keys and values are projected
  // for every position, the query, its attention (the last query sees every key), the
  // output projection and the residual for the last one only: what a forecast from the
  // last position needs of a final block.
  ag::Tensor forward_last(const ag::Tensor& x, const ag::PreNorm& norm) const;
  // Cross-attention: query [B, Lq, d], key_value [B, Lk, d] -> [B, Lq, d].
  ag::Tensor forward(const ag::Tensor& query, const ag::Tensor& key_value,
                     const AttentionMask& mask, ag::Tensor* weights_out = nullptr) const;

  int d_model = 0, heads = 0;
  ag::Tensor in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias;
};

}  // namespace attnfc::nn
