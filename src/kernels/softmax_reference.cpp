#include <cmath>
#include <limits>
#include <vector>

#include "attnfc/kernels/softmax.hpp"

namespace attnfc::kernels {

namespace {
bool masked(const RowMask& m, int r, int j, int cols) {
  if (m.causal) {
    const int q = m.rows_per_matrix > 0 ? r % m.rows_per_matrix : r;
    if (j > q + m.causal_offset) return true;
  }
  if (m.key_padding) {
    const int g = m.rows_per_group > 0 ? r / m.rows_per_group : 0;
    if (m.key_padding[static_cast<long>(g) * cols + j]) return true;
  }
  return false;
}
}  // namespace

void softmax_forward_reference(const float* x, float* y, int rows, int cols, const RowMask& mask) {
  std::vector<double> tmp(cols);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<long>(r) * cols;
    float* yr = y + static_cast<long>(r) * cols;
    double mx = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < cols; ++j) {
      tmp[j] = masked(mask, r, j, cols) ? -std::numeric_limits<double>::infinity() : xr[j];
      if (tmp[j] > mx) mx = tmp[j];
    }
    if (mx == -std::numeric_limits<double>::infinity()) {
      for (int j = 0; j < cols; ++j) yr[j] = 0.0f;
      continue;
    }
    double sum = 0.0;
    for (int j = 0; j < cols; ++j) sum += (tmp[j] = std::exp(tmp[j] - mx));
    for (int j = 0; j < cols; ++j) yr[j] = static_cast<float>(tmp[j] / sum);
  }
}

void softmax_backward_reference(const float* y, const float* dy, float* dx, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const long o = static_cast<long>(r) * cols;
    double dot = 0.0;
    for (int j = 0; j < cols; ++j) dot += static_cast<double>(y[o + j]) * dy[o + j];
    for (int j = 0; j < cols; ++j) dx[o + j] += static_cast<float>(y[o + j] * (dy[o + j] - dot));
  }
}

}  // namespace attnfc::kernels
