// feed_forward: y = W2 . act(W1 . x + b1) + b2 (act a GELU), one tape node instead of two
// linears. The two-linear form keeps both the pre-activation Z and H = act(Z) (plus, in
// the backward, dH and dZ as gradients); here only Z is kept when H is large: H is then
// recomputed from Z in the backward (one more GELU pass) and H, dH, dZ live in scratch
// memory for the op only. A small H (<= kKeepHiddenFloats) is kept: there the extra
// pass costs more than the memory is worth.
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

// in: x [M, in], W1 [hidden, in], b1 [hidden]; parts: W2 [out, hidden], b2 [out].
// saved[0]: Z [M, hidden]; saved[1]: H = act(Z) when kept, else null; iarg[0]: the activation.
// Backward (dY [M, out]):  H = act(Z);  dH = dY . W2;  dW2 += dY^T . H;  db2 += colsum(dY)
//                          dZ = dH * act'(Z);  dX += dZ . W1;  dW1 += dZ^T . X;  db1 += colsum(dZ)
void feed_forward_backward(const TensorNode& n) {
  const Tensor &x = n.in[0], &W1 = n.in[1], &b1 = n.in[2], &W2 = n.parts[0], &b2 = n.parts[1];
  const FfnDims d = dims_of(x, W1, W2);
  const bool tanh = static_cast<kernels::Activation>(n.iarg[0]) == kernels::Activation::GeluTanh;
  const int64_t mh = static_cast<int64_t>(d.M) * d.hidden;
  const float* dY = n.out.grad();
  float* h = n.saved[1];
  if (!h) {
    h = scratch_floats(mh);
    kernels::gelu_forward(n.saved[0], h, mh, tanh);
  }
  // beta = 0: the product is written, not added to zeros (same values, no memset).
  float* dh = scratch_floats(mh);
  kernels::gemm(false, false, d.M, d.hidden, d.out, 1.0f, dY, d.out, W2.data(), d.hidden, 0.0f, dh,
                d.hidden);
  if (W2.requires_grad()) {
    kernels::gemm(true, false, d.out, d.hidden, d.M, 1.0f, dY, d.out, h, d.hidden, 1.0f, W2.grad(),
                  d.hidden);
  }
  if (b2.defined() && b2.requires_grad()) detail::bias_grad(dY, d.M, d.out, b2.grad());
  float* dz = n.saved[1] ? scratch_floats(mh) : h;  // a recomputed H is no longer needed
  std::fill(dz, dz + mh, 0.0f);
  kernels::gelu_backward(n.saved[0], dh, dz, mh, tanh);
  if (x.requires_grad()) {
    kernels::gemm(false, false, d.M, d.in, d.hidden, 1.0f, dz, d.hidden, W1.data(), d.in, 1.0f,
                  x.grad(), d.in);
  }
  if (W1.requires_grad()) {
    kernels::gemm(true, false, d.hidden, d.in, d.M, 1.0f, dz, d.hidden, x.data(), d.in, 1.0f,
                  W1.grad(), d.in);
  }
  if (b1.defined() && b1.requires_grad()) detail::bias_grad(dz, d.M, d.hidden, b1.grad());
}

bool plain_vector(const Tensor& b, int64_t n) {
  return !b.defined() || (b.ndim() == 1 && b.size(0) == n && b.stride(0) == 1);
}

}  // namespace

Tensor feed_forward(const Tensor& x_in, const Tensor& W1, const Tensor& b1, const Tensor& W2,
                    const Tensor& b2, kernels::Activation act) {
  const bool gelu = act == kernels::Activation::GeluTanh || act == kernels::Activation::GeluErf;
  const bool fusable = gelu && x_in.ndim() >= 1 && W1.ndim() == 2 && W2.ndim() == 2 &&
                       W1.is_contiguous() && W2.is_contiguous() && x_in.size(-1) == W1.size(1) &&
                       W2.size(1) == W1.size(0) && plain_vector(b1, W1.size(0)) &&
                       plain_vector(b2, W2.size(0)) && W1.size(1) > 1 && W1.size(0) > 1 &&
                       W2.size(0) > 1 && x_in.numel() > 0 &&
                       should_record({&x_in, &W1, &b1, &W2, &b2});
  // Inference, other activations and odd layouts: the two linears (they check shapes).
  if (!fusable) return linear(linear(x_in, W1, b1, act), W2, b2);
  const Tensor x = x_in.contiguous();
  const FfnDims d = dims_of(x, W1, W2);
  Shape ys = x.shape();
  ys.dims[ys.ndim - 1] = d.out;
  TensorNode* node;
  Tensor y =
      make_output(ys, "feed_forward", feed_forward_backward, {&x, &W1, &b1, &W2, &b2}, &node);
  const int64_t mh = static_cast<int64_t>(d.M) * d.hidden;
  float* z = arena_floats(mh);
  kernels::gemm(false, true, d.M, d.hidden, d.in, 1.0f, x.data(), d.in, W1.data(), d.in, 0.0f, z,
                d.hidden, kernels::Epilogue{data_or_null(b1), kernels::Activation::None});
  const bool keep_h = mh <= kKeepHiddenFloats;
  float* kept = keep_h ? arena_floats(mh) : nullptr;
  {
    ScratchScope scope;
    float* h = keep_h ? kept : scratch_floats(mh);
    kernels::gelu_forward(z, h, mh, act == kernels::Activation::GeluTanh);
    kernels::gemm(false, true, d.M, d.out, d.hidden, 1.0f, h, d.hidden, W2.data(), d.hidden, 0.0f,
                  y.data(), d.out, kernels::Epilogue{data_or_null(b2), kernels::Activation::None});
  }
  auto* extra = static_cast<Tensor*>(arena_alloc(2 * sizeof(Tensor)));
  new (&extra[0]) Tensor(W2);
  new (&extra[1]) Tensor(b2);
  node->in[0] = x;
  node->in[1] = W1;
  node->in[2] = b1;
  node->parts = extra;
  node->num_parts = 2;
  node->saved[0] = z;
  node->saved[1] = kept;
  node->iarg[0] = static_cast<int64_t>(act);
  return y;
}

}  // namespace attnfc::ag
