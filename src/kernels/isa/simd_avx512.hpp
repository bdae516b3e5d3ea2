#pragma once
// simd::VF on AVX-512: one zmm per vector, 16-bit mask registers (included by simd_math.hpp, which
// documents the API).
#include "simd_constants.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>

namespace attnfc::kernels::ATTNFC_ISA::simd {

struct VF {
  __m512 v;
};
using Mask = __mmask16;
// GCC 12 warns (-Wmaybe-uninitialized, a false positive) inside the unmasked forms of
// max/min/sqrt/roundscale/scalef; their all-lanes maskz forms are the same instruction.
constexpr Mask kAll = 0xFFFF;

inline Mask tail_mask(int n) {
  return n >= kLanes ? Mask(0xFFFF) : static_cast<Mask>((1u << (n > 0 ? n : 0)) - 1u);
}
inline VF zero() {
  return {_mm512_setzero_ps()};
}
inline VF set1(float a) {
  return {_mm512_set1_ps(a)};
}
inline VF load(const float* p) {
  return {_mm512_loadu_ps(p)};
}
// Lanes outside m read nothing (no fault past the end) and hold `fill`.
inline VF load(const float* p, Mask m, float fill = 0.0f) {
  return {_mm512_mask_loadu_ps(_mm512_set1_ps(fill), m, p)};
}
inline void store(float* p, VF a) {
  _mm512_storeu_ps(p, a.v);
}
inline void store(float* p, VF a, Mask m) {
  _mm512_mask_storeu_ps(p, m, a.v);
}
inline VF add(VF a, VF b) {
  return {_mm512_add_ps(a.v, b.v)};
}
inline VF sub(VF a, VF b) {
  return {_mm512_sub_ps(a.v, b.v)};
}
inline VF mul(VF a, VF b) {
  return {_mm512_mul_ps(a.v, b.v)};
}
inline VF div(VF a, VF b) {
  return {_mm512_div_ps(a.v, b.v)};
}
inline VF fmadd(VF a, VF b, VF c) {
  return {_mm512_fmadd_ps(a.v, b.v, c.v)};
}  // a*b+c
inline VF fnmadd(VF a, VF b, VF c) {
  return {_mm512_fnmadd_ps(a.v, b.v, c.v)};
}  // c-a*b
inline VF max(VF a, VF b) {
  return {_mm512_maskz_max_ps(kAll, a.v, b.v)};
}
inline VF min(VF a, VF b) {
  return {_mm512_maskz_min_ps(kAll, a.v, b.v)};
}
inline VF sqrt(VF a) {
  return {_mm512_maskz_sqrt_ps(kAll, a.v)};
}
// Lanes where a < b; select(m, a, b) takes a where m is set, else b.
inline Mask less(VF a, VF b) {
  return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ);
}
inline VF select(Mask m, VF a, VF b) {
  return {_mm512_mask_blend_ps(m, b.v, a.v)};
}
// Butterfly reductions (fixed order): halves, quarters, pairs, neighbours.
inline float reduce_add(VF a) {
  __m512 v = a.v;
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}
inline float reduce_max(VF a) {
  __m512 v = a.v;
  v = _mm512_maskz_max_ps(kAll, v, _mm512_maskz_shuffle_f32x4(kAll, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_maskz_max_ps(kAll, v, _mm512_maskz_shuffle_f32x4(kAll, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_maskz_max_ps(kAll, v, _mm512_maskz_permute_ps(kAll, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_maskz_max_ps(kAll, v, _mm512_maskz_permute_ps(kAll, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}
// Lanes where pad[j] == 0 (the key is kept), restricted to the first n lanes.
inline Mask keep_mask(const uint8_t* pad, int n) {
  const Mask t = tail_mask(n);
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  const __m128i b = _mm_maskz_loadu_epi8(t, pad);
  return static_cast<Mask>(_mm_cmpeq_epi8_mask(b, _mm_setzero_si128()) & t);
#else
  Mask m = 0;
  for (int j = 0; j < n && j < kLanes; ++j) m |= static_cast<Mask>((pad[j] == 0) << j);
  return m;
#endif
}

inline VF exp(VF x) {
  const __m512 keep_zero_lanes = x.v;
  const __m512 xc = min(max(x, set1(kExpLo)), set1(kExpHi)).v;
  const __m512 n = _mm512_maskz_roundscale_ps(kAll, _mm512_mul_ps(xc, _mm512_set1_ps(kLog2e)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP5));
  const __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512 y = _mm512_maskz_scalef_ps(kAll, p, n);
  const Mask alive = _mm512_cmp_ps_mask(keep_zero_lanes, _mm512_set1_ps(kExpLo), _CMP_GE_OQ);
  return {_mm512_maskz_mov_ps(alive, y)};
}

// x = 2^e m with m in [0.75, 1.5), for log below.
inline void log_split(VF x, VF* m_out, VF* e_out) {
  __m512 m = _mm512_maskz_getmant_ps(kAll, x.v, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
  __m512 e = _mm512_maskz_getexp_ps(kAll, x.v);
  const Mask big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.5f), _CMP_GE_OQ);
  *m_out = {_mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f))};
  *e_out = {_mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.0f))};
}
}  // namespace attnfc::kernels::ATTNFC_ISA::simd

#endif
