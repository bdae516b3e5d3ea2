// AVX2 + FMA micro-kernel: a 6 x 16 tile of C in 12 ymm accumulators (two B vectors
// and six broadcasts per k), for CPUs without AVX-512. The tile is written through
// the shared scalar epilogue, which handles the edges and the activation.
// As on AVX-512, a second form reads row-major op(A) in place instead of packing it
// (see gemm_driver.cpp for when). Both perform the same FMAs in the same k order as the
// portable 4 x 16 kernel: one FMA chain over k per element from zero (k within the K
// block), then store_tile_generic, so every path stores the same bits.
#include "isa.hpp"

#include "gemm_internal.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// The 6 x 16 kernel. op(A) comes from the packed panel a (kMr values per k) or, with
// kRowMajorA, from row-major A in place (row r of the panel is a + r * lda, k
// contiguous); op(B) from the packed panel pb. Both forms perform the same FMAs in the
// same k order.
template <bool kRowMajorA>
void kernel_6x16(int kc, const float* a, long lda, const float* pb, const TileStore& st) {
  __m256 c0[kMr], c1[kMr];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    c0[r] = _mm256_setzero_ps();
    c1[r] = _mm256_setzero_ps();
  }
  // Row-major A: two row pointers three rows apart and one stride cover the six rows
  // in x86 addressing modes.
  const float* rows[2] = {a, a + 3 * lda};
#pragma GCC unroll 2
  for (int k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(pb);
    const __m256 b1 = _mm256_load_ps(pb + 8);
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q) {
#pragma GCC unroll 3
      for (int t = 0; t < 3; ++t) {
        const int r = 3 * q + t;
        const __m256 v = _mm256_broadcast_ss(kRowMajorA ? rows[q] + t * lda + k : a + r);
        c0[r] = _mm256_fmadd_ps(v, b0, c0[r]);
        c1[r] = _mm256_fmadd_ps(v, b1, c1[r]);
      }
    }
    if constexpr (!kRowMajorA) a += kMr;
    pb += kNr;
  }
  alignas(64) float tile[kMr * kNr];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    _mm256_store_ps(tile + r * kNr, c0[r]);
    _mm256_store_ps(tile + r * kNr + 8, c1[r]);
  }
  store_tile_generic(tile, kNr, st);
}

void kernel_packed(int kc, const float* pa, const float* pb, const TileStore& st) {
  kernel_6x16<false>(kc, pa, 0, pb, st);
}
void kernel_row_major_a(int kc, const float* a, long lda, const float* pb, const TileStore& st) {
  kernel_6x16<true>(kc, a, lda, pb, st);
}

}  // namespace

// The packing forms of the AVX-512 kernel (transposed A and row-major B packed by the
// kernels as they read them) were tried here too and measured no faster on a Zen 3
// EPYC (TN 384x128x4096 and 128x512x4096 within noise, docs/BENCHMARKS.md), so op(A) of
// TN and op(B) are packed beforehand.
KernelSpec avx2_spec() {
  KernelSpec ks{kMr, kNr, &kernel_packed};
  ks.direct_a = &kernel_row_major_a;
  return ks;
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail

#endif  // __AVX2__ && __FMA__
