#pragma once
// simd::VF on aarch64 Advanced SIMD: four q registers per vector, 16-bit integer masks
// (included by simd_math.hpp, which documents the API). Every operation is the portable
// branch's (simd_portable.hpp) lane for lane: vfmaq/vfmsq are std::fma(a, b, c) and
// std::fma(-a, b, c) (one rounding), max/min are the portable a > b ? a : b and
// a < b ? a : b (not vmaxq/vminq, which return NaN for a NaN operand and order the
// zeros), and the reductions follow the portable order. The arm_neon.h add/mul are plain
// vector + and *, which -ffp-contract=off keeps from being fused.
#include "simd_constants.hpp"

#if ATTNFC_ISA_IS_NEON
#include <arm_neon.h>

namespace attnfc::kernels::ATTNFC_ISA::simd {

// q[0] holds lanes 0-3, q[1] lanes 4-7, q[2] lanes 8-11, q[3] lanes 12-15. A mask is
// an integer (lane l = bit l), as on the other branches; it becomes a vector of
// all-ones / all-zeros lanes only where a lane-wise instruction needs one.
struct VF {
  float32x4_t q[4];
};
using Mask = uint32_t;
constexpr Mask kAll = 0xFFFF;

namespace q4 {
// Lanes of quarter i (bits 4i..4i+3 of m) as a vector mask.
inline uint32x4_t lanes(Mask m, int i) {
  const uint32_t bits[4] = {1u, 2u, 4u, 8u};
  return vtstq_u32(vdupq_n_u32(m >> (4 * i)), vld1q_u32(bits));
}
// A vector mask back to its four bits.
inline Mask bits(uint32x4_t v) {
  const uint32_t weight[4] = {1u, 2u, 4u, 8u};
  return vaddvq_u32(vandq_u32(v, vld1q_u32(weight)));
}
// Keep(a, b) = b > a ? b : a, a the earlier lane: the portable scan's step.
inline float32x4_t keep(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcgtq_f32(b, a), b, a);
}
}  // namespace q4

#define ATTNFC_QUARTERS(expr)                  \
  VF r;                                        \
  for (int i = 0; i < 4; ++i) r.q[i] = (expr); \
  return r

inline Mask tail_mask(int n) {
  return n >= kLanes ? kAll : static_cast<Mask>((1u << (n > 0 ? n : 0)) - 1u);
}
inline VF zero() {
  ATTNFC_QUARTERS(vdupq_n_f32(0.0f));
}
inline VF set1(float a) {
  ATTNFC_QUARTERS(vdupq_n_f32(a));
}
inline VF load(const float* p) {
  ATTNFC_QUARTERS(vld1q_f32(p + 4 * i));
}
// Lanes outside m read nothing (no fault past the end) and hold `fill`: whole quarters
// are loaded as vectors, partial ones lane by lane.
inline VF load(const float* p, Mask m, float fill = 0.0f) {
  if (m == kAll) return load(p);
  VF r;
  for (int i = 0; i < 4; ++i) {
    const Mask b = (m >> (4 * i)) & 0xFu;
    if (b == 0xFu) {
      r.q[i] = vld1q_f32(p + 4 * i);
      continue;
    }
    float t[4] = {fill, fill, fill, fill};
    for (int l = 0; l < 4; ++l)
      if ((b >> l) & 1u) t[l] = p[4 * i + l];
    r.q[i] = vld1q_f32(t);
  }
  return r;
}
inline void store(float* p, VF a) {
  for (int i = 0; i < 4; ++i) vst1q_f32(p + 4 * i, a.q[i]);
}
// Lanes outside m are not written.
inline void store(float* p, VF a, Mask m) {
  if (m == kAll) return store(p, a);
  for (int i = 0; i < 4; ++i) {
    const Mask b = (m >> (4 * i)) & 0xFu;
    if (b == 0xFu) {
      vst1q_f32(p + 4 * i, a.q[i]);
    } else if (b != 0) {
      float t[4];
      vst1q_f32(t, a.q[i]);
      for (int l = 0; l < 4; ++l)
        if ((b >> l) & 1u) p[4 * i + l] = t[l];
    }
  }
}
inline VF add(VF a, VF b) {
  ATTNFC_QUARTERS(vaddq_f32(a.q[i], b.q[i]));
}
inline VF sub(VF a, VF b) {
  ATTNFC_QUARTERS(vsubq_f32(a.q[i], b.q[i]));
}
inline VF mul(VF a, VF b) {
  ATTNFC_QUARTERS(vmulq_f32(a.q[i], b.q[i]));
}
inline VF div(VF a, VF b) {
  ATTNFC_QUARTERS(vdivq_f32(a.q[i], b.q[i]));
}
inline VF fmadd(VF a, VF b, VF c) {  // a*b+c, one rounding
  ATTNFC_QUARTERS(vfmaq_f32(c.q[i], a.q[i], b.q[i]));
}
inline VF fnmadd(VF a, VF b, VF c) {  // c-a*b = fma(-a, b, c), one rounding
  ATTNFC_QUARTERS(vfmsq_f32(c.q[i], a.q[i], b.q[i]));
}
inline VF max(VF a, VF b) {  // a > b ? a : b
  ATTNFC_QUARTERS(vbslq_f32(vcgtq_f32(a.q[i], b.q[i]), a.q[i], b.q[i]));
}
inline VF min(VF a, VF b) {  // a < b ? a : b
  ATTNFC_QUARTERS(vbslq_f32(vcltq_f32(a.q[i], b.q[i]), a.q[i], b.q[i]));
}
inline VF sqrt(VF a) {
  ATTNFC_QUARTERS(vsqrtq_f32(a.q[i]));
}
// select(m, a, b) takes a where m is set, else b.
inline VF select(Mask m, VF a, VF b) {
  ATTNFC_QUARTERS(vbslq_f32(q4::lanes(m, i), a.q[i], b.q[i]));
}
// Lanes where a < b.
inline Mask less(VF a, VF b) {
  Mask m = 0;
  for (int i = 0; i < 4; ++i) m |= q4::bits(vcltq_f32(a.q[i], b.q[i])) << (4 * i);
  return m;
}
// The portable tree: lanes l and l + 8, then l + 4, l + 2, l + 1 (lower lane first).
inline float reduce_add(VF a) {
  const float32x4_t t = vaddq_f32(vaddq_f32(a.q[0], a.q[2]), vaddq_f32(a.q[1], a.q[3]));
  const float32x2_t u = vadd_f32(vget_low_f32(t), vget_high_f32(t));
  return vget_lane_f32(u, 0) + vget_lane_f32(u, 1);
}
// The portable scan m = v[l] > m ? v[l] : m returns v[0] if that is NaN, skips NaN in
// later lanes and, among equal values (+0 and -0), keeps the earliest lane. A tree of
// keep(a, b) over adjacent lane ranges (a the earlier) does the same once NaN in lanes
// 1-15 reads as -inf: pairs, quads (lane 0 of each quarter), then the quarters in order.
inline float reduce_max(VF a) {
  const float32x4_t ninf = vdupq_n_f32(-kInf);
  const uint32_t later0[4] = {0u, ~0u, ~0u, ~0u};
  float32x4_t v[4];
  for (int i = 0; i < 4; ++i) {
    uint32x4_t nan = vmvnq_u32(vceqq_f32(a.q[i], a.q[i]));
    if (i == 0) nan = vandq_u32(nan, vld1q_u32(later0));
    v[i] = vbslq_f32(nan, ninf, a.q[i]);
    v[i] = q4::keep(v[i], vrev64q_f32(v[i]));         // lane 0: (0, 1), lane 2: (2, 3)
    v[i] = q4::keep(v[i], vextq_f32(v[i], v[i], 2));  // lane 0: (0-1, 2-3)
  }
  const float32x4_t lo = q4::keep(v[0], v[1]), hi = q4::keep(v[2], v[3]);
  return vgetq_lane_f32(q4::keep(lo, hi), 0);
}
// Lanes where pad[j] == 0 (the key is kept), restricted to the first n lanes; a short
// tail is read byte by byte so that nothing past pad[n - 1] is touched.
inline Mask keep_mask(const uint8_t* pad, int n) {
  if (n >= kLanes) {
    const uint8_t weight[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t k = vandq_u8(vceqzq_u8(vld1q_u8(pad)), vld1q_u8(weight));
    return static_cast<Mask>(vaddv_u8(vget_low_u8(k))) |
           static_cast<Mask>(vaddv_u8(vget_high_u8(k))) << 8;
  }
  Mask m = 0;
  for (int j = 0; j < n; ++j) m |= static_cast<Mask>((pad[j] == 0) << j);
  return m;
}

namespace q4 {
// The portable exp, 4 lanes: the same clamp (NaN -> lo), rounding to nearest even,
// Cody-Waite steps, FMA chain, 2^n from exponent bits and flush below kExpLo.
inline float32x4_t exp(float32x4_t x) {
  const uint32x4_t in_range = vcgeq_f32(x, vdupq_n_f32(kExpLo));  // false for NaN
  float32x4_t xc = vbslq_f32(in_range, x, vdupq_n_f32(kExpLo));
  xc = vbslq_f32(vcgtq_f32(xc, vdupq_n_f32(kExpHi)), vdupq_n_f32(kExpHi), xc);
  const float32x4_t n = vrndnq_f32(vmulq_f32(xc, vdupq_n_f32(kLog2e)));
  float32x4_t r = vfmsq_f32(xc, n, vdupq_n_f32(kLn2Hi));
  r = vfmsq_f32(r, n, vdupq_n_f32(kLn2Lo));
  float32x4_t p = vdupq_n_f32(kExpP0);
  p = vfmaq_f32(vdupq_n_f32(kExpP1), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP2), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP3), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP4), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP5), p, r);
  p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
  const int32x4_t e = vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127));  // n is an integer
  const float32x4_t y = vmulq_f32(p, vreinterpretq_f32_s32(vshlq_n_s32(e, 23)));
  return vreinterpretq_f32_u32(vandq_u32(in_range, vreinterpretq_u32_f32(y)));
}
// x = 2^e m with m in [0.75, 1.5), as frexp plus the portable fold, for positive normal x.
inline void split(float32x4_t x, float32x4_t* m, float32x4_t* e) {
  const uint32x4_t bits = vreinterpretq_u32_f32(x);
  const float32x4_t m1 = vreinterpretq_f32_u32(
      vorrq_u32(vandq_u32(bits, vdupq_n_u32(0x007FFFFFu)), vdupq_n_u32(0x3F800000u)));
  const float32x4_t e1 =
      vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(bits, 23)), vdupq_n_s32(127)));
  const uint32x4_t big = vcgeq_f32(m1, vdupq_n_f32(1.5f));  // m1 in [1, 2)
  *m = vbslq_f32(big, vmulq_f32(m1, vdupq_n_f32(0.5f)), m1);
  *e = vbslq_f32(big, vaddq_f32(e1, vdupq_n_f32(1.0f)), e1);
}
}  // namespace q4

inline VF exp(VF x) {
  ATTNFC_QUARTERS(q4::exp(x.q[i]));
}
#undef ATTNFC_QUARTERS

// x = 2^e m with m in [0.75, 1.5), for positive normal lanes (log's contract here).
inline void log_split(VF x, VF* m, VF* e) {
  for (int i = 0; i < 4; ++i) q4::split(x.q[i], &m->q[i], &e->q[i]);
}

}  // namespace attnfc::kernels::ATTNFC_ISA::simd

#endif
