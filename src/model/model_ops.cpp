// Fused model ops (see model_ops.hpp): forward and backward side by side.
#include "model_ops.hpp"

#include <new>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/dropout.hpp"
#include "attnfc/kernels/gemm.hpp"
#include "row_blocks.hpp"

namespace attnfc::model::detail {

namespace {

// dx[r] (+)= dy[r] * s[r] for one row of K steps x C channels; every dx written once.
template <bool kFresh>
void scale_row_backward(const float* __restrict dy, const float* __restrict s, float* __restrict dx,
                        int64_t K, int64_t C) {
  if (C == 1) {  // one channel (every channel-independent model): a loop that vectorizes
    const float s0 = s[0];
    for (int64_t k = 0; k < K; ++k) ag::grad_store<kFresh>(dx[k], dy[k] * s0);
    return;
  }
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) ag::grad_store<kFresh>(dx[k * C + c], dy[k * C + c] * s[c]);
}

// in[0] = x [B, M, K, C], in[1] = scale [B, M, 1, C].
void scale_shift_backward(const ag::TensorNode& node) {
  const ag::Tensor& x = node.in[0];
  if (!x.requires_grad()) return;
  const ag::Tensor& scale = node.in[1];
  const int64_t rows = x.size(0) * x.size(1), K = x.size(2), C = x.size(3);
  const float* dy = node.out.grad();
  float* dx = x.grad();
  const float* s = scale.data();
  const bool fresh = ag::grad_is_fresh(x);
  for_row_blocks(rows, K * C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r * K * C;
      if (fresh)
        scale_row_backward<true>(dy + o, s + r * C, dx + o, K, C);
      else
        scale_row_backward<false>(dy + o, s + r * C, dx + o, K, C);
    }
  });
}

// in[0] = x [B, N, d], in[1] = pe [N, d].
void add_positional_backward(const ag::TensorNode& node) {
  const ag::Tensor &x = node.in[0], &pe = node.in[1];
  const int64_t B = x.size(0), Nd = x.size(1) * x.size(2);
  const float* dy = node.out.grad();
  if (x.requires_grad()) {
    float* dx = x.grad();
    for (int64_t i = 0; i < B * Nd; ++i) dx[i] += dy[i];
  }
  if (pe.requires_grad()) {
    float* dpe = pe.grad();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < Nd; ++i) dpe[i] += dy[b * Nd + i];
    }
  }
}

// in: features [M, K], W [d, K], b [d]; parts: pe [N, d]. iarg[0]: seed (bit pattern),
// iarg[1]: dropout applied; farg[0]: p.
void embed_tokens_backward(const ag::TensorNode& node) {
  const ag::Tensor &x = node.in[0], &W = node.in[1], &b = node.in[2], &pe = node.parts[0];
  const int d = static_cast<int>(W.size(0)), K = static_cast<int>(W.size(1));
  const int M = static_cast<int>(x.numel() / K);
  const int64_t n = node.out.numel();
  const float* g = node.out.grad();
  if (node.iarg[1] != 0) {
    float* masked = ag::scratch_zeros(n);
    kernels::dropout_backward(g, masked, n, static_cast<uint64_t>(node.iarg[0]), node.farg[0]);
    g = masked;
  }
  if (pe.defined() && pe.requires_grad()) {
    const int64_t Nd = pe.numel();
    float* dpe = pe.grad();
    for (int64_t r = 0; r < n / Nd; ++r) {
      for (int64_t i = 0; i < Nd; ++i) dpe[i] += g[r * Nd + i];
    }
  }
  if (W.requires_grad()) {
    kernels::gemm(true, false, d, K, M, 1.0f, g, d, x.data(), K, 1.0f, W.grad(), K);
  }
  if (b.defined() && b.requires_grad()) {
    float* db = b.grad();
    for (int r = 0; r < M; ++r) {
      for (int j = 0; j < d; ++j) db[j] += g[static_cast<int64_t>(r) * d + j];
    }
  }
  if (x.requires_grad()) {
    kernels::gemm(false, false, M, K, d, 1.0f, g, d, W.data(), K, 1.0f, x.grad(), K);
  }
}

// y = x * s + t for row r of x [rows, K, C] (s, t [rows, C]).
void scale_shift_row(const float* xd, const float* s, const float* t, float* yd, int64_t r,
                     int64_t K, int64_t C) {
  const float* __restrict sr = s + r * C, * __restrict tr = t + r * C;
  if (C == 1) {  // as in the backward
    const float s0 = sr[0], t0 = tr[0];
    const float* __restrict xr = xd + r * K;
    float* __restrict yr = yd + r * K;
    for (int64_t k = 0; k < K; ++k) yr[k] = xr[k] * s0 + t0;
    return;
  }
  for (int64_t k = 0; k < K; ++k) {
    const int64_t o = (r * K + k) * C;
    for (int64_t c = 0; c < C; ++c) yd[o + c] = xd[o + c] * sr[c] + tr[c];
  }
}

}  // namespace

ag::Tensor embed_tokens(const ag::Tensor& x, const ag::Tensor& W, const ag::Tensor& b,
                        const ag::Tensor& pe, float p, uint64_t seed, bool training) {
  const bool fusable = x.ndim() == 3 && x.is_contiguous() && W.ndim() == 2 && W.is_contiguous() &&
                       x.size(2) == W.size(1) && x.numel() > 0 && b.defined() && b.ndim() == 1 &&
                       b.size(0) == W.size(0) && b.stride(0) == 1 &&
                       (!pe.defined() || (pe.ndim() == 2 && pe.is_contiguous() &&
                                          pe.size(0) == x.size(1) && pe.size(1) == W.size(0))) &&
                       p < 1.0f && ag::should_record({&x, &W, &b, &pe});
  if (!fusable) {
    ag::Tensor y = ag::linear(x, W, b);
    if (pe.defined()) y = add_positional(y, pe);
    return ag::dropout(y, p, seed, training);
  }
  const int d = static_cast<int>(W.size(0)), K = static_cast<int>(W.size(1));
  const int M = static_cast<int>(x.size(0) * x.size(1));
  ag::TensorNode* node = nullptr;
  ag::Tensor y = ag::make_output({x.size(0), x.size(1), W.size(0)}, "embed_tokens",
                                 embed_tokens_backward, {&x, &W, &b, &pe}, &node);
  float* yd = y.data();
  kernels::gemm(false, true, M, d, K, 1.0f, x.data(), K, W.data(), K, 0.0f, yd, d,
                kernels::Epilogue{b.data(), kernels::Activation::None});
  if (pe.defined()) {
    const int64_t Nd = pe.numel();
    const float* pd = pe.data();
    for (int64_t r = 0; r < y.numel() / Nd; ++r) {
      for (int64_t i = 0; i < Nd; ++i) yd[r * Nd + i] = yd[r * Nd + i] + pd[i];
    }
  }
  const bool drop = training && p > 0.0f;
  if (drop) kernels::dropout_forward(yd, nullptr, yd, y.numel(), seed, p);
  auto* extra = static_cast<ag::Tensor*>(ag::arena_alloc(sizeof(ag::Tensor)));
  new (extra) ag::Tensor(pe);
  node->in[0] = x;
  node->in[1] = W;
  node->in[2] = b;
  node->parts = extra;
  node->num_parts = 1;
  node->iarg[0] = static_cast<int64_t>(seed);
  node->iarg[1] = drop ? 1 : 0;
  node->farg[0] = p;
  return y;
}

ag::Tensor scale_shift(const ag::Tensor& x, const ag::Tensor& scale, const ag::Tensor& shift) {
  const ag::Shape want{x.size(0), x.size(1), 1, x.size(3)};
  if (x.ndim() != 4 || !x.is_contiguous() || !(scale.shape() == want) || !(shift.shape() == want) ||
      !scale.is_contiguous() || !shift.is_contiguous() || scale.requires_grad() ||
      shift.requires_grad()) {
    ag::op_error("scale_shift", "expected contiguous x [B, M, K, C] and constant scale/shift " +
                                    want.str() + ", got " + x.shape().str() + ", " +
                                    scale.shape().str() + ", " + shift.shape().str());
  }
  ag::TensorNode* node = nullptr;
  ag::Tensor y = ag::make_output(x.shape(), "scale_shift", scale_shift_backward, {&x}, &node);
  const int64_t rows = x.size(0) * x.size(1), K = x.size(2), C = x.size(3);
  const float *xd = x.data(), *s = scale.data(), *t = shift.data();
  float* yd = y.data();
  // Rows [r0, r1): x * s + t per row (one channel: a loop over the steps that vectorizes).
  for_row_blocks(rows, K * C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) scale_shift_row(xd, s, t, yd, r, K, C);
  });
  if (node) {
    node->in[0] = x;
    node->in[1] = scale;
    node->assigns = 1;  // scale_row_backward writes every dx once
  }
  return y;
}

ag::Tensor add_positional(const ag::Tensor& x, const ag::Tensor& pe) {
  if (x.ndim() != 3 || pe.ndim() != 2 || pe.size(0) != x.size(1) || pe.size(1) != x.size(2) ||
      !x.is_contiguous() || !pe.is_contiguous()) {
    ag::op_error("add_positional", "expected contiguous x [B, N, d] and pe [N, d], got " +
                                       x.shape().str() + " and " + pe.shape().str());
  }
  ag::TensorNode* node = nullptr;
  ag::Tensor y =
      ag::make_output(x.shape(), "add_positional", add_positional_backward, {&x, &pe}, &node);
  const int64_t B = x.size(0), Nd = x.size(1) * x.size(2);
  const float *xd = x.data(), *p = pe.data();
  float* yd = y.data();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < Nd; ++i) yd[b * Nd + i] = xd[b * Nd + i] + p[i];
  }
  if (node) {
    node->in[0] = x;
    node->in[1] = pe;
  }
  return y;
}

}  // namespace attnfc::model::detail
