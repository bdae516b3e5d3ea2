// linear with a PreNorm (LayerNorm recomputed in the backward, only mean/rstd saved) and a
// ResidualDropout (residual + dropout written over the op's output), plus the pieces the
// fused feed-forward shares. The GEMM calls are exactly those of
// add_dropout(r, linear(layernorm(x), W, b)), so the results are the same bits.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/kernels/dropout.hpp"
#include "attnfc/kernels/layernorm.hpp"
#include "linear_internal.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace detail {

namespace {
bool plain_vector(const Tensor& t, int64_t n) {
  return t.ndim() == 1 && t.size(0) == n && t.stride(0) == 1;
}
}  // namespace

bool fusion_applies(const PreNorm& norm, const ResidualDropout& res, int64_t in_features,
                    const Shape& out_shape, const char* op) {
  if (res.residual.defined() && !(res.p >= 0.0f && res.p <= 1.0f)) {
    op_error(op, "dropout probability must be in [0, 1], got " + std::to_string(res.p));
  }
  if (norm.gamma.defined() &&
      (!plain_vector(norm.gamma, in_features) ||
       (norm.beta.defined() && !plain_vector(norm.beta, in_features)) || !(norm.eps > 0.0f))) {
    return false;
  }
  if (res.residual.defined() && (!(res.residual.shape() == out_shape) || res.p >= 1.0f)) {
    return false;
  }
  return true;
}

Fusion fusion_of(const PreNorm& norm, const ResidualDropout& res) {
  Fusion f;
  f.norm = norm.gamma.defined();
  f.eps = norm.eps;
  f.residual = res.residual.defined();
  f.drop = f.residual && res.training && res.p > 0.0f;
  f.p = res.p;
  f.seed = res.seed;
  return f;
}

float* prenorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                       float* stats) {
  const int C = static_cast<int>(x.size(-1));
  const int rows = static_cast<int>(x.numel() / C);
  float* y = scratch_floats(x.numel());
  kernels::layernorm_forward(x.data(), gamma.data(), beta.defined() ? beta.data() : nullptr, y,
                             stats, stats + rows, rows, C, eps);
  return y;
}

void prenorm_backward(const float* dxn, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                      const float* stats) {
  const int C = static_cast<int>(x.size(-1));
  const int rows = static_cast<int>(x.numel() / C);
  if (!x.requires_grad() && !gamma.requires_grad() && !(beta.defined() && beta.requires_grad()))
    return;
  float* dx = x.requires_grad() ? x.grad() : scratch_zeros(x.numel());
  kernels::layernorm_backward(dxn, x.data(), gamma.data(), stats, stats + rows, dx,
                              gamma.requires_grad() ? gamma.grad() : nullptr,
                              beta.defined() && beta.requires_grad() ? beta.grad() : nullptr, rows,
                              C);
}

void residual_forward(float* y, const Tensor& residual, const Fusion& f, int64_t n) {
  if (f.drop) {
    kernels::dropout_forward(y, residual.data(), y, n, f.seed, f.p);
  } else {
    const float* r = residual.data();
    flat_loop(n, [&](int64_t i) { y[i] = r[i] + y[i]; });
  }
}

const float* residual_backward(const float* dy, const Tensor& residual, const Fusion& f,
                               int64_t n) {
  if (residual.requires_grad()) {
    float* dr = residual.grad();
    flat_loop(n, [&](int64_t i) { dr[i] += dy[i]; });
  }
  if (!f.drop) return dy;
  float* g = scratch_zeros(n);
  kernels::dropout_backward(dy, g, n, f.seed, f.p);
  return g;
}

}  // namespace detail

namespace {

// in: x [M, in] (the raw input when normalised), W [out, in], b [out]; parts: gamma, beta,
// residual; saved[0]: mean, rstd [2, M] when normalised. iarg[0]: flags, iarg[1]: seed;
// farg[0]: eps, farg[1]: p. Backward (dY [M, out]):
//   dr += dY;  dZ = dropout'(dY);  Xn = layernorm(x) (recomputed)
//   dW += dZ^T . Xn;  db += colsum(dZ);  dXn = dZ . W;  dx += layernorm'(dXn)
void fused_linear_backward(const TensorNode& n) {
  const Tensor &x = n.in[0], &W = n.in[1], &b = n.in[2];
  const Tensor &gamma = n.parts[0], &beta = n.parts[1], &residual = n.parts[2];
  const detail::Fusion f =
      detail::Fusion::decode(n.iarg[0], static_cast<uint64_t>(n.iarg[1]), n.farg[0], n.farg[1]);
  const int out_f = static_cast<int>(W.size(0)), in_f = static_cast<int>(W.size(1));
  const int M = static_cast<int>(x.numel() / in_f);
  const float* dY = n.out.grad();
  const float* dZ = f.residual ? detail::residual_backward(dY, residual, f, n.out.numel()) : dY;
  float* stats = f.norm ? scratch_floats(2 * static_cast<int64_t>(M)) : nullptr;
  float* xn = f.norm ? detail::prenorm_forward(x, gamma, beta, f.eps, stats) : nullptr;
  const float* xin = f.norm ? xn : x.data();
  if (W.requires_grad()) {
    kernels::gemm(true, false, out_f, in_f, M, 1.0f, dZ, out_f, xin, in_f, 1.0f, W.grad(), in_f);
  }
  if (b.defined() && b.requires_grad()) detail::bias_grad(dZ, M, out_f, b.grad());
  if (!f.norm) {
    if (x.requires_grad()) {
      kernels::gemm(false, false, M, in_f, out_f, 1.0f, dZ, out_f, W.data(), in_f, 1.0f, x.grad(),
                    in_f);
    }
    return;
  }
  // Xn is no longer needed: its buffer takes dXn (zeroed, so the GEMM adds to zeros
  // exactly as it does into the unfused layernorm output's gradient).
  std::fill(xn, xn + x.numel(), 0.0f);
  kernels::gemm(false, false, M, in_f, out_f, 1.0f, dZ, out_f, W.data(), in_f, 1.0f, xn, in_f);
  detail::prenorm_backward(xn, x, gamma, beta, n.saved[0]);
}

}  // namespace

Tensor linear(const Tensor& x_in, const PreNorm& norm, const Tensor& W, const Tensor& b,
              const ResidualDropout& res) {
  const bool shapes_ok =
      W.ndim() == 2 && W.is_contiguous() && x_in.ndim() >= 1 && x_in.size(-1) == W.size(1) &&
      x_in.numel() > 0 &&
      (!b.defined() || (b.ndim() == 1 && b.size(0) == W.size(0) && b.stride(0) == 1));
  Shape ys = x_in.shape();
  if (shapes_ok) ys.dims[ys.ndim - 1] = W.size(0);
  const bool recording = should_record({&x_in, &W, &b, &norm.gamma, &norm.beta, &res.residual});
  if (!shapes_ok || !recording || !detail::fusion_applies(norm, res, W.size(1), ys, "linear")) {
    const Tensor xn =
        norm.gamma.defined() ? layernorm(x_in, norm.gamma, norm.beta, norm.eps) : x_in;
    const Tensor y = linear(xn, W, b);
    return res.residual.defined() ? add_dropout(res.residual, y, res.p, res.seed, res.training) : y;
  }
  const Tensor x = x_in.contiguous();
  const Tensor r = res.residual.defined() ? res.residual.contiguous() : Tensor{};
  const detail::Fusion f = detail::fusion_of(norm, res);
  const int out_f = static_cast<int>(W.size(0)), in_f = static_cast<int>(W.size(1));
  const int M = static_cast<int>(x.numel() / in_f);
  TensorNode* node;
  Tensor y = make_output(ys, "linear_fused", fused_linear_backward,
                         {&x, &W, &b, &norm.gamma, &norm.beta, &r}, &node);
  float* stats = f.norm ? arena_floats(2 * static_cast<int64_t>(M)) : nullptr;
  {
    ScratchScope scope;
    const float* xin =
        f.norm ? detail::prenorm_forward(x, norm.gamma, norm.beta, f.eps, stats) : x.data();
    kernels::gemm(false, true, M, out_f, in_f, 1.0f, xin, in_f, W.data(), in_f, 0.0f, y.data(),
                  out_f,
                  kernels::Epilogue{b.defined() ? b.data() : nullptr, kernels::Activation::None});
  }
  if (f.residual) detail::residual_forward(y.data(), r, f, y.numel());
  auto* extra = static_cast<Tensor*>(arena_alloc(3 * sizeof(Tensor)));
  new (&extra[0]) Tensor(norm.gamma);
  new (&extra[1]) Tensor(norm.beta);
  new (&extra[2]) Tensor(r);
  node->in[0] = x;
  node->in[1] = W;
  node->in[2] = b;
  node->parts = extra;
  node->num_parts = 3;
  node->saved[0] = stats;
  node->iarg[0] = f.flags();
  node->iarg[1] = static_cast<int64_t>(f.seed);
  node->farg[0] = f.eps;
  node->farg[1] = f.p;
  return y;
}

}  // namespace attnfc::ag
