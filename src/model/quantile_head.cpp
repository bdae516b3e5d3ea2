// The quantile head's non-crossing map and the pinball loss over its levels (model_ops.hpp):
// forward and backward side by side.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "model_ops.hpp"

namespace attnfc::model::detail {

namespace {

// The positive step between neighbouring levels: gap(x) = (x + sqrt(x^2 + 1)) / 2, a smooth
// ReLU like softplus (gap(0) = 1/2, gap -> 0 for x -> -inf, ~x for x -> +inf) built from
// sqrt, which IEEE 754 rounds exactly: the same bits on every CPU and libm, and a fraction of
// the cost of log1p and exp. gap'(x) = (1 + x / sqrt(x^2 + 1)) / 2, in (0, 1).
double gap(double x) {
  return 0.5 * (x + std::sqrt(x * x + 1.0));
}
double gap_slope(double x) {
  return 0.5 * (1.0 + x / std::sqrt(x * x + 1.0));
}

// gap or gap_slope of every value, into a buffer of doubles kept by the thread (it grows
// to the largest head once, then a training step allocates nothing). The elements are
// independent, so these loops vectorize: CMakeLists.txt compiles this file with
// -fno-math-errno (sqrt then needs no errno branch; it rounds correctly either way, so
// the values are those of the scalar loop). The levels' running sums stay serial.
double* scratch(int64_t n) {
  thread_local std::vector<double> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(static_cast<size_t>(n));
  return buffer.data();
}
const double* gaps_of(const float* x, int64_t n) {
  double* g = scratch(n);
  for (int64_t i = 0; i < n; ++i) g[i] = gap(x[i]);
  return g;
}
const double* gap_slopes_of(const float* x, int64_t n) {
  double* g = scratch(n);
  for (int64_t i = 0; i < n; ++i) g[i] = gap_slope(x[i]);
  return g;
}

// in[0] = x [R, Q, C]; iarg[0] = m, the median level.
void monotone_levels_backward(const ag::TensorNode& node) {
  const ag::Tensor& x = node.in[0];
  if (!x.requires_grad()) return;
  const int64_t R = x.size(0), Q = x.size(1), C = x.size(2), m = node.iarg[0];
  const float *xd = x.data(), *dy = node.out.grad();
  float* dx = x.grad();
  const double* slope = gap_slopes_of(xd, x.numel());
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const auto at = [&](int64_t j) { return (r * Q + j) * C + c; };
      // y_j for j > m depends on x_m and x_{m+1..j}: dx_j = gap'(x_j) * sum_{k >= j} dy_k.
      double above = 0, below = 0;
      for (int64_t j = Q - 1; j > m; --j) {
        above += dy[at(j)];
        dx[at(j)] += static_cast<float>(slope[at(j)] * above);
      }
      for (int64_t j = 0; j < m; ++j) {  // y_j = y_{j+1} - gap(x_j)
        below += dy[at(j)];
        dx[at(j)] -= static_cast<float>(slope[at(j)] * below);
      }
      dx[at(m)] += static_cast<float>(above + below + dy[at(m)]);
    }
}

// in: pred [R, Q, C], target [R, C], mask; aux: the Q levels; farg[0]: 1 / (counted * Q).
// d/dp rho_q(y - p) = -q where y > p, 1 - q where y < p (0 at the kink, as quantile_loss).
void pinball_backward(const ag::TensorNode& node) {
  const ag::Tensor &pred = node.in[0], &target = node.in[1], &mask = node.in[2];
  if (!pred.requires_grad()) return;
  const int64_t Q = node.iarg[0], C = target.size(-1), R = target.numel() / C;
  const auto* q = static_cast<const float*>(node.aux);
  const double g = static_cast<double>(node.out.grad()[0]) * node.farg[0];
  const float *p = pred.data(), *y = target.data(), *m = mask.defined() ? mask.data() : nullptr;
  float* dp = pred.grad();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const double w = m ? m[r * C + c] : 1.0;
      if (w == 0.0) continue;
      for (int64_t j = 0; j < Q; ++j) {
        const double u = static_cast<double>(y[r * C + c]) - p[(r * Q + j) * C + c];
        // -q, 1 - q or 0 (exactly; 0 for NaN too), as arithmetic: the signs are random, and
        // GCC turned the ?: chain into branches that missed half the time.
        const double slope = static_cast<double>(u < 0) -
                             static_cast<double>(q[j]) * static_cast<double>(u < 0 || u > 0);
        dp[(r * Q + j) * C + c] += static_cast<float>(g * w * slope);
      }
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
  const double* g = gaps_of(xd, x.numel());
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const auto at = [&](int64_t j) { return (r * Q + j) * C + c; };
      yd[at(m)] = xd[at(m)];
      for (int64_t j = m + 1; j < Q; ++j) yd[at(j)] = static_cast<float>(yd[at(j - 1)] + g[at(j)]);
      for (int64_t j = m - 1; j >= 0; --j) yd[at(j)] = static_cast<float>(yd[at(j + 1)] - g[at(j)]);
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
  if (!pred.is_contiguous() || !target.is_contiguous() || pred.numel() != R * Q * C ||
      (mask.defined() && (!mask.is_contiguous() || mask.numel() != R * C)))
    ag::op_error("pinball_over_levels",
                 "expected contiguous pred [.., H * Q, C] and target/mask "
                 "[.., H, C], got " +
                     pred.shape().str() + " and " + target.shape().str());
  const float *p = pred.data(), *y = target.data(), *m = mask.defined() ? mask.data() : nullptr;
  double total = 0, weight = 0;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const double w = m ? m[r * C + c] : 1.0;
      if (w == 0.0) continue;
      double sum = 0;  // pinball of every level at this value: rho_q(y - p) = max(q u, (q - 1) u)
      for (int64_t j = 0; j < Q; ++j) {  // the max, not a branch: the signs are random
        const double u = static_cast<double>(y[r * C + c]) - p[(r * Q + j) * C + c];
        const double level = levels[j];
        sum += std::max(level * u, (level - 1.0) * u);
      }
      total += w * sum;
      weight += w;
    }
  const double inv = weight > 0 ? 1.0 / (weight * static_cast<double>(Q)) : 0.0;
  ag::TensorNode* node = nullptr;
  ag::Tensor out =
      ag::make_output(ag::Shape{1}, "pinball_over_levels", pinball_backward, {&pred}, &node);
  out.data()[0] = static_cast<float>(total * inv);
  if (node) {
    auto* kept = static_cast<float*>(ag::arena_alloc(sizeof(float) * Q));
    std::copy(levels.begin(), levels.end(), kept);
    node->in[0] = pred;
    node->in[1] = target;
    node->in[2] = mask;
    node->aux = kept;
    node->iarg[0] = Q;
    node->farg[0] = static_cast<float>(inv);
  }
  return out;
}

}  // namespace attnfc::model::detail
