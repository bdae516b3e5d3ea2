// feed_forward: y = W2 . act(W1 . x + b1) + b2 (act a GELU), one tape node instead of two
// linears. The two-linear form keeps both the pre-activation Z and H = act(Z) (plus, in
// the backward, dH and dZ as gradients); here only Z is kept when H is large: H is then
// recomputed from Z in the backward (one more GELU pass) and H, dH, dZ live in scratch
// memory for the op only. A small H (<= kKeepHiddenFloats) is kept: there the extra
// pass costs more than the memory is worth.
// With a PreNorm and a ResidualDropout (ops.hpp) the LayerNorm in front and the residual
// dropout behind are fused too: neither the normalised input nor the branch output is
// stored (a Transformer block's feed-forward half keeps only Z and its own output).
// The GEMM calls are exactly those of linear(linear(x, W1, b1, act), W2, b2), so the
// results are the same bits.
#include <algorithm>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/activation.hpp"
#include "linear_internal.hpp"

namespace attnfc::ag {

namespace {

constexpr int64_t kKeepHiddenFloats = int64_t{1} << 20;  // 4 MiB
constexpr int64_t kGeluChunkFloats = int64_t{1} << 18;   // 1 MiB, the in-place dZ pass

struct FfnDims {
  int M, in, hidden, out;
};

FfnDims dims_of(const Tensor& x, const Tensor& W1, const Tensor& W2) {
  return FfnDims{static_cast<int>(x.numel() / W1.size(1)), static_cast<int>(W1.size(1)),
                 static_cast<int>(W1.size(0)), static_cast<int>(W2.size(0))};
}

const float* data_or_null(const Tensor& t) {
  return t.defined() ? t.data() : nullptr;
}

// in: x [M, in] (the raw input when normalised), W1 [hidden, in], b1 [hidden]; parts: W2
// [out, hidden], b2 [out], gamma, beta, residual. saved[0]: Z [M, hidden], then mean, rstd
// [2, M] when normalised; saved[1]: H = act(Z) when kept, else null. iarg[0]: activation,
// iarg[1]: fusion flags, iarg[2]: seed; farg[0]: eps, farg[1]: p.
// Backward (dY [M, out]):  dr += dY;  dY2 = dropout'(dY);  H = act(Z)
//   dW2 += dY2^T . H;  db2 += colsum(dY2);  dH = dY2 . W2;  dZ = dH * act'(Z)
//   Xn = layernorm(x) (recomputed);  dW1 += dZ^T . Xn;  db1 += colsum(dZ);  dXn = dZ . W1
//   dx += layernorm'(dXn)
// A recomputed H, then dH, then dZ share one scratch buffer, so the op's scratch peaks at
// one [M, hidden] plus one [M, in].
void feed_forward_backward(const TensorNode& n) {
  const Tensor &x = n.in[0], &W1 = n.in[1], &b1 = n.in[2], &W2 = n.parts[0], &b2 = n.parts[1];
  const Tensor &gamma = n.parts[2], &beta = n.parts[3], &residual = n.parts[4];
  const detail::Fusion f =
      detail::Fusion::decode(n.iarg[1], static_cast<uint64_t>(n.iarg[2]), n.farg[0], n.farg[1]);
  const FfnDims d = dims_of(x, W1, W2);
  const bool tanh = static_cast<kernels::Activation>(n.iarg[0]) == kernels::Activation::GeluTanh;
  const int64_t mh = static_cast<int64_t>(d.M) * d.hidden;
  const float* z = n.saved[0];
  const bool kept = n.saved[1] != nullptr;
  float* dh = scratch_floats(mh);
  const float* h = kept ? n.saved[1] : dh;
  if (!kept) kernels::gelu_forward(z, dh, mh, tanh);
  {
    ScratchScope branch;  // the branch gradient dY2 is needed only up to dH
    const float* dY = n.out.grad();
    const float* dY2 = f.residual ? detail::residual_backward(dY, residual, f, n.out.numel()) : dY;
    if (W2.requires_grad()) {
      kernels::gemm(true, false, d.out, d.hidden, d.M, 1.0f, dY2, d.out, h, d.hidden, 1.0f,
                    W2.grad(), d.hidden);
    }
    if (b2.defined() && b2.requires_grad()) detail::bias_grad(dY2, d.M, d.out, b2.grad());
    // beta = 0: the product is written, not added to zeros (same values, no memset). A
    // recomputed H is dead once dW2 has it.
    kernels::gemm(false, false, d.M, d.hidden, d.out, 1.0f, dY2, d.out, W2.data(), d.hidden, 0.0f,
                  dh, d.hidden);
  }
  float* dz = dh;
  if (kept) {
    dz = scratch_zeros(mh);
    kernels::gelu_backward(z, dh, dz, mh, tanh);
  } else {
    // dZ over dH in place, a chunk at a time through a small zeroed buffer (the kernel
    // accumulates), so the values are those of a zeroed [M, hidden] dZ.
    ScratchScope chunk_scope;
    const int64_t chunk = std::min<int64_t>(mh, kGeluChunkFloats);
    float* tmp = scratch_floats(chunk);
    for (int64_t i = 0; i < mh; i += chunk) {
      const int64_t len = std::min(chunk, mh - i);
      std::fill(tmp, tmp + len, 0.0f);
      kernels::gelu_backward(z + i, dh + i, tmp, len, tanh);
      std::copy(tmp, tmp + len, dh + i);
    }
  }
  float* xn =
      f.norm ? detail::prenorm_forward(x, gamma, beta, f.eps, scratch_floats(2 * d.M)) : nullptr;
  if (W1.requires_grad()) {
    kernels::gemm(true, false, d.hidden, d.in, d.M, 1.0f, dz, d.hidden, f.norm ? xn : x.data(),
                  d.in, 1.0f, W1.grad(), d.in);
  }
  if (b1.defined() && b1.requires_grad()) detail::bias_grad(dz, d.M, d.hidden, b1.grad());
  if (!f.norm) {
    if (x.requires_grad()) {
      kernels::gemm(false, false, d.M, d.in, d.hidden, 1.0f, dz, d.hidden, W1.data(), d.in, 1.0f,
                    x.grad(), d.in);
    }
    return;
  }
  // Xn is dead: its buffer takes dXn, zeroed as the unfused layernorm output's gradient is.
  std::fill(xn, xn + x.numel(), 0.0f);
  kernels::gemm(false, false, d.M, d.in, d.hidden, 1.0f, dz, d.hidden, W1.data(), d.in, 1.0f, xn,
                d.in);
  detail::prenorm_backward(xn, x, gamma, beta, z + mh);
}

bool absent_or_plain_vector(const Tensor& b, int64_t n) {
  return !b.defined() || (b.ndim() == 1 && b.size(0) == n && b.stride(0) == 1);
}

}  // namespace

Tensor feed_forward(const Tensor& x_in, const Tensor& W1, const Tensor& b1, const Tensor& W2,
                    const Tensor& b2, kernels::Activation act) {
  return feed_forward(x_in, PreNorm{}, W1, b1, W2, b2, act, ResidualDropout{});
}

Tensor feed_forward(const Tensor& x_in, const PreNorm& norm, const Tensor& W1, const Tensor& b1,
                    const Tensor& W2, const Tensor& b2, kernels::Activation act,
                    const ResidualDropout& res) {
  const bool gelu = act == kernels::Activation::GeluTanh || act == kernels::Activation::GeluErf;
  const bool shapes_ok = gelu && x_in.ndim() >= 1 && W1.ndim() == 2 && W2.ndim() == 2 &&
                         W1.is_contiguous() && W2.is_contiguous() && x_in.size(-1) == W1.size(1) &&
                         W2.size(1) == W1.size(0) && absent_or_plain_vector(b1, W1.size(0)) &&
                         absent_or_plain_vector(b2, W2.size(0)) && W1.size(1) > 1 &&
                         W1.size(0) > 1 && W2.size(0) > 1 && x_in.numel() > 0;
  Shape ys = x_in.shape();
  if (shapes_ok) ys.dims[ys.ndim - 1] = W2.size(0);
  const bool fusable =
      shapes_ok &&
      should_record({&x_in, &W1, &b1, &W2, &b2, &norm.gamma, &norm.beta, &res.residual}) &&
      detail::fusion_applies(norm, res, W1.size(1), ys, "feed_forward");
  // Inference, other activations and odd layouts: the unfused ops (they check shapes).
  if (!fusable) {
    const Tensor xn =
        norm.gamma.defined() ? layernorm(x_in, norm.gamma, norm.beta, norm.eps) : x_in;
    const Tensor y = linear(linear(xn, W1, b1, act), W2, b2);
    return res.residual.defined() ? add_dropout(res.residual, y, res.p, res.seed, res.training) : y;
  }
  const Tensor x = x_in.contiguous();
  const Tensor r = res.residual.defined() ? res.residual.contiguous() : Tensor{};
  const detail::Fusion f = detail::fusion_of(norm, res);
  const FfnDims d = dims_of(x, W1, W2);
  TensorNode* node;
  Tensor y = make_output(ys, "feed_forward", feed_forward_backward,
                         {&x, &W1, &b1, &W2, &b2, &norm.gamma, &norm.beta, &r}, &node);
  const int64_t mh = static_cast<int64_t>(d.M) * d.hidden;
  float* z = arena_floats(mh + (f.norm ? 2 * d.M : 0));  // Z, then mean and rstd
  const bool keep_h = mh <= kKeepHiddenFloats;
  float* kept = keep_h ? arena_floats(mh) : nullptr;
  {
    ScratchScope scope;
    float* h = keep_h ? kept : scratch_floats(mh);
    {
      ScratchScope norm_scope;  // Xn is needed by the first GEMM only
      const float* xin =
          f.norm ? detail::prenorm_forward(x, norm.gamma, norm.beta, f.eps, z + mh) : x.data();
      kernels::gemm(false, true, d.M, d.hidden, d.in, 1.0f, xin, d.in, W1.data(), d.in, 0.0f, z,
                    d.hidden, kernels::Epilogue{data_or_null(b1), kernels::Activation::None});
    }
    kernels::gelu_forward(z, h, mh, act == kernels::Activation::GeluTanh);
    kernels::gemm(false, true, d.M, d.out, d.hidden, 1.0f, h, d.hidden, W2.data(), d.hidden, 0.0f,
                  y.data(), d.out, kernels::Epilogue{data_or_null(b2), kernels::Activation::None});
  }
  if (f.residual) detail::residual_forward(y.data(), r, f, y.numel());
  auto* extra = static_cast<Tensor*>(arena_alloc(5 * sizeof(Tensor)));
  new (&extra[0]) Tensor(W2);
  new (&extra[1]) Tensor(b2);
  new (&extra[2]) Tensor(norm.gamma);
  new (&extra[3]) Tensor(norm.beta);
  new (&extra[4]) Tensor(r);
  node->in[0] = x;
  node->in[1] = W1;
  node->in[2] = b1;
  node->parts = extra;
  node->num_parts = 5;
  node->saved[0] = z;
  node->saved[1] = kept;
  node->iarg[0] = static_cast<int64_t>(act);
  node->iarg[1] = f.flags();
  node->iarg[2] = static_cast<int64_t>(f.seed);
  node->farg[0] = f.eps;
  node->farg[1] = f.p;
  return y;
}

}  // namespace attnfc::ag
