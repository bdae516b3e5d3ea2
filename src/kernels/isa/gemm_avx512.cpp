// AVX-512 micro-kernel: a 12 x 32 tile of C held in 24 zmm accumulators.
// Per k it loads two B vectors and broadcasts 12 A values: 24 FMAs against 14 loads,
// which keeps both FMA ports of Ice Lake busy while the loads fit the two load ports.
// 24 independent accumulators cover the FMA latency (4 cycles x 2 ports = 8 needed).
// The bias/activation epilogue is fused into the masked store (GELU from simd_gelu.hpp,
// the formula every path and the elementwise kernel use). One template gives the
// packed form and the forms that read row-major op(A) in place or row-major op(B) in
// place while packing it; see gemm_driver.cpp for when.
#include "isa.hpp"

#include "gemm_internal.hpp"
#include "simd_gelu.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstdint>

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;

// Note: the maskz_ forms of min/max/roundscale/scalef with a full mask are used on purpose;
// GCC 12's unmasked forms expand through _mm512_undefined_ps and trip
// -Wmaybe-uninitialized under -Werror.

inline __m512 activate(Activation act, __m512 v) {
  switch (act) {
    case Activation::None:
      return v;
    case Activation::Relu:
      return _mm512_maskz_max_ps(0xFFFF, v, _mm512_setzero_ps());
    case Activation::GeluTanh:
      return simd::gelu({v}, true).v;
    case Activation::GeluErf:
      return simd::gelu({v}, false).v;
  }
  return v;
}

// One 16-wide piece of a C row: alpha/beta, then (last K block) bias and activation.
inline void store_vec(__m512 acc, float* c, const float* bias, __mmask16 m, const TileStore& st) {
  __m512 v = _mm512_mul_ps(acc, _mm512_set1_ps(st.alpha));
  if (st.first) {
    if (st.beta != 0.0f) {
      v = _mm512_fmadd_ps(_mm512_set1_ps(st.beta), _mm512_maskz_loadu_ps(m, c), v);
    }
  } else {
    v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, c), v);
  }
  if (st.last) {
    if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias));
    v = activate(st.act, v);
  }
  _mm512_mask_storeu_ps(c, m, v);
}

inline __mmask16 lane_mask(int n) {
  if (n >= 16) return 0xFFFF;
  if (n <= 0) return 0;
  return static_cast<__mmask16>((1u << n) - 1u);
}

// The C tile is touched only after the K loop; start fetching it now so the store
// does not wait on L3 or memory (C is often far larger than L2).
inline void prefetch_tile(const TileStore& st) {
  for (int r = 0; r < st.rows; ++r) {
    const char* c = reinterpret_cast<const char*>(st.C + static_cast<long>(r) * st.ldc);
    _mm_prefetch(c, _MM_HINT_T0);
    _mm_prefetch(c + 64, _MM_HINT_T0);
    _mm_prefetch(c + 124, _MM_HINT_T0);
  }
}

inline void store_tile(const __m512 (&c0)[kMr], const __m512 (&c1)[kMr], const TileStore& st) {
  const __mmask16 m0 = lane_mask(st.cols);
  const __mmask16 m1 = lane_mask(st.cols - 16);
  const float* bias0 = st.bias;
  const float* bias1 = st.bias ? st.bias + 16 : nullptr;
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    if (r < st.rows) {
      float* c = st.C + static_cast<long>(r) * st.ldc;
      store_vec(c0[r], c, bias0, m0, st);
      if (m1) store_vec(c1[r], c + 16, bias1, m1, st);
    }
  }
}

// Where the kernel reads op(A) and what else it does on the way.
enum class AFrom {
  Packed,    // pa holds kMr values per k
  RowMajor,  // row-major A in place: row r of the panel is a + r * lda, k contiguous
};

// Rows that the packing forms prefetch ahead: each k is a new row of the source, often
// a new page, which the hardware prefetcher does not follow; packing separately from
// L3 ran at ~16 GB/s with the FMA units idle, while fetched ahead inside the kernel
// the loads overlap the FMAs.
constexpr int kAhead = 24;

// Prefetches `bytes` (<= 128) at p + kAhead rows of `ld` floats. Integer address: rows
// past the operand's end may be prefetched, but not formed as pointers.
inline void prefetch_ahead(const float* p, long ld, int bytes) {
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(p) + kAhead * ld * sizeof(float);
  _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
  if (bytes > 64) _mm_prefetch(reinterpret_cast<const char*>(ahead + 64), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(ahead + bytes - 4), _MM_HINT_T0);
}

// The general 12 x 32 kernel. op(A) comes from kFrom; op(B) from the packed panel b,
// or with kPackB from row-major B in place (row k of the panel is b + k * ldb), copied
// to the packed panel b_out as it goes. Every form performs the same FMAs in the same
// k order, so all give identical results.
template <AFrom kFrom, bool kPackB>
void kernel_12x32(int kc, const float* a, long lda, const float* b, long ldb, float* b_out,
                  const TileStore& st) {
  prefetch_tile(st);
  __m512 c0[kMr], c1[kMr];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    c0[r] = _mm512_setzero_ps();
    c1[r] = _mm512_setzero_ps();
  }
  // RowMajor: four row pointers three rows apart and one stride cover the twelve rows
  // in x86 addressing modes.
  const float* rows[4] = {a, a + 3 * lda, a + 6 * lda, a + 9 * lda};
#pragma GCC unroll 2
  for (int k = 0; k < kc; ++k) {
    __m512 b0, b1;
    if constexpr (kPackB) {
      prefetch_ahead(b, ldb, kNr * sizeof(float));
      b0 = _mm512_loadu_ps(b);
      b1 = _mm512_loadu_ps(b + 16);
      _mm512_store_ps(b_out, b0);
      _mm512_store_ps(b_out + 16, b1);
      b += ldb;
      b_out += kNr;
    } else {
      b0 = _mm512_load_ps(b);
      b1 = _mm512_load_ps(b + 16);
      _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr), _MM_HINT_T0);
      b += kNr;
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
#pragma GCC unroll 3
      for (int t = 0; t < 3; ++t) {
        const int r = 3 * q + t;
        float av;
        if constexpr (kFrom == AFrom::RowMajor) {
          av = rows[q][t * lda + k];
        } else {
          av = a[r];
        }
        const __m512 v = _mm512_set1_ps(av);
        c0[r] = _mm512_fmadd_ps(v, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(v, b1, c1[r]);
      }
    }
    if constexpr (kFrom == AFrom::Packed) a += kMr;
  }
  store_tile(c0, c1, st);
}

void kernel_packed(int kc, const float* pa, const float* pb, const TileStore& st) {
  kernel_12x32<AFrom::Packed, false>(kc, pa, 0, pb, 0, nullptr, st);
}
void kernel_row_major_a(int kc, const float* a, long lda, const float* pb, const TileStore& st) {
  kernel_12x32<AFrom::RowMajor, false>(kc, a, lda, pb, 0, nullptr, st);
}
void kernel_packing_b(int kc, const float* pa, long, const float* b, long ldb, float* pb,
                      const TileStore& st) {
  kernel_12x32<AFrom::Packed, true>(kc, pa, 0, b, ldb, pb, st);
}
void kernel_row_major_a_packing_b(int kc, const float* a, long lda, const float* b, long ldb,
                                  float* pb, const TileStore& st) {
  kernel_12x32<AFrom::RowMajor, true>(kc, a, lda, b, ldb, pb, st);
}

}  // namespace

KernelSpec avx512_spec() {
  return {kMr,
          kNr,
          &kernel_packed,
          &kernel_row_major_a,
          &kernel_packing_b,
          &kernel_row_major_a_packing_b};
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail

#endif  // __AVX512F__
