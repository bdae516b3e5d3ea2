#pragma once
// Differentiable ops. Each records a node on the current graph (unless inside a
// NoGradScope or no input requires a gradient). Shapes in the comments.
// Broadcasting follows NumPy rules on trailing dimensions.
#include <cstdint>
#include <span>

#include "attnfc/autograd/tensor.hpp"
#include "attnfc/kernels/gemm.hpp"
#include "attnfc/kernels/softmax.hpp"

namespace attnfc::ag {

// x [..., in] . W[out, in]^T + b[out] -> [..., out], with an optional fused activation.
// Forward is GEMM NT; backward dX is NN, dW is TN (GEMM, never axpy loops).
Tensor linear(const Tensor& x, const Tensor& W, const Tensor& b = {},
              kernels::Activation act = kernels::Activation::None);
// Batched matrix product over leading dims: a [..., M, K] (or [..., K, M] with ta),
// b [..., K, N] (or [..., N, K] with tb) -> [..., M, N]. Leading dims must match.
Tensor matmul(const Tensor& a, const Tensor& b, bool ta = false, bool tb = false);
// linear(linear(x, W1, b1, act), W2, b2) with the same values, as one op that keeps only
// the pre-activation and recomputes act() in the backward (a Transformer feed-forward).
// Fused for a GELU while recording; otherwise it is literally the two linears.
Tensor feed_forward(const Tensor& x, const Tensor& W1, const Tensor& b1, const Tensor& W2,
                    const Tensor& b2, kernels::Activation act);

// Pieces fused around linear / feed_forward to save memory (ops_fused_linear.cpp):
// PreNorm, a LayerNorm on the input whose output is never stored (the backward recomputes
// it from the input; the op saves only mean/rstd), and ResidualDropout, the block's
// residual + dropout(out) written over the op's own output (the branch is never stored).
// The values and gradients are the bits of the unfused composition.
struct PreNorm {
  Tensor gamma, beta;  // gamma undefined: no LayerNorm
  float eps = 1e-5f;
};
struct ResidualDropout {
  Tensor residual;  // undefined: no residual
  float p = 0.0f;
  uint64_t seed = 0;
  bool training = false;
};
// add_dropout(res.residual, linear(layernorm(x, norm), W, b), res.p, res.seed, res.training)
Tensor linear(const Tensor& x, const PreNorm& norm, const Tensor& W, const Tensor& b,
              const ResidualDropout& res);
// add_dropout(res.residual, feed_forward(layernorm(x, norm), W1, b1, W2, b2, act), ...)
Tensor feed_forward(const Tensor& x, const PreNorm& norm, const Tensor& W1, const Tensor& b1,
                    const Tensor& W2, const Tensor& b2, kernels::Activation act,
                    const ResidualDropout& res);

Tensor add(const Tensor& a, const Tensor& b);  // broadcasting
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& x, float s);
Tensor add_scalar(const Tensor& x, float s);

Tensor sum(const Tensor& x, int dim, bool keepdim = false);
Tensor mean(const Tensor& x, int dim, bool keepdim = false);
Tensor sum_all(const Tensor& x);   // -> [1]
Tensor mean_all(const Tensor& x);  // -> [1]

Tensor concat(std::span<const Tensor> parts, int dim);

Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approx = true);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);

// Softmax over the last axis. additive_mask broadcasts against x (use -inf to mask);
// row_mask gives the causal / key-padding masks of kernels::softmax_forward.
// A row with nothing visible yields zeros.
Tensor softmax(const Tensor& x, const Tensor& additive_mask = {});
Tensor softmax_masked(const Tensor& x, const kernels::RowMask& row_mask);
// Boolean mask (same shape as x, or broadcastable): nonzero = masked out.
Tensor softmax_bool_mask(const Tensor& x, const uint8_t* mask, const Shape& mask_shape);

// LayerNorm over the last axis; gamma, beta [C] (beta may be undefined).
Tensor layernorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f);

// Inverted dropout with a counter-based mask: element i is kept with probability
// 1 - p using random_uniform(seed, i). Identity when !training or p == 0.
Tensor dropout(const Tensor& x, float p, uint64_t seed, bool training);
// residual + dropout(x, p, seed, training) in one op (same values): the dropped-out
// tensor is never stored, which saves one activation per residual branch.
Tensor add_dropout(const Tensor& residual, const Tensor& x, float p, uint64_t seed, bool training);

// Fused scaled-dot-product attention (kernels::attention_forward). q [B, H, Lq, D],
// k and v [B, H, Lk, D]; any strides with a unit stride along D (views of a packed
// projection are fine). key_padding [B, Lk], nonzero = padded. Returns [B, H, Lq, D]
// contiguous. Saves only the logsumexp for the backward.
struct SdpaOptions {
  bool causal = false;
  const uint8_t* key_padding = nullptr;
  float scale = 0.0f;  // 0 means 1/sqrt(D)
  // Lay the output out as [B, Lq, H, D] in memory (the result is still indexed
  // [B, H, Lq, D], a permuted view), so merging the heads afterwards needs no copy.
  bool heads_last_output = false;
};
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const SdpaOptions& opt = {});

// Losses: mean over the elements where mask != 0 (mask undefined = all observed;
// mask has pred's shape, values 0 or 1). Each returns a one-element tensor.
Tensor mse_loss(const Tensor& pred, const Tensor& target, const Tensor& mask = {});
Tensor mae_loss(const Tensor& pred, const Tensor& target, const Tensor& mask = {});
Tensor huber_loss(const Tensor& pred, const Tensor& target, float delta, const Tensor& mask = {});
// Pinball loss for quantile q in (0, 1).
Tensor quantile_loss(const Tensor& pred, const Tensor& target, float q, const Tensor& mask = {});

}  // namespace attnfc::ag
