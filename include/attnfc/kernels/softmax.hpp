#pragma once
// Row softmax over the last axis, with optional causal and key-padding masks.
// A row whose every entry is masked (or -inf) yields all zeros, never NaN.
#include <cstdint>

namespace attnfc::kernels {

struct RowMask {
  // Causal: rows come in matrices of rows_per_matrix rows; row r is query
  // q = r % rows_per_matrix and sees columns j <= q + causal_offset.
  bool causal = false;
  int rows_per_matrix = 0;
  int causal_offset = 0;
  // Key padding: key_padding[(r / rows_per_group) * cols + j] != 0 masks column j.
  const uint8_t* key_padding = nullptr;
  int rows_per_group = 0;
};

// x, y: [rows, cols] contiguous; y may alias x.
void softmax_forward(const float* x, float* y, int rows, int cols, const RowMask& mask = {});
// dx[rows, cols] += y * (dy - <y, dy>)   (masked entries have y = 0, so get 0)
void softmax_backward(const float* y, const float* dy, float* dx, int rows, int cols);

void softmax_forward_reference(const float* x, float* y, int rows, int cols,
                               const RowMask& mask = {});
void softmax_backward_reference(const float* y, const float* dy, float* dx, int rows, int cols);

}  // namespace attnfc::kernels
