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
