#pragma once
// Tile products for the fused attention kernel: one thread, small operands that
// live in L1/L2, called from inside attention's own parallel region (so no
// nested OpenMP). C[M, N] (= or +=) A(M x K) * B[K, N] with
//   A(i, k) = A[i * a_rs + k * a_cs]   (any strides: row-major, or a transposed tile)
//   B       row-major with leading dimension ldb, unit stride along N
// Every C element is one FMA chain over k = 0..K-1 in order: the result does
// not depend on how the caller's tiles were distributed over threads.
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include "isa.hpp"

#include "simd_math.hpp"
#if ATTNFC_ISA_IS_NEON
#include <arm_neon.h>
#endif

namespace attnfc::kernels::ATTNFC_ISA::detail {

constexpr int kTileMr = 6;  // rows per register block
constexpr int kTileNv = 4;  // 16-float vectors per register block

#if defined(__AVX512F__)
// M rows x NV vectors of 16 columns, held in zmm registers (6 x 4 = 24 accumulators).
template <int M, int NV, bool kAccumulate>
void tile_micro(int K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t ldb,
                float* C, int64_t ldc, simd::Mask last) {
  __m512 acc[M][NV];
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = kAccumulate
                      ? _mm512_maskz_loadu_ps(v == NV - 1 ? last : simd::kAll, C + i * ldc + 16 * v)
                      : _mm512_setzero_ps();
  for (int k = 0; k < K; ++k) {
    __m512 b[NV];
    const float* bk = B + k * ldb;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      b[v] = _mm512_maskz_loadu_ps(v == NV - 1 ? last : simd::kAll, bk + 16 * v);
    const float* ak = A + k * a_cs;
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      const __m512 a = _mm512_set1_ps(ak[i * a_rs]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(a, b[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      _mm512_mask_storeu_ps(C + i * ldc + 16 * v, v == NV - 1 ? last : simd::kAll, acc[i][v]);
}

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t,
                        simd::Mask);

template <bool kAcc, int... I>
constexpr std::array<TileFn, sizeof...(I)> make_tile_table(std::integer_sequence<int, I...>) {
  return {&tile_micro<I / kTileNv + 1, I % kTileNv + 1, kAcc>...};
}
inline constexpr auto kTileSet =
    make_tile_table<false>(std::make_integer_sequence<int, kTileMr * kTileNv>{});
inline constexpr auto kTileAdd =
    make_tile_table<true>(std::make_integer_sequence<int, kTileMr * kTileNv>{});

inline void tile_gemm(int M, int N, int K, const float* A, int64_t a_rs, int64_t a_cs,
                      const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  constexpr int kMr = kTileMr, kNr = 16 * kTileNv;
  for (int n0 = 0; n0 < N; n0 += kNr) {
    const int nw = N - n0 < kNr ? N - n0 : kNr;
    const int nv = (nw + 15) / 16;
    const simd::Mask last = simd::tail_mask(nw - 16 * (nv - 1));
    for (int m0 = 0; m0 < M; m0 += kMr) {
      const int mr = M - m0 < kMr ? M - m0 : kMr;
      const int idx = (mr - 1) * kTileNv + (nv - 1);
      const TileFn fn = accumulate ? kTileAdd[idx] : kTileSet[idx];
      fn(K, A + m0 * a_rs, a_rs, a_cs, B + n0, ldb, C + m0 * ldc + n0, ldc, last);
    }
  }
}

#elif defined(__AVX2__) && defined(__FMA__)
// M rows x NV (1 or 2) ymm of 8 columns: 6 x 2 = 12 accumulators, two B vectors and
// one broadcast fill the 16 ymm registers. With kPartial the last vector holds only
// its first `rem` columns (maskload / maskstore: nothing past the edge is read or
// written).
template <int M, int NV, bool kAccumulate, bool kPartial>
void tile_micro(int K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t ldb,
                float* C, int64_t ldc, int rem) {
  const __m256i last =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  auto load = [&](const float* p, int v) {
    return kPartial && v == NV - 1 ? _mm256_maskload_ps(p, last) : _mm256_loadu_ps(p);
  };
  __m256 acc[M][NV];
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      acc[i][v] = kAccumulate ? load(C + i * ldc + 8 * v, v) : _mm256_setzero_ps();
  for (int k = 0; k < K; ++k) {
    __m256 b[NV];
    const float* bk = B + k * ldb;
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) b[v] = load(bk + 8 * v, v);
    const float* ak = A + k * a_cs;
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      const __m256 a = _mm256_broadcast_ss(ak + i * a_rs);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(a, b[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      float* c = C + i * ldc + 8 * v;
      if (kPartial && v == NV - 1)
        _mm256_maskstore_ps(c, last, acc[i][v]);
      else
        _mm256_storeu_ps(c, acc[i][v]);
    }
}

constexpr int kTileYmm = 2;  // 8-float vectors per register block

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t,
                        int);

// Index I = ((rows - 1) * kTileYmm + (vectors - 1)) * 2 + partial.
template <bool kAcc, int... I>
constexpr std::array<TileFn, sizeof...(I)> make_tile_table(std::integer_sequence<int, I...>) {
  return {&tile_micro<I / (2 * kTileYmm) + 1, I / 2 % kTileYmm + 1, kAcc, (I & 1) != 0>...};
}
inline constexpr auto kTileSet =
    make_tile_table<false>(std::make_integer_sequence<int, kTileMr * kTileYmm * 2>{});
inline constexpr auto kTileAdd =
    make_tile_table<true>(std::make_integer_sequence<int, kTileMr * kTileYmm * 2>{});

inline void tile_gemm(int M, int N, int K, const float* A, int64_t a_rs, int64_t a_cs,
                      const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  constexpr int kMr = kTileMr, kNr = 8 * kTileYmm;
  for (int n0 = 0; n0 < N; n0 += kNr) {
    const int nw = N - n0 < kNr ? N - n0 : kNr;
    const int nv = (nw + 7) / 8, rem = nw - 8 * (nv - 1);
    for (int m0 = 0; m0 < M; m0 += kMr) {
      const int mr = M - m0 < kMr ? M - m0 : kMr;
      const int idx = ((mr - 1) * kTileYmm + (nv - 1)) * 2 + (rem < 8 ? 1 : 0);
      const TileFn fn = accumulate ? kTileAdd[idx] : kTileSet[idx];
      fn(K, A + m0 * a_rs, a_rs, a_cs, B + n0, ldb, C + m0 * ldc + n0, ldc, rem);
    }
  }
}

#elif ATTNFC_ISA_IS_NEON
// M rows x NV q registers of 4 columns (6 x 4 = 24 accumulators, four B vectors and one
// broadcast: 29 of the 32 registers). Columns past the last whole group of 4 take the
// portable loop below (tile_columns): the same FMA chain per element either way.
template <int M, int NV, bool kAccumulate>
void tile_micro(int K, const float* A, int64_t a_rs, int64_t a_cs, const float* B, int64_t ldb,
                float* C, int64_t ldc) {
  float32x4_t acc[M][NV];
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = kAccumulate ? vld1q_f32(C + i * ldc + 4 * v) : vdupq_n_f32(0.0f);
  for (int k = 0; k < K; ++k) {
    float32x4_t b[NV];
    const float* bk = B + k * ldb;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = vld1q_f32(bk + 4 * v);
    const float* ak = A + k * a_cs;
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      const float32x4_t a = vdupq_n_f32(ak[i * a_rs]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = vfmaq_f32(acc[i][v], a, b[v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) vst1q_f32(C + i * ldc + 4 * v, acc[i][v]);
}

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, int64_t, float*,
                        int64_t);

template <bool kAcc, int... I>
constexpr std::array<TileFn, sizeof...(I)> make_tile_table(std::integer_sequence<int, I...>) {
  return {&tile_micro<I / kTileNv + 1, I % kTileNv + 1, kAcc>...};
}
inline constexpr auto kTileSet =
    make_tile_table<false>(std::make_integer_sequence<int, kTileMr * kTileNv>{});
inline constexpr auto kTileAdd =
    make_tile_table<true>(std::make_integer_sequence<int, kTileMr * kTileNv>{});

// Columns [n0, N) of every row, one FMA chain per element (the portable tile_gemm).
inline void tile_columns(int M, int n0, int N, int K, const float* A, int64_t a_rs, int64_t a_cs,
                         const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  for (int i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    if (!accumulate)
      for (int j = n0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < K; ++k) {
      const float a = A[i * a_rs + k * a_cs];
      const float* b = B + k * ldb;
      for (int j = n0; j < N; ++j) c[j] = std::fma(a, b[j], c[j]);
    }
  }
}

inline void tile_gemm(int M, int N, int K, const float* A, int64_t a_rs, int64_t a_cs,
                      const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  constexpr int kMr = kTileMr, kNr = 4 * kTileNv;
  const int n4 = N / 4 * 4;
  for (int n0 = 0; n0 < n4; n0 += kNr) {
    const int nv = (n4 - n0 < kNr ? n4 - n0 : kNr) / 4;
    for (int m0 = 0; m0 < M; m0 += kMr) {
      const int mr = M - m0 < kMr ? M - m0 : kMr;
      const int idx = (mr - 1) * kTileNv + (nv - 1);
      const TileFn fn = accumulate ? kTileAdd[idx] : kTileSet[idx];
      fn(K, A + m0 * a_rs, a_rs, a_cs, B + n0, ldb, C + m0 * ldc + n0, ldc);
    }
  }
  if (n4 < N) tile_columns(M, n4, N, K, A, a_rs, a_cs, B, ldb, C, ldc, accumulate);
}

#else  // portable: the inner loop over N vectorises under -O3; the same FMA chain per element

inline void tile_gemm(int M, int N, int K, const float* A, int64_t a_rs, int64_t a_cs,
                      const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  for (int i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    if (!accumulate)
      for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < K; ++k) {
      const float a = A[i * a_rs + k * a_cs];
      const float* b = B + k * ldb;
      for (int j = 0; j < N; ++j) c[j] = std::fma(a, b[j], c[j]);
    }
  }
}

#endif

}  // namespace attnfc::kernels::ATTNFC_ISA::detail
