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

// Rows (r, c) are independent in every op here, so they are split into blocks of a fixed
// number of rows r (not a fixed number per thread): the values, and the order of the one
// serial sum (pinball_over_levels' total, taken after the blocks in row order), do not
// depend on the thread count. Inside a block the loops run level by level over the rows, so
// the row loop (contiguous in r, strided by Q in the levels) vectorizes; each element sees
// the same operations in the same order as a row-by-row loop would apply.
constexpr int64_t kBlockRows = 512;
constexpr int64_t kParallelMin = int64_t{1} << 15;  // elements: below this one thread wins

template <class Body>
void for_row_blocks(int64_t R, int64_t per_row, Body&& body) {
  const int64_t blocks = (R + kBlockRows - 1) / kBlockRows;
  const auto run = [&](int64_t b) { body(b * kBlockRows, std::min(R, (b + 1) * kBlockRows)); };
  if (R * per_row < kParallelMin || blocks < 2 || omp_in_parallel()) {
    for (int64_t b = 0; b < blocks; ++b) run(b);
    return;
  }
#pragma omp parallel
  {
    kernels::enable_flush_to_zero();
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) run(b);
  }
}

// A buffer of doubles kept by each thread (it grows to the largest block once, then a
// training step allocates nothing). gap and gap_slope fill it; their elements are
// independent, so these loops vectorize: CMakeLists.txt compiles this file with
// -fno-math-errno (sqrt then needs no errno branch; it rounds correctly either way, so the
// values are those of the scalar loop).
double* scratch(int64_t n) {
  thread_local std::vector<double> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(static_cast<size_t>(n));
  return buffer.data();
}

// One block of rows [r0, r1) of x [R, Q, C]: element (r, j, c) at ((r - r0) Q + j) C + c.
struct Block {
  int64_t r0, rows, Q, C;
  int64_t size() const { return rows * Q * C; }
  int64_t offset() const { return r0 * Q * C; }
};

// Calls f(k, kc) for every row (r, c) of the block at level j: k is the element's index in
// the block, kc the row's index r * C + c over the whole tensor. C == 1 (every
// channel-independent model) gets its own loop, strided by Q, that the compiler vectorizes.
template <class F>
inline void for_level(const Block& b, int64_t j, F&& f) {
  if (b.C == 1) {
    for (int64_t r = 0; r < b.rows; ++r) f(r * b.Q + j, b.r0 + r);
    return;
  }
  for (int64_t r = 0; r < b.rows; ++r)
    for (int64_t c = 0; c < b.C; ++c) f((r * b.Q + j) * b.C + c, (b.r0 + r) * b.C + c);
}

// dst[(r Q + j) C + c] += d[j rows + r C + c] for the block's rows (r, c), rows = its
// number of rows: a level-major buffer added to a row-major gradient, leaving out the rows
// whose skip_zero[r C + c] is 0 (the pinball loss's rows of weight 0).
void add_rows(const Block& b, const double* d, float* dst, const float* skip_zero = nullptr) {
  const int64_t rows = b.rows * b.C;
  for (int64_t i = 0; i < rows; ++i) {
    if (skip_zero && skip_zero[i] == 0.0f) continue;
    const int64_t r = i / b.C, c = i - r * b.C;
    for (int64_t j = 0; j < b.Q; ++j)
      dst[(r * b.Q + j) * b.C + c] += static_cast<float>(d[j * rows + i]);
  }
}

// in[0] = x [R, Q, C]; iarg[0] = m, the median level.
void monotone_levels_backward(const ag::TensorNode& node) {
  const ag::Tensor& x = node.in[0];
  if (!x.requires_grad()) return;
  const int64_t R = x.size(0), Q = x.size(1), C = x.size(2), m = node.iarg[0];
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    const Block b{r0, r1 - r0, Q, C};
    const float* xd = x.data() + b.offset();
    const float* dy = node.out.grad() + b.offset();
    const int64_t first = r0 * C, rows = b.rows * C;  // the block's rows (r, c)
    // Level-major buffers, as in pinball_backward: each level's dx contribution into
    // d [Q, rows], then added to dx row by row.
    double* d = scratch(b.size() + 2 * rows);
    double* above = d + b.size() - first;  // per row: sum_{k >= j} dy_k, levels above m
    double* below = above + rows;          // sum_{k <= j} dy_k, levels below m
    std::fill(above + first, below + first + rows, 0.0);
    // y_j for j > m depends on x_m and x_{m+1..j}: dx_j = gap'(x_j) * sum_{k >= j} dy_k.
    for (int64_t j = Q - 1; j > m; --j) {
      double* dj = d + j * rows - first;
      for_level(b, j, [&](int64_t k, int64_t rc) {
        above[rc] += dy[k];
        dj[rc] = static_cast<float>(gap_slope(xd[k]) * above[rc]);
      });
    }
    for (int64_t j = 0; j < m; ++j) {  // y_j = y_{j+1} - gap(x_j): dx_j -= ...
      double* dj = d + j * rows - first;
      for_level(b, j, [&](int64_t k, int64_t rc) {
        below[rc] += dy[k];
        dj[rc] = -static_cast<float>(gap_slope(xd[k]) * below[rc]);
      });
    }
    double* dm = d + m * rows - first;
    for_level(b, m, [&](int64_t k, int64_t rc) {
      dm[rc] = static_cast<float>(above[rc] + below[rc] + dy[k]);
    });
    add_rows(b, d, x.grad() + b.offset());
  });
}

// in: pred [R, Q, C], target [R, C], mask; aux: the Q levels; farg[0]: 1 / (counted * Q).
// d/dp rho_q(y - p) = -q where y > p, 1 - q where y < p (0 at the kink, as quantile_loss).
void pinball_backward(const ag::TensorNode& node) {
  const ag::Tensor &pred = node.in[0], &target = node.in[1], &mask = node.in[2];
  if (!pred.requires_grad()) return;
  const int64_t Q = node.iarg[0], C = target.size(-1), R = target.numel() / C;
  const auto* q = static_cast<const float*>(node.aux);
  const double g = static_cast<double>(node.out.grad()[0]) * node.farg[0];
  const float *y = target.data(), *w = mask.defined() ? mask.data() : nullptr;
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    const Block b{r0, r1 - r0, Q, C};
    const float* p = pred.data() + b.offset();
    const int64_t first = r0 * C, rows = b.rows * C;  // the block's rows (r, c)
    // Level by level into d [Q, rows] (strided loads vectorize well; strided stores are
    // scatters, slow on AMD), then added to dp row by row, skipping rows of weight 0.
    double* d = scratch(b.size());
    for (int64_t j = 0; j < Q; ++j) {
      const double level = q[j];
      double* dj = d + j * rows - first;
      for_level(b, j, [&](int64_t k, int64_t rc) {
        const double weight = w ? w[rc] : 1.0;
        const double u = static_cast<double>(y[rc]) - p[k];
        // -q, 1 - q or 0 (exactly; 0 for NaN too), as arithmetic: the signs are random, and
        // GCC turned the ?: chain into branches that missed half the time.
        const double slope =
            static_cast<double>(u < 0) - level * static_cast<double>(u < 0 || u > 0);
        dj[rc] = static_cast<float>(g * weight * slope);
      });
    }
    add_rows(b, d, pred.grad() + b.offset(), w ? w + first : nullptr);  // rows of weight 0 stay
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
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    const Block b{r0, r1 - r0, Q, C};
    const float* xd = x.data() + b.offset();
    const int64_t first = r0 * C, rows = b.rows * C;
    // Level by level into t [Q, rows] (contiguous stores), then copied out row by row.
    double* t = scratch(b.size());
    const auto level = [&](int64_t j) { return t + j * rows - first; };
    for_level(b, m, [&](int64_t k, int64_t rc) { level(m)[rc] = xd[k]; });
    for (int64_t j = m + 1; j < Q; ++j) {  // y_j = y_{j-1} + gap(x_j)
      const double* prev = level(j - 1);
      double* tj = level(j);
      for_level(b, j, [&](int64_t k, int64_t rc) {
        tj[rc] = static_cast<float>(static_cast<float>(prev[rc]) + gap(xd[k]));
      });
    }
    for (int64_t j = m - 1; j >= 0; --j) {  // y_j = y_{j+1} - gap(x_j)
      const double* next = level(j + 1);
      double* tj = level(j);
      for_level(b, j, [&](int64_t k, int64_t rc) {
        tj[rc] = static_cast<float>(static_cast<float>(next[rc]) - gap(xd[k]));
      });
    }
    float* yd = y.data() + b.offset();
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = i / C, c = i - r * C;
      for (int64_t j = 0; j < Q; ++j) yd[(r * Q + j) * C + c] = static_cast<float>(t[j * rows + i]);
    }
  });
  if (node) {
    node->in[0] = x;
    node->iarg[0] = m;
  }
  return y;
}

// The pinball of every level at each row (r, c) is summed per row in parallel blocks; the
// rows' sums are then added in row order, as one loop over the rows would.
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
  const float *y = target.data(), *w = mask.defined() ? mask.data() : nullptr;
  double* row_sums = scratch(R * C);  // this thread's buffer; the blocks' threads write it
  std::fill(row_sums, row_sums + R * C, 0.0);
  for_row_blocks(R, Q * C, [&](int64_t r0, int64_t r1) {
    const Block b{r0, r1 - r0, Q, C};
    const float* p = pred.data() + b.offset();
    for (int64_t j = 0; j < Q; ++j) {  // rho_q(y - p) = max(q u, (q - 1) u): the signs are
      const double level = levels[j];  // random, so a max, not a branch
      for_level(b, j, [&](int64_t k, int64_t rc) {
        const double u = static_cast<double>(y[rc]) - p[k];
        row_sums[rc] += std::max(level * u, (level - 1.0) * u);
      });
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
    node->farg[0] = static_cast<float>(inv);
  }
  return out;
}

}  // namespace attnfc::model::detail
