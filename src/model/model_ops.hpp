#pragma once
// Two small fused ops of the model, written on the engine's custom-op interface
// (autograd/engine.hpp). The generic broadcasting add/mul walk four strided
// dimensions per element; these are the same arithmetic as flat loops, which
// took a fifth of a training step off the S benchmark shape.
#include <cstdint>
#include <vector>

#include "attnfc/autograd/tensor.hpp"

namespace attnfc::model::detail {

// y[b, m, k, c] = x[b, m, k, c] * scale[b, m, c] + shift[b, m, c]
// x [B, M, K, C] contiguous; scale and shift [B, M, 1, C] contiguous constants (no grad).
// Backward: dx += dy * scale.
ag::Tensor scale_shift(const ag::Tensor& x, const ag::Tensor& scale, const ag::Tensor& shift);

// y = dropout(features . W^T + b + pe, p, seed): the linear patch embedding, the positional
// encoding (pe [N, d], or undefined for none) and the first dropout as one op that stores
// only y, with the bits of linear, add_positional and dropout (used when not recording).
// features [B, N, K] contiguous, W [d, K], b [d]. Backward: g = dropout'(dy);
// dpe += sum over b of g (b ascending); dW += g^T . features; db += colsum(g) (row order).
ag::Tensor embed_tokens(const ag::Tensor& features, const ag::Tensor& W, const ag::Tensor& b,
                        const ag::Tensor& pe, float p, uint64_t seed, bool training);

// y[b, :] = table[codes[b * stride], :]: an embedding lookup, table [V, d] contiguous,
// codes in [0, V) (else an error naming the code). y [count, d].
// Backward: dtable[codes[b], :] += dy[b, :] (b ascending, fixed order).
ag::Tensor gather_rows(const ag::Tensor& table, const int32_t* codes, int64_t count,
                       int64_t stride);

// The quantile head's non-crossing map (docs/MODEL.md 4c), x [R, Q, C] contiguous:
//   y[m] = x[m];  y[j] = y[j-1] + gap(x[j]) for j > m;  y[j] = y[j+1] - gap(x[j]) for j < m
// with m the median level and gap(x) = (x + sqrt(x^2 + 1)) / 2 > 0, so the levels increase
// strictly and x = 0 spreads them 1/2 apart. Backward: dx_j += gap'(x_j) * sum_{k >= j} dy_k
// (j > m), -gap'(x_j) * sum_{k <= j} dy_k (j < m), dx_m += sum_k dy_k.
ag::Tensor monotone_levels(const ag::Tensor& x, int median);

// The mean over levels of the pinball loss of level q_j, pred [R, Q * C] (row r's Q levels
// one after another, C values each), target and mask [R, C], all contiguous (the model's
// rows are its (window, position) pairs, C its H steps times its channels): the mean over
// counted values (mask != 0) of (1/Q) sum_j rho_{q_j}(y - p_j), with
// rho_q(u) = max(q u, (q - 1) u); one fused pass.
// Backward: dp_j += g w (-q_j if y > p_j, 1 - q_j if y < p_j) / (counted Q).
// skip >= 0 leaves level `skip` out of the sum (its gradient is 0) but not out of Q: the
// other levels of a loss whose level `skip` is scored elsewhere (quantile_positions "last").
ag::Tensor pinball_over_levels(const ag::Tensor& pred, const ag::Tensor& target,
                               const ag::Tensor& mask, const std::vector<float>& levels,
                               int skip = -1);

// y[b, n, j] = x[b, n, j] + pe[n, j]; x [B, N, d] and pe [N, d] contiguous.
// Backward: dx += dy; dpe[n, j] += sum over b of dy[b, n, j] (b ascending, fixed order).
ag::Tensor add_positional(const ag::Tensor& x, const ag::Tensor& pe);

}  // namespace attnfc::model::detail
