// AVX2 + FMA micro-kernel: a 6 x 16 tile of C in 12 ymm accumulators (two B vectors
// and six broadcasts per k), for CPUs without AVX-512. The tile is stored from the
// registers by the arithmetic of store_tile_generic, one row (16 lanes) at a time.
// As on AVX-512, a second form reads row-major op(A) in place instead of packing it
// (see gemm_driver.cpp for when). Both perform the same FMAs in the same k order as the
// portable 4 x 16 kernel: one FMA chain over k per element from zero (k within the K
// block), then store_tile_generic, so every path stores the same bits.
#include "isa.hpp"

#include "gemm_internal.hpp"
#include "simd_gelu.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// The C tile is touched only after the K loop; fetching it now hides its L3 latency (C
// is often far larger than L2, and its rows are ldc apart: a new page each).
inline void prefetch_tile(const TileStore& st) {
  for (int r = 0; r < st.rows; ++r) {
    const char* c = reinterpret_cast<const char*>(st.C + static_cast<long>(r) * st.ldc);
    _mm_prefetch(c, _MM_HINT_T0);
    _mm_prefetch(c + 60, _MM_HINT_T0);
  }
}

// The 16-lane vector of lanes lo (0-7) and hi (8-15); on the AVX-512 build of this file
// (kept for the tests' forced kernel paths) simd::VF is one zmm.
inline simd::VF join(__m256 lo, __m256 hi) {
#if defined(__AVX512F__)
  return {_mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1)};
#else
  return {lo, hi};
#endif
}

// One row of the tile, as store_tile_generic computes it element for element: v =
// alpha*acc, then fma(beta, c, v) on the first K block or c + v on later ones, then on
// the last K block bias and the activation. m covers the tile's valid columns.
inline void store_row(simd::VF acc, float* c, const float* bias, simd::Mask m,
                      const TileStore& st) {
  using namespace simd;
  VF v = mul(set1(st.alpha), acc);
  if (!st.first) {
    v = add(load(c, m), v);
  } else if (st.beta != 0.0f) {
    v = fmadd(set1(st.beta), load(c, m), v);
  }
  if (st.last) {
    if (bias) v = add(v, load(bias, m));
    switch (st.act) {
      case Activation::None:
        break;
      case Activation::Relu:
        v = select(less(zero(), v), v, zero());
        break;
      case Activation::GeluTanh:
      case Activation::GeluErf:
        v = gelu(v, st.act == Activation::GeluTanh);
        break;
    }
  }
  store(c, v, m);
}

// The 6 x 16 kernel. op(A) comes from the packed panel a (kMr values per k) or, with
// kRowMajorA, from row-major A in place (row r of the panel is a + r * lda, k
// contiguous); op(B) from the packed panel pb. Both forms perform the same FMAs in the
// same k order.
template <bool kRowMajorA>
void kernel_6x16(int kc, const float* a, long lda, const float* pb, const TileStore& st) {
  prefetch_tile(st);
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
  const simd::Mask m = simd::tail_mask(st.cols);
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    if (r < st.rows) {
      store_row(join(c0[r], c1[r]), st.C + static_cast<long>(r) * st.ldc, st.bias, m, st);
    }
  }
}

void kernel_packed(int kc, const float* pa, const float* pb, const TileStore& st) {
  kernel_6x16<false>(kc, pa, 0, pb, st);
}
void kernel_row_major_a(int kc, const float* a, long lda, const float* pb, const TileStore& st) {
  kernel_6x16<true>(kc, a, lda, pb, st);
}

}  // namespace

// The packing forms of the AVX-512 kernel (row-major B, and then also transposed A,
// packed by the kernels as they read them) were tried here too and measured no faster
// on a Zen 3 EPYC (TN 384x128x4096 and 128x512x4096 within noise, docs/BENCHMARKS.md),
// so op(A) of TN and op(B) are packed beforehand.
KernelSpec avx2_spec() {
  KernelSpec ks{kMr, kNr, &kernel_packed};
  ks.direct_a = &kernel_row_major_a;
  // Measured on a Zen 3 EPYC at 1 thread (in-process, interleaved): NN 1024^3 58.9 ->
  // 67.5 GFLOP/s and 512^3 48.2 -> 53.3 packing from 512 columns; the model's skinny
  // products (N <= 512 split between threads, or N = 128) are unchanged.
  ks.direct_a_max_cols = 512;
  return ks;
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail

#endif  // __AVX2__ && __FMA__
