#pragma once
// Two small fused ops of the model, written on the engine's custom-op interface
// (autograd/engine.hpp). The generic broadcasting add/mul walk four strided
// dimensions per element; these are the same arithmetic as flat loops, which
// took a fifth of a training step off the S benchmark shape.
#include "attnfc/autograd/tensor.hpp"

namespace attnfc::model::detail {

// y[b, m, k, c] = x[b, m, k, c] * scale[b, m, c] + shift[b, m, c]
// x [B, M, K, C] contiguous; scale and shift [B, M, 1, C] contiguous constants (no grad).
// Backward: dx += dy * scale.
ag::Tensor scale_shift(const ag::Tensor& x, const ag::Tensor& scale, const ag::Tensor& shift);

// y[b, n, j] = x[b, n, j] + pe[n, j]; x [B, N, d] and pe [N, d] contiguous.
// Backward: dx += dy; dpe[n, j] += sum over b of dy[b, n, j] (b ascending, fixed order).
ag::Tensor add_positional(const ag::Tensor& x, const ag::Tensor& pe);

}  // namespace attnfc::model::detail
