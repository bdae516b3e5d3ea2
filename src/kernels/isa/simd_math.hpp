#pragma once
// A 16-lane float vector for the elementwise / row kernels (softmax, layernorm,
// GELU, AdamW, attention): one zmm on AVX-512, two ymm on AVX2 + FMA, otherwise
// plain 16-element loops that the compiler vectorises for the baseline ISA.
// Every path evaluates every lane with the same formulas (the same FMAs, the same
// NaN rules for max/min); horizontal reductions use one fixed order, so a row's
// result never depends on which thread or which instruction set ran it. (A NaN
// result is NaN everywhere, but its sign and payload are not pinned: they follow
// the operand order each compiler picked.)
#include <cmath>
#include <cstdint>
#include <limits>
#include "isa.hpp"
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace attnfc::kernels::ATTNFC_ISA::simd {

constexpr int kLanes = 16;
constexpr float kInf = std::numeric_limits<float>::infinity();

// exp(x) argument range: below kExpLo the result is flushed to exactly 0 (so a
// masked -inf score gives weight 0, not 1e-38); above kExpHi it saturates at a
// large finite value (exp(88) ~ 1.7e38) instead of overflowing to inf.
constexpr float kExpLo = -87.33654f;
constexpr float kExpHi = 88.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;     // ln 2 split in two so that n * kLn2Hi
constexpr float kLn2Lo = -2.12194440e-4f;  // is exact (Cody-Waite reduction)
// Degree-5 minimax polynomial for (exp(r) - 1 - r) / r^2 on [-ln2/2, ln2/2];
// relative error of the result is about 1 ulp.
constexpr float kExpP0 = 1.9875691500e-4f;
constexpr float kExpP1 = 1.3981999507e-3f;
constexpr float kExpP2 = 8.3334519073e-3f;
constexpr float kExpP3 = 4.1665795894e-2f;
constexpr float kExpP4 = 1.6666665459e-1f;
constexpr float kExpP5 = 5.0000001201e-1f;
// log(x) for finite x > 0: x = 2^e m with m in [0.75, 1.5), and
// log m = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.2, by its odd series to t^9
// (truncation < 4e-9 relative).
constexpr float kLn2 = 0.693147180559945309f;

#if defined(__AVX512F__)

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

#elif defined(__AVX2__) && defined(__FMA__)

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

#else  // portable: 16-lane loops, auto-vectorised for the baseline instruction set

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

#endif

// Natural log of finite positive normal lanes (see kLn2 above); other lanes are
// unspecified. One formula on every path: only the exponent/mantissa split differs.
inline VF log(VF x) {
  VF m, e;
  log_split(x, &m, &e);
  const VF one = set1(1.0f);
  const VF t = div(sub(m, one), add(m, one));
  const VF t2 = mul(t, t);
  VF q = set1(1.0f / 9);
  q = fmadd(q, t2, set1(1.0f / 7));
  q = fmadd(q, t2, set1(1.0f / 5));
  q = fmadd(q, t2, set1(1.0f / 3));
  q = fmadd(q, t2, one);
  return fmadd(e, set1(kLn2), mul(add(t, t), q));
}

// Horizontal helpers over a whole contiguous array, fixed order.
inline float sum(const float* x, int n) {
  VF a0 = zero(), a1 = zero();
  int j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    a0 = add(a0, load(x + j));
    a1 = add(a1, load(x + j + kLanes));
  }
  for (; j < n; j += kLanes) a0 = add(a0, load(x + j, tail_mask(n - j)));
  return reduce_add(add(a0, a1));
}

}  // namespace attnfc::kernels::ATTNFC_ISA::simd
