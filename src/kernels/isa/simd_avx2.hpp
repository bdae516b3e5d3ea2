#pragma once
// simd::VF on AVX2 + FMA: two ymm per vector, 16-bit integer masks (included by simd_math.hpp,
// which documents the API).
#include "simd_constants.hpp"

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>

namespace attnfc::kernels::ATTNFC_ISA::simd {

// Two ymm per vector: lo holds lanes 0-7, hi lanes 8-15. Masks stay 16-bit integers
// (lane l = bit l), so tail masks and the whole-vector test are integer work; a mask
// becomes a vector (lane l's bit in its sign bit, all that blendv, maskload and
// maskstore look at) only where a lane-wise instruction needs one.
struct VF {
  __m256 lo, hi;
};
using Mask = uint32_t;
constexpr Mask kAll = 0xFFFF;

namespace ymm {
inline __m256i sign_lo(Mask m) {
  return _mm256_sllv_epi32(_mm256_set1_epi32(static_cast<int>(m)),
                           _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24));
}
inline __m256i sign_hi(Mask m) {
  return _mm256_sllv_epi32(_mm256_set1_epi32(static_cast<int>(m)),
                           _mm256_setr_epi32(23, 22, 21, 20, 19, 18, 17, 16));
}
inline Mask bits(__m256 lo, __m256 hi) {
  return static_cast<Mask>(_mm256_movemask_ps(lo)) | static_cast<Mask>(_mm256_movemask_ps(hi)) << 8;
}
}  // namespace ymm

inline Mask tail_mask(int n) {
  return n >= kLanes ? Mask(0xFFFF) : static_cast<Mask>((1u << (n > 0 ? n : 0)) - 1u);
}
inline VF zero() {
  return {_mm256_setzero_ps(), _mm256_setzero_ps()};
}
inline VF set1(float a) {
  return {_mm256_set1_ps(a), _mm256_set1_ps(a)};
}
inline VF load(const float* p) {
  return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
// Lanes outside m read nothing (no fault past the end) and hold `fill`. Whole vectors
// (every loop but its last step) take the plain loads.
inline VF load(const float* p, Mask m, float fill = 0.0f) {
  if (m == kAll) return load(p);
  const __m256i ml = ymm::sign_lo(m), mh = ymm::sign_hi(m);
  VF r = {_mm256_maskload_ps(p, ml), _mm256_maskload_ps(p + 8, mh)};
  // maskload zeroes the lanes it skips: a constant fill of +0 needs no blend.
  if (!(__builtin_constant_p(fill) && __builtin_bit_cast(uint32_t, fill) == 0u)) {
    const __m256 f = _mm256_set1_ps(fill);
    r.lo = _mm256_blendv_ps(f, r.lo, _mm256_castsi256_ps(ml));
    r.hi = _mm256_blendv_ps(f, r.hi, _mm256_castsi256_ps(mh));
  }
  return r;
}
inline void store(float* p, VF a) {
  _mm256_storeu_ps(p, a.lo);
  _mm256_storeu_ps(p + 8, a.hi);
}
inline void store(float* p, VF a, Mask m) {
  if (m == kAll) return store(p, a);
  _mm256_maskstore_ps(p, ymm::sign_lo(m), a.lo);
  _mm256_maskstore_ps(p + 8, ymm::sign_hi(m), a.hi);
}
inline VF add(VF a, VF b) {
  return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)};
}
inline VF sub(VF a, VF b) {
  return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)};
}
inline VF mul(VF a, VF b) {
  return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)};
}
inline VF div(VF a, VF b) {
  return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)};
}
inline VF fmadd(VF a, VF b, VF c) {  // a*b+c, one rounding
  return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
}
inline VF fnmadd(VF a, VF b, VF c) {  // c-a*b, one rounding
  return {_mm256_fnmadd_ps(a.lo, b.lo, c.lo), _mm256_fnmadd_ps(a.hi, b.hi, c.hi)};
}
// vmaxps(a, b) is exactly a > b ? a : b (b when either is NaN or both are zeros), and
// vminps(a, b) is a < b ? a : b: the portable definitions, argument order included.
inline VF max(VF a, VF b) {
  return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)};
}
inline VF min(VF a, VF b) {
  return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)};
}
inline VF sqrt(VF a) {
  return {_mm256_sqrt_ps(a.lo), _mm256_sqrt_ps(a.hi)};
}
// Lanes where a < b; select(m, a, b) takes a where m is set, else b.
inline Mask less(VF a, VF b) {
  return ymm::bits(_mm256_cmp_ps(a.lo, b.lo, _CMP_LT_OQ), _mm256_cmp_ps(a.hi, b.hi, _CMP_LT_OQ));
}
inline VF select(Mask m, VF a, VF b) {
  return {_mm256_blendv_ps(b.lo, a.lo, _mm256_castsi256_ps(ymm::sign_lo(m))),
          _mm256_blendv_ps(b.hi, a.hi, _mm256_castsi256_ps(ymm::sign_hi(m)))};
}
// The portable tree: lanes l and l + 8, then l + 4, l + 2, l + 1 (lower lane first).
inline float reduce_add(VF a) {
  const __m256 v = _mm256_add_ps(a.lo, a.hi);
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}
// The portable scan m = v[l] > m ? v[l] : m returns v[0] if that is NaN, skips NaN in
// later lanes and, among equal values (+0 and -0), keeps the earliest lane. A tree of
// keep(a, b) = b > a ? b : a = vmaxps(b, a) over adjacent lane ranges (a the earlier)
// does the same once NaN in lanes 1-15 reads as -inf: pairs, quads, halves, then lo/hi.
inline float reduce_max(VF a) {
  const __m256 ninf = _mm256_set1_ps(-kInf);
  const __m256 later = _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, -1));
  __m256 lo =
      _mm256_blendv_ps(a.lo, ninf, _mm256_and_ps(_mm256_cmp_ps(a.lo, a.lo, _CMP_UNORD_Q), later));
  __m256 hi = _mm256_blendv_ps(a.hi, ninf, _mm256_cmp_ps(a.hi, a.hi, _CMP_UNORD_Q));
  lo = _mm256_max_ps(_mm256_permute_ps(lo, _MM_SHUFFLE(2, 3, 0, 1)), lo);
  hi = _mm256_max_ps(_mm256_permute_ps(hi, _MM_SHUFFLE(2, 3, 0, 1)), hi);
  lo = _mm256_max_ps(_mm256_permute_ps(lo, _MM_SHUFFLE(1, 0, 3, 2)), lo);
  hi = _mm256_max_ps(_mm256_permute_ps(hi, _MM_SHUFFLE(1, 0, 3, 2)), hi);
  const __m128 l = _mm_max_ss(_mm256_extractf128_ps(lo, 1), _mm256_castps256_ps128(lo));
  const __m128 h = _mm_max_ss(_mm256_extractf128_ps(hi, 1), _mm256_castps256_ps128(hi));
  return _mm_cvtss_f32(_mm_max_ss(h, l));
}
// Lanes where pad[j] == 0 (the key is kept), restricted to the first n lanes; a short
// tail is read byte by byte so that nothing past pad[n - 1] is touched.
inline Mask keep_mask(const uint8_t* pad, int n) {
  if (n >= kLanes) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pad));
    return static_cast<Mask>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_setzero_si128())));
  }
  Mask m = 0;
  for (int j = 0; j < n; ++j) m |= static_cast<Mask>((pad[j] == 0) << j);
  return m;
}

namespace ymm {
// The portable exp, 8 lanes: the same clamp (NaN -> lo), rounding, Cody-Waite steps,
// FMA chain, 2^n from exponent bits and flush below kExpLo.
inline __m256 exp(__m256 x) {
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
  return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(kExpLo), _CMP_GE_OQ), y);
}
// x = 2^e m with m in [0.75, 1.5), as frexp plus the portable fold, for positive normal x.
inline void split(__m256 x, __m256* m, __m256* e) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256 m1 = _mm256_castsi256_ps(_mm256_or_si256(
      _mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x3F800000)));
  const __m256 e1 =
      _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127)));
  const __m256 big = _mm256_cmp_ps(m1, _mm256_set1_ps(1.5f), _CMP_GE_OQ);  // m1 in [1, 2)
  *m = _mm256_blendv_ps(m1, _mm256_mul_ps(m1, _mm256_set1_ps(0.5f)), big);
  *e = _mm256_blendv_ps(e1, _mm256_add_ps(e1, _mm256_set1_ps(1.0f)), big);
}
}  // namespace ymm

inline VF exp(VF x) {
  return {ymm::exp(x.lo), ymm::exp(x.hi)};
}

// x = 2^e m with m in [0.75, 1.5), for positive normal lanes (log's contract here).
inline void log_split(VF x, VF* m, VF* e) {
  ymm::split(x.lo, &m->lo, &e->lo);
  ymm::split(x.hi, &m->hi, &e->hi);
}
}  // namespace attnfc::kernels::ATTNFC_ISA::simd

#endif
