// Packing of op(A) and op(B) blocks into the contiguous, zero-padded panels the
// micro-kernels stream through (see gemm_internal.hpp for the layout).
#include <algorithm>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
// GCC 12's lane-shuffle intrinsics expand through _mm512_undefined_ps(), which
// -Wmaybe-uninitialized misreports once they are inlined here (false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "gemm_internal.hpp"

namespace attnfc::kernels::gemm_detail {
namespace {

#if defined(__AVX512F__)
// In-register transpose of 16 rows of 16 floats: after it, r[c] holds column c.
// Three rounds of lane shuffles (unpack, shuffle_ps, two shuffle_f32x4) per 256 floats.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // u[4q + j] holds columns j, j+4, j+8, j+12 (one per 128-bit chunk) of rows 4q..4q+3.
  for (int j = 0; j < 4; ++j) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 v1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 w0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    r[j] = _mm512_shuffle_f32x4(v0, v1, 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
    r[j + 4] = _mm512_shuffle_f32x4(w0, w1, 0x88);
    r[j + 12] = _mm512_shuffle_f32x4(w0, w1, 0xDD);
  }
}

// dst[k * stride + r] = src[r * ld + k] for r < lanes <= 16 (rows beyond `rows` are
// zero), 16 k at a time through transpose16 with masked edges.
void gather_transpose16(const float* src, long ld, int rows, int kc, int lanes, int stride,
                        float* dst) {
  const __mmask16 out_mask = static_cast<__mmask16>((1u << lanes) - 1u);
  for (int k0 = 0; k0 < kc; k0 += 16) {
    const int kn = std::min(16, kc - k0);
    const __mmask16 in_mask = static_cast<__mmask16>((1u << kn) - 1u);
    __m512 r[16];
    for (int i = 0; i < 16; ++i) {
      r[i] = i < rows ? _mm512_maskz_loadu_ps(in_mask, src + i * ld + k0) : _mm512_setzero_ps();
    }
    transpose16(r);
    for (int t = 0; t < kn; ++t) {
      _mm512_mask_storeu_ps(dst + static_cast<long>(k0 + t) * stride, out_mask, r[t]);
    }
  }
}
#endif

// Gathers a rows x kc block whose rows are strided by ld and whose k is contiguous
// into panel layout dst[k * width + r], zero-filling rows [rows, width).
// Used for op(A) with A row-major and for op(B) with B stored N x K.
// Works on 8 k at a time so each source row is read as whole cache-line pieces.
void gather_transpose(const float* src, long ld, int rows, int kc, int width, float* dst) {
#if defined(__AVX512F__)
  for (int r0 = 0; r0 < width; r0 += 16) {
    const int valid = std::max(0, std::min(16, rows - r0));
    gather_transpose16(valid ? src + r0 * ld : src, ld, valid, kc, std::min(16, width - r0),
                       width, dst + r0);
  }
#else
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
#endif
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
