#pragma once
// Pieces shared by the fused attention forward (attention.cpp) and backward
// (attention_backward.cpp): tile sizes, per-thread scratch, K/V tile packing
// and the masks.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include "isa.hpp"

#include "attention_tile.hpp"
#include "attnfc/kernels/attention.hpp"
#include "simd_math.hpp"

namespace attnfc::kernels::ATTNFC_ISA::detail {

constexpr int kBr = 64;  // queries per tile
constexpr int kBc = 64;  // keys per tile (a multiple of 16: rows of S are whole vectors)
constexpr int kMaxHeadDim = 256;
constexpr int kMaxDp = (kMaxHeadDim + 15) / 16 * 16;

// Per-thread scratch of the backward (the larger user) at the widest head; the
// forward needs less. Requesting this size every time means each thread
// allocates exactly once.
constexpr size_t kScratchFloats =
    2 * kBr * kBc + 2 * kMaxDp * kBc + 3 * (kBr > kBc ? kBr : kBc) * kMaxDp + 2 * kBr;

inline int padded_dim(int D) {
  return (D + 15) / 16 * 16;
}

// One 64-byte aligned block per OpenMP thread, sized once for the largest head
// width, so a thread never allocates again and no two threads share a line.
class ThreadScratch {
 public:
  float* floats(size_t n) {
    if (n > capacity_) {
      const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data_) throw std::bad_alloc();
      capacity_ = bytes / sizeof(float);
    }
    return data_.get();
  }

 private:
  std::unique_ptr<float, decltype(&std::free)> data_{nullptr, &std::free};
  size_t capacity_ = 0;
};
inline thread_local ThreadScratch tls_attention_scratch;

// Base pointer of row i of (b, h) in a strided tensor.
inline const float* row_ptr(const float* base, const AttnLayout& l, int b, int h, int64_t i) {
  return base + b * l.batch_stride + h * l.head_stride + i * l.row_stride;
}
inline float* row_ptr(float* base, const AttnLayout& l, int b, int h, int64_t i) {
  return base + b * l.batch_stride + h * l.head_stride + i * l.row_stride;
}

#if defined(__AVX512F__)
// Transposes 16 rows of 16 floats in registers: after the four stages (block
// sizes 8, 4, 2, 1) each swapping the off-diagonal blocks of every 2s x 2s
// block, r[t][c] holds the old r[c][t]. 64 two-source permutes per 256 floats.
template <int S>
inline void transpose_stage(__m512 r[16]) {
  // Row i: own low block, then the partner's low block; row i + S: the high blocks.
  alignas(64) static constexpr int32_t kLo[16] = {
      (0 & S) ? 16 + 0 - S : 0,    (1 & S) ? 16 + 1 - S : 1,    (2 & S) ? 16 + 2 - S : 2,
      (3 & S) ? 16 + 3 - S : 3,    (4 & S) ? 16 + 4 - S : 4,    (5 & S) ? 16 + 5 - S : 5,
      (6 & S) ? 16 + 6 - S : 6,    (7 & S) ? 16 + 7 - S : 7,    (8 & S) ? 16 + 8 - S : 8,
      (9 & S) ? 16 + 9 - S : 9,    (10 & S) ? 16 + 10 - S : 10, (11 & S) ? 16 + 11 - S : 11,
      (12 & S) ? 16 + 12 - S : 12, (13 & S) ? 16 + 13 - S : 13, (14 & S) ? 16 + 14 - S : 14,
      (15 & S) ? 16 + 15 - S : 15};
  alignas(64) static constexpr int32_t kHi[16] = {
      (0 & S) ? 16 + 0 : 0 + S,    (1 & S) ? 16 + 1 : 1 + S,    (2 & S) ? 16 + 2 : 2 + S,
      (3 & S) ? 16 + 3 : 3 + S,    (4 & S) ? 16 + 4 : 4 + S,    (5 & S) ? 16 + 5 : 5 + S,
      (6 & S) ? 16 + 6 : 6 + S,    (7 & S) ? 16 + 7 : 7 + S,    (8 & S) ? 16 + 8 : 8 + S,
      (9 & S) ? 16 + 9 : 9 + S,    (10 & S) ? 16 + 10 : 10 + S, (11 & S) ? 16 + 11 : 11 + S,
      (12 & S) ? 16 + 12 : 12 + S, (13 & S) ? 16 + 13 : 13 + S, (14 & S) ? 16 + 14 : 14 + S,
      (15 & S) ? 16 + 15 : 15 + S};
  const __m512i lo = _mm512_load_si512(kLo), hi = _mm512_load_si512(kHi);
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    if (i & S) continue;
    const __m512 a = r[i], b = r[i + S];
    r[i] = _mm512_permutex2var_ps(a, lo, b);
    r[i + S] = _mm512_permutex2var_ps(a, hi, b);
  }
}
inline void transpose16x16(__m512 r[16]) {
  transpose_stage<8>(r);
  transpose_stage<4>(r);
  transpose_stage<2>(r);
  transpose_stage<1>(r);
}
#elif defined(__AVX2__) && defined(__FMA__)
// Transposes 8 rows of 8 floats in registers (unpack pairs, shuffle quads, swap the
// 128-bit halves): r[t][c] ends up holding the old r[c][t].
inline void transpose8x8(__m256 r[8]) {
  __m256 t[8], s[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    s[4 * h + 0] = _mm256_shuffle_ps(t[4 * h + 0], t[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
    s[4 * h + 1] = _mm256_shuffle_ps(t[4 * h + 0], t[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    s[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
    s[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
  }
}
#endif

// dst[d * kBc + j] = src_row(j)[d] for j < kc, d < D: a key/value tile turned
// into kBc-wide rows, so that S = Q K^T streams whole vectors of keys. Lanes
// past kc in the last 16-key group are written with zeros (never read).
inline void pack_transposed(const float* src, int64_t row_stride, int kc, int D, float* dst) {
#if defined(__AVX512F__)
  for (int j = 0; j < kc; j += 16) {
    const int rows = kc - j < 16 ? kc - j : 16;
    for (int d0 = 0; d0 < D; d0 += 16) {
      const simd::Mask cols = simd::tail_mask(D - d0);
      __m512 r[16];
#pragma GCC unroll 16
      for (int t = 0; t < 16; ++t)
        r[t] = t < rows ? _mm512_maskz_loadu_ps(cols, src + (j + t) * row_stride + d0)
                        : _mm512_setzero_ps();
      transpose16x16(r);
      const int dn = D - d0 < 16 ? D - d0 : 16;
      for (int t = 0; t < dn; ++t) _mm512_storeu_ps(dst + (d0 + t) * kBc + j, r[t]);
    }
  }
#elif defined(__AVX2__) && defined(__FMA__)
  // 8 keys x 8 dims per block; lanes past kc in the last 8-key group are zeros.
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int j = 0; j < kc; j += 8) {
    const int rows = kc - j < 8 ? kc - j : 8;
    for (int d0 = 0; d0 < D; d0 += 8) {
      const int dn = D - d0 < 8 ? D - d0 : 8;
      const __m256i cols = _mm256_cmpgt_epi32(_mm256_set1_epi32(dn), lane);
      __m256 r[8];
#pragma GCC unroll 8
      for (int t = 0; t < 8; ++t) {
        const float* s = src + (j + t) * row_stride + d0;
        r[t] = t >= rows ? _mm256_setzero_ps()
               : dn == 8 ? _mm256_loadu_ps(s)
                         : _mm256_maskload_ps(s, cols);
      }
      transpose8x8(r);
      for (int t = 0; t < dn; ++t) _mm256_storeu_ps(dst + (d0 + t) * kBc + j, r[t]);
    }
  }
#else
  for (int j = 0; j < kc; ++j) {
    const float* s = src + j * row_stride;
    for (int d = 0; d < D; ++d) dst[d * kBc + j] = s[d];
  }
#endif
}

// Columns of row `i` (a query) in key tile [j0, j0 + kc) that are visible:
// the first `visible` columns minus padded ones.
inline int causal_visible(bool causal, int64_t i, int64_t j0, int kc) {
  if (!causal) return kc;
  const int64_t v = i - j0 + 1;
  return v <= 0 ? 0 : (v >= kc ? kc : static_cast<int>(v));
}
inline simd::Mask visible_lanes(const uint8_t* pad, int j, int visible) {
  return pad ? simd::keep_mask(pad + j, visible - j) : simd::tail_mask(visible - j);
}

// In place: S[i, j] <- exp(scale * S[i, j] - lse_i) for visible (i, j), else 0.
// Rows with lse = -inf (no visible key) become zeros.
inline void recompute_probs(float* S, int qc, int kc, int64_t i0, int64_t j0, bool causal,
                            const uint8_t* pad, float scale, const float* lse) {
  using namespace simd;
  const VF vs = set1(scale);
  for (int i = 0; i < qc; ++i) {
    float* row = S + i * kBc;
    const int visible = causal_visible(causal, i0 + i, j0, kc);
    if (!(lse[i] > -kInf)) {
      for (int j = 0; j < kc; j += kLanes) store(row + j, zero());
      continue;
    }
    const VF neg_lse = set1(-lse[i]);
    for (int j = 0; j < kc; j += kLanes) {
      if (j >= visible) {
        store(row + j, zero());
        continue;
      }
      const VF s = fmadd(load(row + j), vs, neg_lse);
      store(row + j, select(visible_lanes(pad, j, visible), exp(s), zero()));
    }
  }
}

// Tile products that know the causal mask. Query rows are processed in register
// blocks of kTileMr; with causal masking, a block of a (query tile i0, key tile
// j0) pair sees only the first n keys (n = what its last row sees), so score
// columns and product depths past n are skipped. Columns a block skips are left
// unwritten: callers mask them by each row's own visible count.

// S[i, 0:n) = A_i . Bt[:, 0:n)   (A: qc x D rows with stride a_rs; Bt: D x kBc packed)
inline void scores_tile(bool causal, int64_t i0, int64_t j0, int qc, int kc, int D, const float* A,
                        int64_t a_rs, const float* Bt, float* S) {
  for (int m0 = 0; m0 < qc; m0 += kTileMr) {
    const int mr = std::min(kTileMr, qc - m0);
    const int n = causal_visible(causal, i0 + m0 + mr - 1, j0, kc);
    if (n > 0) tile_gemm(mr, n, D, A + m0 * a_rs, a_rs, 1, Bt, kBc, S + m0 * kBc, kBc, false);
  }
}

// C[i, :] += sum_{j < n} P[i, j] R_j   (P: qc x kBc; R: key rows with stride r_rs)
inline void rows_times_keys(bool causal, int64_t i0, int64_t j0, int qc, int kc, int D,
                            const float* P, const float* R, int64_t r_rs, float* C, int64_t ldc) {
  for (int m0 = 0; m0 < qc; m0 += kTileMr) {
    const int mr = std::min(kTileMr, qc - m0);
    const int n = causal_visible(causal, i0 + m0 + mr - 1, j0, kc);
    if (n > 0) tile_gemm(mr, D, n, P + m0 * kBc, kBc, 1, R, r_rs, C + m0 * ldc, ldc, true);
  }
}

// C[j, :] += sum_i P[i, j] R_i   (dV, dK: key j gets contributions from queries i >= j only)
inline void keys_times_rows(bool causal, int64_t i0, int64_t j0, int qc, int kc, int D,
                            const float* P, const float* R, int64_t r_rs, float* C, int64_t ldc) {
  for (int m0 = 0; m0 < kc; m0 += kTileMr) {
    const int mr = std::min(kTileMr, kc - m0);
    const int64_t first = causal ? j0 + m0 - i0 : 0;  // first query that sees key j0 + m0
    const int q_lo = static_cast<int>(std::clamp<int64_t>(first, 0, qc));
    if (q_lo < qc)
      tile_gemm(mr, D, qc - q_lo, P + q_lo * kBc + m0, 1, kBc, R + q_lo * r_rs, r_rs, C + m0 * ldc,
                ldc, true);
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA::detail
