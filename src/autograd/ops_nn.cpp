// Softmax (with additive, row and boolean masks), layernorm and fused attention.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/attention.hpp"
#include "attnfc/kernels/layernorm.hpp"
#include "attnfc/kernels/softmax.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace {

// ---------------------------------------------------------------- softmax
// y[rows, cols] = softmax(z) along the last axis  ->  dz += y * (dy - <y, dy>)
// in[0]: the contiguous logits (masks already applied in the forward).
void softmax_backward(const TensorNode& n) {
  const int cols = static_cast<int>(n.out.size(-1));
  const int rows = cols > 0 ? static_cast<int>(n.out.numel() / cols) : 0;
  kernels::softmax_backward(n.out.data(), n.out.grad(), n.in[0].grad(), rows, cols);
}

Tensor softmax_rows(const Tensor& x_in, const kernels::RowMask& mask, const char* name) {
  if (x_in.ndim() < 1) op_error(name, "needs at least one dimension");
  const Tensor x = x_in.contiguous();
  TensorNode* node;
  Tensor y = make_output(x.shape(), name, softmax_backward, {&x}, &node);
  const int cols = static_cast<int>(x.size(-1));
  const int rows = cols > 0 ? static_cast<int>(x.numel() / cols) : 0;
  kernels::softmax_forward(x.data(), y.data(), rows, cols, mask);
  if (node) node->in[0] = x;
  return y;
}

// ---------------------------------------------------------------- layernorm
// y = (x - mean) * rstd * gamma + beta over the last axis; saved: mean, rstd [rows].
void layernorm_backward(const TensorNode& n) {
  const Tensor &x = n.in[0], &gamma = n.in[1], &beta = n.in[2];
  const int C = static_cast<int>(x.size(-1));
  const int rows = C > 0 ? static_cast<int>(x.numel() / C) : 0;
  // The kernel always writes dx; give it scratch when x itself needs no gradient.
  float* dx = x.requires_grad() ? x.grad() : scratch_zeros(x.numel());
  kernels::layernorm_backward(n.out.grad(), x.data(), gamma.data(), n.saved[0], n.saved[1], dx,
                              gamma.requires_grad() ? gamma.grad() : nullptr,
                              beta.defined() && beta.requires_grad() ? beta.grad() : nullptr, rows,
                              C);
}

// ---------------------------------------------------------------- attention
kernels::AttnLayout layout_of(const Tensor& t) {
  return kernels::AttnLayout{t.stride(0), t.stride(1), t.stride(2)};
}

// Floats spanned by a strided [B, H, L, D] tensor (for scratch gradients).
int64_t extent_of(const Tensor& t) {
  int64_t e = 1;
  for (int i = 0; i < 4; ++i) e += (t.size(i) - 1) * t.stride(i);
  return e;
}

// iarg: 0 causal; farg: 0 scale; saved[0]: lse [B, H, Lq]; aux: arena copy of key_padding.
kernels::AttnParams attn_params(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
                                float scale, bool causal, const uint8_t* pad) {
  kernels::AttnParams p;
  p.batch = static_cast<int>(q.size(0));
  p.heads = static_cast<int>(q.size(1));
  p.Lq = static_cast<int>(q.size(2));
  p.Lk = static_cast<int>(k.size(2));
  p.head_dim = static_cast<int>(q.size(3));
  p.scale = scale;
  p.causal = causal;
  p.key_padding = pad;
  p.q = layout_of(q);
  p.k = layout_of(k);
  p.v = layout_of(v);
  p.o = layout_of(o);
  return p;
}

void attention_backward(const TensorNode& n) {
  const Tensor &q = n.in[0], &k = n.in[1], &v = n.in[2];
  const kernels::AttnParams p =
      attn_params(q, k, v, n.out, n.farg[0], n.iarg[0] != 0, static_cast<const uint8_t*>(n.aux));
  float* dq = q.requires_grad() ? q.grad() : scratch_zeros(extent_of(q));
  float* dk = k.requires_grad() ? k.grad() : scratch_zeros(extent_of(k));
  float* dv = v.requires_grad() ? v.grad() : scratch_zeros(extent_of(v));
  kernels::attention_backward(p, q.data(), k.data(), v.data(), n.out.data(), n.saved[0],
                              n.out.grad(), dq, dk, dv);
}

}  // namespace

Tensor softmax(const Tensor& x, const Tensor& additive_mask) {
  if (!additive_mask.defined()) return softmax_rows(x, {}, "softmax");
  // softmax(x + mask): the add broadcasts and carries a gradient to a learned mask.
  // -inf entries give y = 0, and the softmax backward then yields exactly 0 there.
  const Tensor z = add(x, additive_mask);
  if (!(z.shape() == x.shape())) {
    op_error("softmax",
             "mask " + additive_mask.shape().str() + " must broadcast to " + x.shape().str());
  }
  return softmax_rows(z, {}, "softmax");
}

Tensor softmax_masked(const Tensor& x, const kernels::RowMask& row_mask) {
  return softmax_rows(x, row_mask, "softmax_masked");
}

Tensor softmax_bool_mask(const Tensor& x_in, const uint8_t* mask, const Shape& mask_shape) {
  if (!mask) return softmax_rows(x_in, {}, "softmax_bool_mask");
  // Check broadcastability of the mask against x.
  if (mask_shape.ndim > x_in.ndim()) {
    op_error("softmax_bool_mask",
             "mask " + mask_shape.str() + " has more dims than " + x_in.shape().str());
  }
  for (int i = 0; i < mask_shape.ndim; ++i) {
    const int64_t m = mask_shape.dims[i], d = x_in.size(x_in.ndim() - mask_shape.ndim + i);
    if (m != 1 && m != d) {
      op_error("softmax_bool_mask",
               "mask " + mask_shape.str() + " does not broadcast to " + x_in.shape().str());
    }
  }
  // Masked logits (-inf where mask != 0) in a contiguous buffer, then a row softmax.
  const Tensor x = x_in.contiguous();
  TensorNode* node;
  Tensor y = make_output(x.shape(), "softmax_bool_mask", softmax_backward, {&x}, &node);
  const detail::Dims4 d = detail::pad_dims(x.shape());
  const detail::Dims4 ms = detail::pad_strides(mask_shape, contiguous_strides(mask_shape));
  const detail::Dims4 xs = detail::pad_strides(x.shape(), x.strides());
  const float ninf = -std::numeric_limits<float>::infinity();
  float* yd = y.data();
  const float* xd = x.data();
  detail::loop4_parallel(d, [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    const int64_t o = detail::offset4(xs, a, b, c, e);
    yd[o] = mask[detail::offset4(ms, a, b, c, e)] ? ninf : xd[o];
  });
  const int cols = static_cast<int>(x.size(-1));
  const int rows = cols > 0 ? static_cast<int>(x.numel() / cols) : 0;
  kernels::softmax_forward(yd, yd, rows, cols);
  if (node) node->in[0] = x;
  return y;
}

Tensor layernorm(const Tensor& x_in, const Tensor& gamma_in, const Tensor& beta_in, float eps) {
  if (x_in.ndim() < 1) op_error("layernorm", "needs at least one dimension");
  const int64_t C = x_in.size(-1);
  if (!gamma_in.defined() || gamma_in.ndim() != 1 || gamma_in.size(0) != C) {
    op_error("layernorm",
             "gamma must be [" + std::to_string(C) + "] for input " + x_in.shape().str());
  }
  if (beta_in.defined() && (beta_in.ndim() != 1 || beta_in.size(0) != C)) {
    op_error("layernorm", "beta must be [" + std::to_string(C) + "], got " + beta_in.shape().str());
  }
  const Tensor x = x_in.contiguous();
  const Tensor gamma = gamma_in.contiguous();
  const Tensor beta = beta_in.defined() ? beta_in.contiguous() : Tensor{};
  TensorNode* node;
  Tensor y = make_output(x.shape(), "layernorm", layernorm_backward, {&x, &gamma, &beta}, &node);
  const int rows = C > 0 ? static_cast<int>(x.numel() / C) : 0;
  float* mean = arena_floats(rows);
  float* rstd = arena_floats(rows);
  kernels::layernorm_forward(x.data(), gamma.data(), beta.defined() ? beta.data() : nullptr,
                             y.data(), mean, rstd, rows, static_cast<int>(C), eps);
  if (node) {
    node->in[0] = x;
    node->in[1] = gamma;
    node->in[2] = beta;
    node->saved[0] = mean;
    node->saved[1] = rstd;
  }
  return y;
}

Tensor scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                    const SdpaOptions& opt) {
  const char* name = "scaled_dot_product_attention";
  if (q_in.ndim() != 4 || k_in.ndim() != 4 || v_in.ndim() != 4) {
    op_error(name, "q, k, v must be [B, H, L, D], got " + q_in.shape().str() + ", " +
                       k_in.shape().str() + ", " + v_in.shape().str());
  }
  const int64_t B = q_in.size(0), H = q_in.size(1), D = q_in.size(3), Lk = k_in.size(2);
  if (k_in.size(0) != B || v_in.size(0) != B || k_in.size(1) != H || v_in.size(1) != H ||
      k_in.size(3) != D || v_in.size(3) != D || v_in.size(2) != Lk) {
    op_error(name, "shapes do not match: q " + q_in.shape().str() + ", k " + k_in.shape().str() +
                       ", v " + v_in.shape().str());
  }
  if (D < 1 || D > 256) op_error(name, "head dim must be in [1, 256], got " + std::to_string(D));
  // The kernel reads rows through strides; only the head dim must be unit-stride.
  auto unit_d = [](const Tensor& t) {
    return t.size(3) == 1 || t.stride(3) == 1 ? t : t.contiguous();
  };
  const Tensor q = unit_d(q_in), k = unit_d(k_in), v = unit_d(v_in);
  TensorNode* node;
  const int64_t Lq = q.size(2);
  Tensor o;
  if (opt.heads_last_output) {
    const Tensor base = make_output({B, Lq, H, D}, name, attention_backward, {&q, &k, &v}, &node);
    o = base.restrided(q.shape(), {Lq * H * D, D, H * D, 1}, 0, node);
    if (node) node->out = o;
  } else {
    o = make_output(q.shape(), name, attention_backward, {&q, &k, &v}, &node);
  }
  float* lse = arena_floats(B * H * q.size(2));
  const uint8_t* pad = nullptr;
  if (opt.key_padding) {
    // Copied: the backward runs after the caller's mask may be gone.
    auto* copy = static_cast<uint8_t*>(arena_alloc(static_cast<size_t>(B * Lk)));
    std::memcpy(copy, opt.key_padding, static_cast<size_t>(B * Lk));
    pad = copy;
  }
  const float scale = opt.scale != 0.0f ? opt.scale : 1.0f / std::sqrt(static_cast<float>(D));
  const kernels::AttnParams p = attn_params(q, k, v, o, scale, opt.causal, pad);
  kernels::attention_forward(p, q.data(), k.data(), v.data(), o.data(), lse);
  if (node) {
    node->in[0] = q;
    node->in[1] = k;
    node->in[2] = v;
    node->saved[0] = lse;
    node->aux = pad;
    node->iarg[0] = opt.causal ? 1 : 0;
    node->farg[0] = scale;
  }
  return o;
}

}  // namespace attnfc::ag
