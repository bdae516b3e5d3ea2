// Dropout: the counter hash inlined and vectorised. The per-seed mixing is hoisted
// (random.hpp: seed_state), consecutive counters step the splitmix state by a constant,
// and keep(i) is an integer compare of the top 24 bits, the same decision as
// random_uniform(seed, i) >= p. AVX-512 (DQ for the 64-bit multiplies) handles 16
// elements per step, AVX2 8 (its 64-bit multiplies built from 32-bit ones); the
// portable loop is the same arithmetic one element at a time.
// x86 intrinsics only where the vector paths below use them: <immintrin.h> does not
// exist for other targets (aarch64 builds only the portable kernels).
#if (defined(__AVX512F__) && defined(__AVX512DQ__)) || defined(__AVX2__)
#include <immintrin.h>
#endif
#include "isa.hpp"

#include "attnfc/kernels/dropout.hpp"
#include "attnfc/kernels/random.hpp"
#include "parallel.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

namespace {

constexpr int64_t kChunk = 8192;

struct Mask {
  uint64_t state;
  uint32_t threshold;
  float inv_keep;
  Mask(uint64_t seed, float p)
      : state(seed_state(seed)), threshold(uniform_threshold24(p)), inv_keep(1.0f / (1.0f - p)) {}
  bool keep(int64_t i) const {
    return uniform_bits24(state, static_cast<uint64_t>(i)) >= threshold;
  }
};

#if defined(__AVX512F__) && defined(__AVX512DQ__)
constexpr bool kVector = true;

// All-lanes maskz shifts: GCC 12's unmasked form trips -Wmaybe-uninitialized (false positive).
constexpr __mmask8 kAll8 = 0xFF;

inline __m512i mix64v(__m512i z) {
  z = _mm512_xor_si512(z, _mm512_maskz_srli_epi64(kAll8, z, 30));
  z = _mm512_mullo_epi64(z, _mm512_set1_epi64(static_cast<int64_t>(0xBF58476D1CE4E5B9ull)));
  z = _mm512_xor_si512(z, _mm512_maskz_srli_epi64(kAll8, z, 27));
  z = _mm512_mullo_epi64(z, _mm512_set1_epi64(static_cast<int64_t>(0x94D049BB133111EBull)));
  return _mm512_xor_si512(z, _mm512_maskz_srli_epi64(kAll8, z, 31));
}

// Calls f(i, keep mask of elements i..i+15) for i = begin, begin + 16, ... < end - 15;
// returns the first index not covered.
template <class F>
inline int64_t for_blocks16(const Mask& m, int64_t begin, int64_t end, F&& f) {
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i gamma = _mm512_set1_epi64(static_cast<int64_t>(kGoldenGamma));
  // splitmix state of element i: state + (i + 1) * gamma (mod 2^64).
  __m512i z0 = _mm512_add_epi64(_mm512_set1_epi64(static_cast<int64_t>(
                                    m.state + static_cast<uint64_t>(begin + 1) * kGoldenGamma)),
                                _mm512_mullo_epi64(lane, gamma));
  const __m512i step8 = _mm512_set1_epi64(static_cast<int64_t>(8 * kGoldenGamma));
  const __m512i step16 = _mm512_set1_epi64(static_cast<int64_t>(16 * kGoldenGamma));
  const __m512i thr = _mm512_set1_epi64(m.threshold);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512i z1 = _mm512_add_epi64(z0, step8);
    const __mmask8 k0 =
        _mm512_cmpge_epu64_mask(_mm512_maskz_srli_epi64(kAll8, mix64v(z0), 40), thr);
    const __mmask8 k1 =
        _mm512_cmpge_epu64_mask(_mm512_maskz_srli_epi64(kAll8, mix64v(z1), 40), thr);
    f(i, static_cast<__mmask16>(k0 | (static_cast<unsigned>(k1) << 8)));
    z0 = _mm512_add_epi64(z0, step16);
  }
  return i;
}
#elif defined(__AVX2__)
constexpr bool kVector = true;

// z * c mod 2^64 per 64-bit lane from 32 x 32 -> 64 multiplies: lo(z) lo(c) plus the
// cross terms shifted up (hi(z) hi(c) only reaches bits >= 64).
inline __m256i mullo64(__m256i z, uint64_t c) {
  const __m256i c_lo = _mm256_set1_epi64x(static_cast<int64_t>(c & 0xFFFFFFFFu));
  const __m256i c_hi = _mm256_set1_epi64x(static_cast<int64_t>(c >> 32));
  const __m256i cross =
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(z, 32), c_lo), _mm256_mul_epu32(z, c_hi));
  return _mm256_add_epi64(_mm256_mul_epu32(z, c_lo), _mm256_slli_epi64(cross, 32));
}

inline __m256i mix64v(__m256i z) {
  z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 30));
  z = mullo64(z, 0xBF58476D1CE4E5B9ull);
  z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 27));
  z = mullo64(z, 0x94D049BB133111EBull);
  return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}

// Calls f(i, keep mask of elements i..i+7: all-ones 32-bit lanes) for i = begin,
// begin + 8, ... < end - 7; returns the first index not covered. The two state
// vectors hold elements {0, 1, 4, 5} and {2, 3, 6, 7}, so that taking the low halves
// of their 64-bit compare results (vshufps) puts the lanes in element order.
template <class F>
inline int64_t for_blocks8(const Mask& m, int64_t begin, int64_t end, F&& f) {
  const uint64_t base = m.state + static_cast<uint64_t>(begin + 1) * kGoldenGamma;
  auto at = [&](uint64_t k) { return static_cast<int64_t>(base + k * kGoldenGamma); };
  __m256i za = _mm256_setr_epi64x(at(0), at(1), at(4), at(5));
  __m256i zb = _mm256_setr_epi64x(at(2), at(3), at(6), at(7));
  const __m256i step8 = _mm256_set1_epi64x(static_cast<int64_t>(8 * kGoldenGamma));
  // bits >= threshold as a signed compare: bits < 2^24 and threshold <= 2^24.
  const __m256i thr = _mm256_set1_epi64x(static_cast<int64_t>(m.threshold) - 1);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256i ka = _mm256_cmpgt_epi64(_mm256_srli_epi64(mix64v(za), 40), thr);
    const __m256i kb = _mm256_cmpgt_epi64(_mm256_srli_epi64(mix64v(zb), 40), thr);
    f(i,
      _mm256_shuffle_ps(_mm256_castsi256_ps(ka), _mm256_castsi256_ps(kb), _MM_SHUFFLE(2, 0, 2, 0)));
    za = _mm256_add_epi64(za, step8);
    zb = _mm256_add_epi64(zb, step8);
  }
  return i;
}
#else
constexpr bool kVector = false;
#endif

// One element at a time, rounding the product before the add as the vector path does
// (the build has -ffp-contract=off), so every element has the same bits whichever path
// computed it.
void forward_tail(const Mask& m, const float* x, const float* r, float* y, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    const float d = m.keep(i) ? x[i] * m.inv_keep : 0.0f;
    y[i] = r ? r[i] + d : d;
  }
}

void backward_tail(const Mask& m, const float* dy, float* dx, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    if (m.keep(i)) dx[i] += dy[i] * m.inv_keep;
  }
}

void forward_range(const Mask& m, const float* x, const float* r, float* y, int64_t b, int64_t e) {
  int64_t i = b;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  const __m512 inv = _mm512_set1_ps(m.inv_keep);
  i = for_blocks16(m, b, e, [&](int64_t j, __mmask16 k) {
    __m512 d = _mm512_maskz_mul_ps(k, _mm512_loadu_ps(x + j), inv);
    if (r) d = _mm512_add_ps(_mm512_loadu_ps(r + j), d);
    _mm512_storeu_ps(y + j, d);
  });
#elif defined(__AVX2__)
  const __m256 inv = _mm256_set1_ps(m.inv_keep);
  i = for_blocks8(m, b, e, [&](int64_t j, __m256 k) {
    __m256 d = _mm256_and_ps(k, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv));  // +0 if dropped
    if (r) d = _mm256_add_ps(_mm256_loadu_ps(r + j), d);
    _mm256_storeu_ps(y + j, d);
  });
#endif
  forward_tail(m, x, r, y, i, e);
}

void backward_range(const Mask& m, const float* dy, float* dx, int64_t b, int64_t e) {
  int64_t i = b;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  const __m512 inv = _mm512_set1_ps(m.inv_keep);
  i = for_blocks16(m, b, e, [&](int64_t j, __mmask16 k) {
    const __m512 g = _mm512_mul_ps(_mm512_loadu_ps(dy + j), inv);
    const __m512 old = _mm512_loadu_ps(dx + j);
    _mm512_storeu_ps(dx + j, _mm512_mask_add_ps(old, k, old, g));
  });
#elif defined(__AVX2__)
  const __m256 inv = _mm256_set1_ps(m.inv_keep);
  i = for_blocks8(m, b, e, [&](int64_t j, __m256 k) {
    const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dy + j), inv);
    const __m256 old = _mm256_loadu_ps(dx + j);
    _mm256_storeu_ps(dx + j, _mm256_blendv_ps(old, _mm256_add_ps(old, g), k));
  });
#endif
  backward_tail(m, dy, dx, i, e);
}

}  // namespace

void dropout_forward(const float* x, const float* residual, float* y, int64_t n, uint64_t seed,
                     float p) {
  const Mask m(seed, p);
  detail::parallel_chunks(n, kChunk, kVector ? 2 : 8,
                          [&](int64_t b, int64_t e) { forward_range(m, x, residual, y, b, e); });
}

void dropout_backward(const float* dy, float* dx, int64_t n, uint64_t seed, float p) {
  const Mask m(seed, p);
  detail::parallel_chunks(n, kChunk, kVector ? 2 : 8,
                          [&](int64_t b, int64_t e) { backward_range(m, dy, dx, b, e); });
}

}  // namespace attnfc::kernels::ATTNFC_ISA
