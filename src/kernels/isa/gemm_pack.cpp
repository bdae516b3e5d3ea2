// Packing of op(A) and op(B) blocks into the contiguous, zero-padded panels the
// micro-kernels stream through (see gemm_internal.hpp for the layout).
#include "isa.hpp"

#include <algorithm>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
// GCC 12's lane-shuffle intrinsics expand through _mm512_undefined_ps(), which
// -Wmaybe-uninitialized misreports once they are inlined here (false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#elif defined(__AVX2__)
#include <immintrin.h>
#endif

#include "gemm_internal.hpp"

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

// Rows ahead that the row-copy packers prefetch: source rows are far apart (often a
// page or more), so the hardware prefetcher does not follow them.
constexpr int kPrefetchRows = 6;

#if defined(__AVX2__)
// Lanes [0, n) set.
inline __m256i lane_mask8(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Lanes 0-5 of v to d[0..5]: two plain stores (a masked store is microcoded and slow on
// AMD cores).
inline void store6(float* d, __m256 v) {
  _mm_storeu_ps(d, _mm256_castps256_ps128(v));
  _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), _mm256_extractf128_ps(v, 1));
}
#endif

#if defined(__AVX512F__)
// In-register transpose of 16 rows of 16 floats: after it, r[c] holds column c.
// Three rounds of lane shuffles (unpack, shuffle_ps, two shuffle_f32x4) per 256 floats.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // u[4q + j] holds columns j, j+4, j+8, j+12 (one per 128-bit chunk) of rows 4q..4q+3.
#pragma GCC unroll 4
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
    // Fully unrolled with constant indices so that r[] lives in registers.
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      r[i] = i < rows ? _mm512_maskz_loadu_ps(in_mask, src + i * ld + k0) : _mm512_setzero_ps();
    }
    transpose16(r);
#pragma GCC unroll 16
    for (int t = 0; t < 16; ++t) {
      if (t < kn) _mm512_mask_storeu_ps(dst + static_cast<long>(k0 + t) * stride, out_mask, r[t]);
    }
  }
}
#elif defined(__AVX2__)
// In-register transpose of 8 rows of 8 floats: after it, r[c] holds column c.
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4q + j] holds columns j and j+4 (one per 128-bit half) of rows 4q..4q+3.
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[j + 4] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

// dst[k * stride + r] = src[r * ld + k] for r < lanes <= 8 (rows beyond `rows` are
// zero), 8 k at a time through transpose8 with masked edges.
void gather_transpose8(const float* src, long ld, int rows, int kc, int lanes, int stride,
                       float* dst) {
  const __m256i out_mask = lane_mask8(lanes);
  for (int k0 = 0; k0 < kc; k0 += 8) {
    const int kn = std::min(8, kc - k0);
    const __m256i in_mask = lane_mask8(kn);
    __m256 r[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      if (i >= rows) {
        r[i] = _mm256_setzero_ps();
      } else {
        const float* s = src + i * ld + k0;
        r[i] = kn == 8 ? _mm256_loadu_ps(s) : _mm256_maskload_ps(s, in_mask);
      }
    }
    transpose8(r);
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) {
      float* d = dst + static_cast<long>(k0 + t) * stride;
      if (t >= kn) break;
      if (lanes == 8) {
        _mm256_storeu_ps(d, r[t]);
      } else {
        _mm256_maskstore_ps(d, out_mask, r[t]);
      }
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
    gather_transpose16(valid ? src + r0 * ld : src, ld, valid, kc, std::min(16, width - r0), width,
                       dst + r0);
  }
#elif defined(__AVX2__)
  for (int r0 = 0; r0 < width; r0 += 8) {
    const int valid = std::max(0, std::min(8, rows - r0));
    gather_transpose8(valid ? src + r0 * ld : src, ld, valid, kc, std::min(8, width - r0), width,
                      dst + r0);
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

#if defined(__AVX512F__)
// Panels of 12 (op(A) of TN into the AVX-512 kernel's layout). Four k rows of one
// panel are 48 floats, three whole cache lines, written by three full-vector stores.
// Row by row, each panel would get 48 bytes, part of a line; and since panels lie
// 12 * kc * 4 bytes apart (a multiple of 4 KiB when kc is a multiple of 4), every
// panel maps to the same L1 set, so lines were evicted and fetched again before they
// were complete (10 GB/s from a hot source, against ~40 here).
void copy_rows_block12(const float* src, long ld, int nc, int kc, float* dst) {
  // r0[0..11] r1[0..3] | r1[4..11] r2[0..7] | r2[8..11] r3[0..11]: indices >= 16 pick
  // from the second source.
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19);
  const __m512i second =
      _mm512_setr_epi32(4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i third =
      _mm512_setr_epi32(8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27);
  const long panel_stride = 12L * kc;
  int k = 0;
  for (; k + 4 <= kc; k += 4) {
    const float* s = src + k * ld;
    if (k + 4 + kPrefetchRows < kc) {
      for (int r = 4; r < 8; ++r) {
        const float* ahead = s + (kPrefetchRows + r) * ld;
        for (int j = 0; j < nc; j += 16) __builtin_prefetch(ahead + j);
        __builtin_prefetch(ahead + nc - 1);
      }
    }
    float* d = dst + static_cast<long>(k) * 12;
    for (int c0 = 0; c0 < nc; c0 += 12, d += panel_stride) {
      const int n = std::min(12, nc - c0);
      const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
      const __m512 r0 = _mm512_maskz_loadu_ps(m, s + c0);
      const __m512 r1 = _mm512_maskz_loadu_ps(m, s + ld + c0);
      const __m512 r2 = _mm512_maskz_loadu_ps(m, s + 2 * ld + c0);
      const __m512 r3 = _mm512_maskz_loadu_ps(m, s + 3 * ld + c0);
      _mm512_storeu_ps(d, _mm512_permutex2var_ps(r0, first, r1));
      _mm512_storeu_ps(d + 16, _mm512_permutex2var_ps(r1, second, r2));
      _mm512_storeu_ps(d + 32, _mm512_permutex2var_ps(r2, third, r3));
    }
  }
  for (; k < kc; ++k) {
    float* d = dst + static_cast<long>(k) * 12;
    for (int c0 = 0; c0 < nc; c0 += 12, d += panel_stride) {
      const int n = std::min(12, nc - c0);
      const __m512 r =
          _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), src + k * ld + c0);
      _mm512_mask_storeu_ps(d, 0x0FFF, r);
    }
  }
}
#endif

#if defined(__AVX2__)
// Panels of 6 (op(A) of TN into the AVX2 kernel's layout). The reason is the one given
// for copy_rows_block12: with kc a multiple of 8, panels lie 6 * kc * 4 bytes apart,
// on two L1 sets only, so writing 24 bytes per panel and k row had lines evicted before
// they were complete (the pack was a third of a TN 384x128x4096 product). Eight k rows
// of one panel are 48 floats, three whole lines, written together: each row's 8-float
// store spills two floats that the next row overwrites; the eighth row's does not.
void copy_rows_block6(const float* src, long ld, int nc, int kc, float* dst) {
  const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
  const long panel_stride = 6L * kc;
  const int panels = (nc + 5) / 6;
  int k = 0;
  for (; k + 8 <= kc; k += 8) {
    const float* s = src + k * ld;
    if (k + 16 <= kc) {
      for (int r = 8; r < 16; ++r) {
        for (int j = 0; j < nc; j += 16) __builtin_prefetch(s + r * ld + j);
        __builtin_prefetch(s + r * ld + nc - 1);
      }
    }
    float* d = dst + static_cast<long>(k) * 6;
    for (int p = 0; p < panels; ++p, d += panel_stride) {
      const int c0 = 6 * p;
      // An 8-float load stays inside the row only away from its end.
      const bool wide = c0 + 8 <= nc;
      const __m256i in = wide ? six : lane_mask8(std::min(6, nc - c0));
#pragma GCC unroll 8
      for (int t = 0; t < 8; ++t) {
        const float* row = s + t * ld + c0;
        const __m256 v = wide ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, in);
        if (t < 7) {
          _mm256_storeu_ps(d + 6 * t, v);
        } else {
          store6(d + 6 * t, v);
        }
      }
    }
  }
  for (; k < kc; ++k) {
    float* d = dst + static_cast<long>(k) * 6;
    for (int c0 = 0; c0 < nc; c0 += 6, d += panel_stride) {
      store6(d, _mm256_maskload_ps(src + k * ld + c0, lane_mask8(std::min(6, nc - c0))));
    }
  }
}
#endif

// Copies a kc x nc block whose k rows are contiguous in memory (row stride ld) into
// panels of W columns, one source row at a time so memory is read in order
// (walking one narrow panel at a time would touch a new page for every k).
// W is a compile-time constant so each panel row is a few vector moves, not a call.
template <int W>
void copy_rows_block(const float* src, long ld, int nc, int kc, float* dst) {
  const int full = nc / W;
  const int tail = nc - full * W;
  const long panel_stride = static_cast<long>(W) * kc;
  for (int k = 0; k < kc; ++k) {
    const float* s = src + k * ld;
    float* d = dst + static_cast<long>(k) * W;
    // Rows are far apart (often a page or more), so the hardware prefetcher does not
    // follow; fetch the row kPrefetchRows ahead ourselves.
    if (k + kPrefetchRows < kc) {
      const float* ahead = s + kPrefetchRows * ld;
      for (int j = 0; j < nc; j += 16) {
        __builtin_prefetch(ahead + j);
      }
      __builtin_prefetch(ahead + nc - 1);
    }
    for (int p = 0; p < full; ++p) {
      std::memcpy(d + p * panel_stride, s + p * W, sizeof(float) * W);
    }
    if (tail) {
      float* out = d + full * panel_stride;
      const float* in = s + full * W;
      for (int c = 0; c < tail; ++c) out[c] = in[c];
      for (int c = tail; c < W; ++c) out[c] = 0.0f;
    }
  }
}

void copy_rows_block(const float* src, long ld, int nc, int kc, int width, float* dst) {
  switch (width) {
    case 4:
      return copy_rows_block<4>(src, ld, nc, kc, dst);
    case 6:
#if defined(__AVX2__)
      return copy_rows_block6(src, ld, nc, kc, dst);
#else
      return copy_rows_block<6>(src, ld, nc, kc, dst);
#endif
    case 8:
      return copy_rows_block<8>(src, ld, nc, kc, dst);
    case 12:
#if defined(__AVX512F__)
      return copy_rows_block12(src, ld, nc, kc, dst);
#else
      return copy_rows_block<12>(src, ld, nc, kc, dst);
#endif
    case 16:
      return copy_rows_block<16>(src, ld, nc, kc, dst);
    case 32:
      return copy_rows_block<32>(src, ld, nc, kc, dst);
  }
  // Any other panel width (not used by the current kernels) takes the generic copy.
  for (int k = 0; k < kc; ++k) {
    for (int j = 0; j < nc; ++j) {
      dst[static_cast<long>(j / width) * width * kc + static_cast<long>(k) * width + j % width] =
          src[k * ld + j];
    }
    for (int j = nc; j % width; ++j) {
      dst[static_cast<long>(j / width) * width * kc + static_cast<long>(k) * width + j % width] =
          0.0f;
    }
  }
}

}  // namespace

void pack_a(bool transA, const float* A, int lda, int i0, int mc, int k0, int kc, int mr,
            float* dst) {
  const long ld = lda;
  if (transA) {
    // A is K x M: op(A)[i, k] = A[k * lda + i]; row k of the block is contiguous.
    copy_rows_block(A + k0 * ld + i0, ld, mc, kc, mr, dst);
    return;
  }
  for (int p = 0; p < mc; p += mr) {
    const int rows = std::min(mr, mc - p);
    gather_transpose(A + (i0 + p) * ld + k0, ld, rows, kc, mr, dst + static_cast<long>(p) * kc);
  }
}

void pack_b(bool transB, const float* B, int ldb, int k0, int kc, int j0, int nc, int nr,
            float* dst) {
  const long ld = ldb;
  if (!transB) {
    copy_rows_block(B + k0 * ld + j0, ld, nc, kc, nr, dst);
    return;
  }
  // B is N x K: op(B)[k, j] = B[j * ldb + k].
  for (int p = 0; p < nc; p += nr) {
    const int cols = std::min(nr, nc - p);
    gather_transpose(B + (j0 + p) * ld + k0, ld, cols, kc, nr, dst + static_cast<long>(p) * kc);
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail
