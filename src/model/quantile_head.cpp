// The quantile head's non-crossing map and the pinball loss over its levels (model_ops.hpp):
// forward and backward side by side.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/threading.hpp"
#include "model_ops.hpp"
#include "row_blocks.hpp"

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

// Rows r are independent in every op here, and run in blocks (row_blocks.hpp): the values,
// and the order of the one serial sum (pinball_over_levels' total, taken after the blocks in
// row order), do not depend on the thread count. x [R, Q, C] holds a row's Q levels one after
// another, each C values contiguous (the model's C is its H steps times its channels), so
// every loop below runs over c, contiguous, and vectorizes; each element sees the operations
// a loop over (r, c), level by level, would apply, in the same order.

// A buffer of doubles kept by each thread (it grows to the largest request once, then a
// training step allocates nothing). gap and gap_slope run on contiguous values, so their
// loops vectorize: CMakeLists.txt compiles this file with -fno-math-errno (sqrt then needs
// no errno branch; it rounds correctly either way, so the values are the scalar loop's).
double* scratch(int64_t n) {
  thread_local std::vector<double> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(static_cast<size_t>(n));
  return buffer.data();
}

// One row's backward through the non-crossing map: x, dy, dx point at its Q levels of C.
// Writes every dx once (kFresh: into an unzeroed slot, ag::grad_store).
template <bool kFresh>
void monotone_row_backward(const float* __restrict x, const float* __restrict dy,
                           float* __restrict dx, int64_t Q, int64_t C, int64_t m) {
  double* __restrict above = scratch(2 * C);  // sum_{k >= j} dy_k over the levels above m
  double* __restrict below = above + C;       // sum_{k <= j} dy_k over the levels below m
  std::fill(above, above + 2 * C, 0.0);
  // y_j for j > m depends on x_m and x_{m+1..j}: dx_j = gap'(x_j) * sum_{k >= j} dy_k.
  for (int64_t j = Q - 1; j > m; --j) {
    const int64_t o = j * C;
    for (int64_t c = 0; c < C; ++c) {
      above[c] += dy[o + c];
      ag::grad_store<kFresh>(dx[o + c], static_cast<float>(gap_slope(x[o + c]) * above[c]));
    }
  }
  for (int64_t j = 0; j < m; ++j) {  // y_j = y_{j+1} - gap(x_j): dx_j -= ...
    const int64_t o = j * C;
    for (int64_t c = 0; c < C; ++c) {
      below[c] += dy[o + c];
      ag::grad_store<kFresh>(dx[o + c], -static_cast<float>(gap_slope(x[o + c]) * below[c]));
    }
  }
  const int64_t o = m * C;
  for (int64_t c = 0; c < C; ++c)
    ag::grad_store<kFresh>(dx[o + c], static_cast<float>(above[c] + below[c] + dy[o + c]));
}

// in[0] = x [R, Q, C]; iarg[0] = m, the median level.
void monotone_levels_backward(const ag::TensorNode& node) {
  const ag::Tensor& x = node.in[0];
  if (!x.requires_grad()) return;
  const int64_t R = x.size(0), Q = x.size(1), C = x.size(2), m = node.iarg[0];
  const float *xd = x.data(), *dy = node.out.grad();
  float* dx = x.grad();
  const bool fresh = ag::grad_is_fresh(x);
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r * Q * C;
      if (fresh)
        monotone_row_backward<true>(xd + o, dy + o, dx + o, Q, C, m);
      else
        monotone_row_backward<false>(xd + o, dy + o, dx + o, Q, C, m);
    }
  });
}

// One row's pinball gradient: p, dp at its Q levels of C; y, w at its C targets (kMasked
// false: all counted). d/dp rho_q(y - p) = -q where y > p, 1 - q where y < p (0 at the kink,
// as quantile_loss).
template <bool kMasked, bool kFresh>
void pinball_row_backward(const float* __restrict p, const float* __restrict y,
                          const float* __restrict w, float* __restrict dp, const float* q,
                          int64_t Q, int64_t C, int64_t skip, double g) {
  for (int64_t j = 0; j < Q; ++j) {
    const double level = q[j];
    const int64_t o = j * C;
    if (j == skip) {  // not in this loss: a zero gradient
      if constexpr (kFresh) std::fill_n(dp + o, C, 0.0f);
      continue;
    }
    for (int64_t c = 0; c < C; ++c) {
      const double weight = kMasked ? static_cast<double>(w[c]) : 1.0;
      const double u = static_cast<double>(y[c]) - p[o + c];
      // -q, 1 - q or 0 (exactly; 0 for NaN too) as arithmetic: the signs are random, and
      // branches missed half the time.
      const double slope = static_cast<double>(u < 0.0) -
                           level * (static_cast<double>(u < 0.0) + static_cast<double>(u > 0.0));
      // A value of weight 0 gets g * 0 * slope = +-0 (slope is finite, NaN targets included),
      // which leaves every gradient but -0 as it is; pred feeds only this loss, so its
      // gradient is +0 here. (A select that skipped it became a branch: scalar, 3x slower.)
      ag::grad_store<kFresh>(dp[o + c], static_cast<float>(g * weight * slope));
    }
  }
}

// in: pred [R, Q, C], target [R, C], mask; aux: the Q levels; iarg: Q, the level left out
// (-1: none); farg[0]: 1 / (counted * Q).
void pinball_backward(const ag::TensorNode& node) {
  const ag::Tensor &pred = node.in[0], &target = node.in[1], &mask = node.in[2];
  if (!pred.requires_grad()) return;
  const int64_t Q = node.iarg[0], skip = node.iarg[1], C = target.size(-1), R = target.numel() / C;
  const auto* q = static_cast<const float*>(node.aux);
  const double g = static_cast<double>(node.out.grad()[0]) * node.farg[0];
  const float *y = target.data(), *w = mask.defined() ? mask.data() : nullptr;
  const float* p = pred.data();
  float* dp = pred.grad();
  const bool fresh = ag::grad_is_fresh(pred);
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float *pr = p + r * Q * C, *yr = y + r * C, *wr = w ? w + r * C : nullptr;
      float* dr = dp + r * Q * C;
      if (w && fresh)
        pinball_row_backward<true, true>(pr, yr, wr, dr, q, Q, C, skip, g);
      else if (w)
        pinball_row_backward<true, false>(pr, yr, wr, dr, q, Q, C, skip, g);
      else if (fresh)
        pinball_row_backward<false, true>(pr, yr, wr, dr, q, Q, C, skip, g);
      else
        pinball_row_backward<false, false>(pr, yr, wr, dr, q, Q, C, skip, g);
    }
  });
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
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* __restrict xr = xd + r * Q * C;
      float* __restrict yr = yd + r * Q * C;
      std::copy_n(xr + m * C, C, yr + m * C);
      for (int64_t j = m + 1; j < Q; ++j)  // y_j = y_{j-1} + gap(x_j)
        for (int64_t c = 0; c < C; ++c)
          yr[j * C + c] = static_cast<float>(yr[(j - 1) * C + c] + gap(xr[j * C + c]));
      for (int64_t j = m - 1; j >= 0; --j)  // y_j = y_{j+1} - gap(x_j)
        for (int64_t c = 0; c < C; ++c)
          yr[j * C + c] = static_cast<float>(yr[(j + 1) * C + c] - gap(xr[j * C + c]));
    }
  });
  if (node) {
    node->in[0] = x;
    node->iarg[0] = m;
    node->assigns = 1;  // monotone_row_backward writes every dx once
  }
  return y;
}

// The pinball of every level at each row (r, c) is summed per row in parallel blocks; the
// rows' sums are then added in row order, as one loop over the rows would.
ag::Tensor pinball_over_levels(const ag::Tensor& pred, const ag::Tensor& target,
                               const ag::Tensor& mask, const std::vector<float>& levels, int skip) {
  const auto Q = static_cast<int64_t>(levels.size());
  const int64_t C = target.size(-1), R = target.numel() / C;
  if (!pred.is_contiguous() || !target.is_contiguous() || pred.numel() != R * Q * C ||
      (mask.defined() && (!mask.is_contiguous() || mask.numel() != R * C)))
    ag::op_error("pinball_over_levels",
                 "expected contiguous pred [R, Q * C] and target/mask [R, C], got " +
                     pred.shape().str() + " and " + target.shape().str());
  const float *y = target.data(), *w = mask.defined() ? mask.data() : nullptr;
  double* row_sums = scratch(R * C);  // this thread's buffer; the blocks' threads write it
  std::fill(row_sums, row_sums + R * C, 0.0);
  const float* p = pred.data();
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      double* __restrict sums = row_sums + r * C;
      const float* __restrict yr = y + r * C;
      for (int64_t j = 0; j < Q; ++j) {
        if (j == skip) continue;  // scored elsewhere (quantile_positions "last")
        // rho_q(y - p) = max(q u, (q - 1) u): the signs are random, so a max, not a branch.
        const double level = levels[j];
        const float* __restrict pj = p + (r * Q + j) * C;
        for (int64_t c = 0; c < C; ++c) {
          const double u = static_cast<double>(yr[c]) - pj[c];
          sums[c] += std::max(level * u, (level - 1.0) * u);
        }
      }
    }
  });
  double total = 0, weight = 0;
  for (int64_t rc = 0; rc < R * C; ++rc) {
    const double wr = w ? w[rc] : 1.0;
    if (wr == 0.0) continue;
    total += wr * row_sums[rc];
    weight += wr;
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
    node->iarg[1] = skip;
    node->farg[0] = static_cast<float>(inv);
    node->assigns = 1;  // pinball_row_backward writes every dp once
  }
  return out;
}

}  // namespace attnfc::model::detail
