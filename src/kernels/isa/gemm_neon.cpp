// aarch64 Advanced SIMD micro-kernel: a 12 x 8 tile of C in 24 q accumulators (two B
// vectors and three A vectors per k, each A value used by lane: vfmaq_laneq_f32), 29 of
// the 32 vector registers. MR = 12 divides kMc and kMaxMc, NR = 8 divides kNc.
// Like the AVX2 kernel it performs the portable 4 x 16 kernel's FMAs in the same k
// order: one FMA chain over k per element from zero (k within the K block), then
// store_tile_generic, so every path stores the same bits.
#include "isa.hpp"

#include "gemm_internal.hpp"

#if ATTNFC_ISA_IS_NEON
#include <arm_neon.h>

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 8;

// One k step for the four rows whose A values are the lanes of a: c[r] += a[r] * b.
#define ATTNFC_ROWS4(c, a, b0, b1)              \
  c[0][0] = vfmaq_laneq_f32(c[0][0], b0, a, 0); \
  c[0][1] = vfmaq_laneq_f32(c[0][1], b1, a, 0); \
  c[1][0] = vfmaq_laneq_f32(c[1][0], b0, a, 1); \
  c[1][1] = vfmaq_laneq_f32(c[1][1], b1, a, 1); \
  c[2][0] = vfmaq_laneq_f32(c[2][0], b0, a, 2); \
  c[2][1] = vfmaq_laneq_f32(c[2][1], b1, a, 2); \
  c[3][0] = vfmaq_laneq_f32(c[3][0], b0, a, 3); \
  c[3][1] = vfmaq_laneq_f32(c[3][1], b1, a, 3)

void kernel_12x8(int kc, const float* pa, const float* pb, const TileStore& st) {
  float32x4_t c0[4][2], c1[4][2], c2[4][2];  // rows 0-3, 4-7, 8-11
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) c0[r][v] = c1[r][v] = c2[r][v] = vdupq_n_f32(0.0f);
  }
#pragma GCC unroll 2
  for (int k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(pb), b1 = vld1q_f32(pb + 4);
    const float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4), a2 = vld1q_f32(pa + 8);
    ATTNFC_ROWS4(c0, a0, b0, b1);
    ATTNFC_ROWS4(c1, a1, b0, b1);
    ATTNFC_ROWS4(c2, a2, b0, b1);
    pa += kMr;
    pb += kNr;
  }
  alignas(64) float tile[kMr * kNr];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
      vst1q_f32(tile + r * kNr + 4 * v, c0[r][v]);
      vst1q_f32(tile + (r + 4) * kNr + 4 * v, c1[r][v]);
      vst1q_f32(tile + (r + 8) * kNr + 4 * v, c2[r][v]);
    }
  }
  store_tile_generic(tile, kNr, st);
}
#undef ATTNFC_ROWS4

}  // namespace

// op(A) and op(B) are packed beforehand (no in-place forms yet).
KernelSpec neon_spec() {
  return {kMr, kNr, &kernel_12x8};
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail

#endif  // ATTNFC_ISA_IS_NEON
