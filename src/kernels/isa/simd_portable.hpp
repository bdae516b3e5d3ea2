#pragma once
// simd::VF on the baseline instruction set: plain 16-lane loops the compiler vectorises (included
// by simd_math.hpp, which documents the API).
#include "simd_constants.hpp"

#include <cmath>
#include <cstdint>

#if !defined(__AVX512F__) && !(defined(__AVX2__) && defined(__FMA__)) && !ATTNFC_ISA_IS_NEON

namespace attnfc::kernels::ATTNFC_ISA::simd {

struct VF {
  float v[kLanes];
};
using Mask = uint32_t;

inline Mask tail_mask(int n) {
  return n >= kLanes ? Mask(0xFFFF) : static_cast<Mask>((1u << (n > 0 ? n : 0)) - 1u);
}
#define ATTNFC_LANES(expr)                          \
  VF r;                                             \
  for (int l = 0; l < kLanes; ++l) r.v[l] = (expr); \
  return r
inline VF zero() {
  ATTNFC_LANES(0.0f);
}
inline VF set1(float a) {
  ATTNFC_LANES(a);
}
inline VF load(const float* p) {
  ATTNFC_LANES(p[l]);
}
inline VF load(const float* p, Mask m, float fill = 0.0f) {
  VF r;
  for (int l = 0; l < kLanes; ++l) r.v[l] = (m >> l) & 1u ? p[l] : fill;
  return r;
}
inline void store(float* p, VF a) {
  for (int l = 0; l < kLanes; ++l) p[l] = a.v[l];
}
inline void store(float* p, VF a, Mask m) {
  for (int l = 0; l < kLanes; ++l)
    if ((m >> l) & 1u) p[l] = a.v[l];
}
inline VF add(VF a, VF b) {
  ATTNFC_LANES(a.v[l] + b.v[l]);
}
inline VF sub(VF a, VF b) {
  ATTNFC_LANES(a.v[l] - b.v[l]);
}
inline VF mul(VF a, VF b) {
  ATTNFC_LANES(a.v[l] * b.v[l]);
}
inline VF div(VF a, VF b) {
  ATTNFC_LANES(a.v[l] / b.v[l]);
}
inline VF fmadd(VF a, VF b, VF c) {
  ATTNFC_LANES(std::fma(a.v[l], b.v[l], c.v[l]));
}
inline VF fnmadd(VF a, VF b, VF c) {
  ATTNFC_LANES(std::fma(-a.v[l], b.v[l], c.v[l]));
}
inline VF max(VF a, VF b) {
  ATTNFC_LANES(a.v[l] > b.v[l] ? a.v[l] : b.v[l]);
}
inline VF min(VF a, VF b) {
  ATTNFC_LANES(a.v[l] < b.v[l] ? a.v[l] : b.v[l]);
}
inline VF sqrt(VF a) {
  ATTNFC_LANES(std::sqrt(a.v[l]));
}
inline VF select(Mask m, VF a, VF b) {
  ATTNFC_LANES((m >> l) & 1u ? a.v[l] : b.v[l]);
}
#undef ATTNFC_LANES
inline Mask less(VF a, VF b) {
  Mask m = 0;
  for (int l = 0; l < kLanes; ++l) m |= static_cast<Mask>(a.v[l] < b.v[l]) << l;
  return m;
}
inline float reduce_add(VF a) {  // pairwise, fixed order
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) a.v[l] += a.v[l + w];
  return a.v[0];
}
inline float reduce_max(VF a) {
  float m = a.v[0];
  for (int l = 1; l < kLanes; ++l) m = a.v[l] > m ? a.v[l] : m;
  return m;
}
inline Mask keep_mask(const uint8_t* pad, int n) {
  Mask m = 0;
  for (int j = 0; j < n && j < kLanes; ++j) m |= static_cast<Mask>((pad[j] == 0) << j);
  return m;
}
inline VF exp(VF x) {
  VF out;
  for (int l = 0; l < kLanes; ++l) {
    const float xv = x.v[l];
    const float xc = !(xv >= kExpLo) ? kExpLo : (xv > kExpHi ? kExpHi : xv);  // NaN -> lo
    const float n = std::nearbyint(xc * kLog2e);
    float r = std::fma(-n, kLn2Hi, xc);
    r = std::fma(-n, kLn2Lo, r);
    float p = kExpP0;
    p = std::fma(p, r, kExpP1);
    p = std::fma(p, r, kExpP2);
    p = std::fma(p, r, kExpP3);
    p = std::fma(p, r, kExpP4);
    p = std::fma(p, r, kExpP5);
    p = std::fma(p, r * r, r + 1.0f);
    // 2^n by building the exponent bits: n is in [-126, 127] after the clamp.
    const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
    float scale;
    __builtin_memcpy(&scale, &bits, sizeof scale);
    out.v[l] = xv >= kExpLo ? p * scale : 0.0f;
  }
  return out;
}

// x = 2^e m with m in [0.75, 1.5).
inline void log_split(VF x, VF* m, VF* e) {
  for (int l = 0; l < kLanes; ++l) {
    int ex = 0;
    float mant = std::frexp(x.v[l], &ex);  // [0.5, 1)
    if (mant < 0.75f) mant *= 2.0f, ex -= 1;
    m->v[l] = mant;
    e->v[l] = static_cast<float>(ex);
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA::simd

#endif
