// Row softmax: three vectorised passes per row (max, exp + sum, scale), rows in
// parallel. Masked entries (causal / key padding) are loaded as -inf, so exp
// turns them into exact zeros; a row with no visible entry is written as zeros.
#include "isa.hpp"

#include "attnfc/kernels/softmax.hpp"

#include <algorithm>

#include "parallel.hpp"
#include "simd_math.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

namespace {
using namespace simd;

// Softmax of x[0, visible) with optional padding bytes; y[visible, cols) = 0.
void softmax_row(const float* x, float* y, int cols, int visible, const uint8_t* pad) {
  auto lane_mask = [&](int j) {
    const int n = visible - j;
    return pad ? keep_mask(pad + j, n) : tail_mask(n);
  };
  // Pass 1: the row maximum (masked lanes read as -inf).
  VF mx0 = set1(-kInf), mx1 = set1(-kInf);
  int j = 0;
  if (!pad) {
    for (; j + 2 * kLanes <= visible; j += 2 * kLanes) {
      mx0 = max(mx0, load(x + j));
      mx1 = max(mx1, load(x + j + kLanes));
    }
  }
  for (; j < visible; j += kLanes) mx0 = max(mx0, load(x + j, lane_mask(j), -kInf));
  const float m = reduce_max(max(mx0, mx1));
  if (!(m > -kInf)) {  // every entry masked or -inf
    std::fill(y, y + cols, 0.0f);
    return;
  }
  // Pass 2: e = exp(x - max), stored into y, summed in two fixed lanes sets.
  const VF vm = set1(m);
  VF s0 = zero(), s1 = zero();
  j = 0;
  if (!pad) {
    for (; j + 2 * kLanes <= visible; j += 2 * kLanes) {
      const VF e0 = exp(sub(load(x + j), vm));
      const VF e1 = exp(sub(load(x + j + kLanes), vm));
      store(y + j, e0);
      store(y + j + kLanes, e1);
      s0 = add(s0, e0);
      s1 = add(s1, e1);
    }
  }
  for (; j < visible; j += kLanes) {
    const int n = std::min(kLanes, visible - j);
    const VF e = exp(sub(load(x + j, lane_mask(j), -kInf), vm));
    store(y + j, e, tail_mask(n));
    s0 = add(s0, e);
  }
  // Pass 3: normalise.
  const VF inv = set1(1.0f / reduce_add(add(s0, s1)));
  for (j = 0; j < visible; j += kLanes) {
    const Mask t = tail_mask(visible - j);
    store(y + j, mul(load(y + j, t), inv), t);
  }
  std::fill(y + visible, y + cols, 0.0f);
}
}  // namespace

void softmax_forward(const float* x, float* y, int rows, int cols, const RowMask& mask) {
  if (rows <= 0 || cols <= 0) return;
  detail::parallel_for(rows, 8 * static_cast<int64_t>(cols), [&](int64_t r) {
    int visible = cols;
    if (mask.causal) {
      const int64_t q = mask.rows_per_matrix > 0 ? r % mask.rows_per_matrix : r;
      visible = static_cast<int>(std::clamp<int64_t>(q + mask.causal_offset + 1, 0, cols));
    }
    const uint8_t* pad = nullptr;
    if (mask.key_padding) {
      const int64_t g = mask.rows_per_group > 0 ? r / mask.rows_per_group : 0;
      pad = mask.key_padding + g * cols;
    }
    softmax_row(x + r * cols, y + r * cols, cols, visible, pad);
  });
}

void softmax_backward(const float* y, const float* dy, float* dx, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  detail::parallel_for(rows, 4 * static_cast<int64_t>(cols), [&](int64_t r) {
    const float* yr = y + r * cols;
    const float* gr = dy + r * cols;
    float* dr = dx + r * cols;
    VF acc0 = zero(), acc1 = zero();
    int j = 0;
    for (; j + 2 * kLanes <= cols; j += 2 * kLanes) {
      acc0 = fmadd(load(yr + j), load(gr + j), acc0);
      acc1 = fmadd(load(yr + j + kLanes), load(gr + j + kLanes), acc1);
    }
    for (; j < cols; j += kLanes) {
      const Mask t = tail_mask(cols - j);
      acc0 = fmadd(load(yr + j, t), load(gr + j, t), acc0);
    }
    const VF dot = set1(reduce_add(add(acc0, acc1)));
    for (j = 0; j < cols; j += kLanes) {
      const Mask t = tail_mask(cols - j);
      const VF g = fmadd(load(yr + j, t), sub(load(gr + j, t), dot), load(dr + j, t));
      store(dr + j, g, t);
    }
  });
}

}  // namespace attnfc::kernels::ATTNFC_ISA
