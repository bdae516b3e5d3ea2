// The quantile head's non-crossing map and the pinball loss over its levels (model_ops.hpp):
// forward and backward side by side.
#include <algorithm>
#include <cmath>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "model_ops.hpp"

namespace attnfc::model::detail {

namespace {

// softplus(x) = log(1 + e^x), written so that neither branch overflows.
double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// in[0] = x [R, Q, C]; iarg[0] = m, the median level.
void monotone_levels_backward(const ag::TensorNode& node) {
  const ag::Tensor& x = node.in[0];
  if (!x.requires_grad()) return;
  const int64_t R = x.size(0), Q = x.size(1), C = x.size(2), m = node.iarg[0];
  const float *xd = x.data(), *dy = node.out.grad();
  float* dx = x.grad();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const auto at = [&](int64_t j) { return (r * Q + j) * C + c; };
      // y_j for j > m depends on x_m and x_{m+1..j}: dx_j = sigmoid(x_j) * sum_{k >= j} dy_k.
      double above = 0, below = 0;
      for (int64_t j = Q - 1; j > m; --j) {
        above += dy[at(j)];
        dx[at(j)] += static_cast<float>(sigmoid(xd[at(j)]) * above);
      }
      for (int64_t j = 0; j < m; ++j) {  // y_j = y_{j+1} - softplus(x_j)
        below += dy[at(j)];
        dx[at(j)] -= static_cast<float>(sigmoid(xd[at(j)]) * below);
      }
      dx[at(m)] += static_cast<float>(above + below + dy[at(m)]);
    }
}

}  // namespace

ag::Tensor monotone_levels(const ag::Tensor& x, int median) {
  if (x.ndim() != 3 || !x.is_contiguous() || median < 0 || median >= x.size(1))
    ag::op_error("monotone_levels", "expected contiguous x [R, Q, C] and a median level < Q, got " +
                                        x.shape().str() + " and " + std::to_string(median));
  ag::TensorNode* node = nullptr;
  ag::Tensor y =
      ag::make_output(x.shape(), "monotone_levels", monotone_levels_backward, {&x}, &node);
  const int64_t R = x.size(0), Q = x.size(1), C = x.size(2), m = median;
  const float* xd = x.data();
  float* yd = y.data();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const auto at = [&](int64_t j) { return (r * Q + j) * C + c; };
      yd[at(m)] = xd[at(m)];
      for (int64_t j = m + 1; j < Q; ++j)
        yd[at(j)] = static_cast<float>(yd[at(j - 1)] + softplus(xd[at(j)]));
      for (int64_t j = m - 1; j >= 0; --j)
        yd[at(j)] = static_cast<float>(yd[at(j + 1)] - softplus(xd[at(j)]));
    }
  if (node) {
    node->in[0] = x;
    node->iarg[0] = m;
  }
  return y;
}

ag::Tensor pinball_over_levels(const ag::Tensor& pred, const ag::Tensor& target,
                               const ag::Tensor& mask, const std::vector<float>& levels) {
  const auto Q = static_cast<int64_t>(levels.size());
  const int64_t C = target.size(-1), R = target.numel() / C;
  const ag::Tensor p = pred.reshape({R, Q, C});
  const ag::Tensor t = target.reshape({R, 1, C});
  const ag::Tensor k = mask.defined() ? mask.reshape({R, 1, C}) : ag::Tensor();
  ag::Tensor sum;
  for (int64_t j = 0; j < Q; ++j) {
    const ag::Tensor l = ag::quantile_loss(p.slice(1, j, j + 1), t, levels[j], k);
    sum = sum.defined() ? ag::add(sum, l) : l;
  }
  return ag::scale(sum, 1.0f / static_cast<float>(Q));
}

}  // namespace attnfc::model::detail
