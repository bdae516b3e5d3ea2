// AVX2 + FMA micro-kernel: a 6 x 16 tile of C in 12 ymm accumulators (two B vectors
// and six broadcasts per k), for CPUs without AVX-512. The tile is written through
// the shared scalar epilogue, which handles the edges and the activation.
#include "isa.hpp"

#include "gemm_internal.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

void kernel_6x16(int kc, const float* pa, const float* pb, const TileStore& st) {
  __m256 c0[kMr], c1[kMr];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    c0[r] = _mm256_setzero_ps();
    c1[r] = _mm256_setzero_ps();
  }
#pragma GCC unroll 2
  for (int k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(pb);
    const __m256 b1 = _mm256_load_ps(pb + 8);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      const __m256 a = _mm256_broadcast_ss(pa + r);
      c0[r] = _mm256_fmadd_ps(a, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(a, b1, c1[r]);
    }
    pa += kMr;
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

}  // namespace

KernelSpec avx2_spec() {
  return {kMr, kNr, &kernel_6x16};
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail

#endif  // __AVX2__ && __FMA__
