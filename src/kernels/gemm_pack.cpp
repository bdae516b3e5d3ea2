// Packing of op(A) and op(B) blocks into the contiguous, zero-padded panels the
// micro-kernels stream through (see gemm_internal.hpp for the layout).
#include <algorithm>
#include <cstring>

#include "gemm_internal.hpp"

namespace attnfc::kernels::gemm_detail {
namespace {

// Gathers a rows x kc block whose rows are strided by ld and whose k is contiguous
// into panel layout dst[k * width + r], zero-filling rows [rows, width).
// Used for op(A) with A row-major and for op(B) with B stored N x K.
// Works on 8 k at a time so each source row is read as whole cache-line pieces.
void gather_transpose(const float* src, long ld, int rows, int kc, int width, float* dst) {
  int k = 0;
  for (; k + 8 <= kc; k += 8) {
    float* out = dst + static_cast<long>(k) * width;
    for (int r = 0; r < rows; ++r) {
      const float* s = src + r * ld + k;
      for (int t = 0; t < 8; ++t) out[t * width + r] = s[t];
    }
    for (int r = rows; r < width; ++r) {
      for (int t = 0; t < 8; ++t) out[t * width + r] = 0.0f;
    }
  }
  for (; k < kc; ++k) {
    float* out = dst + static_cast<long>(k) * width;
    for (int r = 0; r < rows; ++r) out[r] = src[r * ld + k];
    for (int r = rows; r < width; ++r) out[r] = 0.0f;
  }
}

// Copies kc rows of `cols` contiguous floats (row stride ld) into dst[k * width + c],
// zero-filling columns [cols, width). Used for op(A) with A stored K x M and for
// op(B) with B row-major.
void copy_rows(const float* src, long ld, int cols, int kc, int width, float* dst) {
  if (cols == width) {
    for (int k = 0; k < kc; ++k) {
      std::memcpy(dst + static_cast<long>(k) * width, src + k * ld, sizeof(float) * width);
    }
    return;
  }
  for (int k = 0; k < kc; ++k) {
    float* out = dst + static_cast<long>(k) * width;
    const float* s = src + k * ld;
    for (int c = 0; c < cols; ++c) out[c] = s[c];
    for (int c = cols; c < width; ++c) out[c] = 0.0f;
  }
}

}  // namespace

void pack_a(bool transA, const float* A, int lda, int i0, int mc, int k0, int kc, int mr,
            float* dst) {
  const long ld = lda;
  for (int p = 0; p < mc; p += mr) {
    const int rows = std::min(mr, mc - p);
    float* out = dst + static_cast<long>(p) * kc;
    const int i = i0 + p;
    if (transA) {
      // A is K x M: op(A)[i, k] = A[k * lda + i]; each k gives `rows` contiguous floats.
      copy_rows(A + k0 * ld + i, ld, rows, kc, mr, out);
    } else {
      gather_transpose(A + i * ld + k0, ld, rows, kc, mr, out);
    }
  }
}

void pack_b(bool transB, const float* B, int ldb, int k0, int kc, int j0, int nc, int nr,
            float* dst) {
  const long ld = ldb;
  for (int p = 0; p < nc; p += nr) {
    const int cols = std::min(nr, nc - p);
    float* out = dst + static_cast<long>(p) * kc;
    const int j = j0 + p;
    if (transB) {
      // B is N x K: op(B)[k, j] = B[j * ldb + k].
      gather_transpose(B + j * ld + k0, ld, cols, kc, nr, out);
    } else {
      copy_rows(B + k0 * ld + j, ld, cols, kc, nr, out);
    }
  }
}

}  // namespace attnfc::kernels::gemm_detail
