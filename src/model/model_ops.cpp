// Fused model ops (see model_ops.hpp): forward and backward side by side.
#include "model_ops.hpp"

#include "attnfc/autograd/engine.hpp"

namespace attnfc::model::detail {

namespace {

// in[0] = x [B, M, K, C], in[1] = scale [B, M, 1, C].
void scale_shift_backward(const ag::TensorNode& node) {
  const ag::Tensor& x = node.in[0];
  if (!x.requires_grad()) return;
  const ag::Tensor& scale = node.in[1];
  const int64_t rows = x.size(0) * x.size(1), K = x.size(2), C = x.size(3);
  const float* dy = node.out.grad();
  float* dx = x.grad();
  const float* s = scale.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* sr = s + r * C;
    for (int64_t k = 0; k < K; ++k) {
      const int64_t o = (r * K + k) * C;
      for (int64_t c = 0; c < C; ++c) dx[o + c] += dy[o + c] * sr[c];
    }
  }
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

}  // namespace

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
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < K; ++k) {
      const int64_t o = (r * K + k) * C;
      for (int64_t c = 0; c < C; ++c) yd[o + c] = xd[o + c] * s[r * C + c] + t[r * C + c];
    }
  }
  if (node) {
    node->in[0] = x;
    node->in[1] = scale;
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
