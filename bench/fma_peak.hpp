#pragma once
// The FMA peak a kernel path can reach on this machine, measured rather than computed
// from a clock rate (a virtual machine's nominal clock says little about the one it
// gets): every thread of a team runs 12 independent chains of vector FMAs, as the
// GEMM micro-kernels do (4 cycles of latency on 2 pipes need 8 chains in flight),
// and the best of the timed runs of a second counts. The issue's "90% of the FMA peak at
// 1024^3" is GFLOP/s of the product over this figure, at the same thread count.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "attnfc/kernels/isa.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {

#if defined(__x86_64__)
constexpr int kPeakChains = 12;

__attribute__((target("avx2,fma"))) inline float fma_chains_avx2(long iters) {
  __m256 acc[kPeakChains];
  for (int r = 0; r < kPeakChains; ++r) acc[r] = _mm256_set1_ps(0.001f * r);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int r = 0; r < kPeakChains; ++r) acc[r] = _mm256_fmadd_ps(acc[r], a, b);
  }
  __m256 s = acc[0];
  for (int r = 1; r < kPeakChains; ++r) s = _mm256_add_ps(s, acc[r]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) inline float fma_chains_avx512(long iters) {
  __m512 acc[kPeakChains];
  for (int r = 0; r < kPeakChains; ++r) acc[r] = _mm512_set1_ps(0.001f * r);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int r = 0; r < kPeakChains; ++r) acc[r] = _mm512_fmadd_ps(acc[r], a, b);
  }
  __m512 s = acc[0];
  for (int r = 1; r < kPeakChains; ++r) s = _mm512_add_ps(s, acc[r]);
  return _mm512_cvtss_f32(s);
}
#endif

// GFLOP/s of `threads` threads issuing the widest FMA of `isa`; 0 where this build has
// no such loop (portable, NEON).
inline double fma_peak_gflops(attnfc::kernels::Isa isa, int threads) {
#if defined(__x86_64__)
  using attnfc::kernels::Isa;
  if (isa != Isa::Avx2 && isa != Isa::Avx512) return 0.0;
  const int lanes = isa == Isa::Avx512 ? 16 : 8;
  constexpr long kIters = 20'000'000;
  std::vector<float> sink(threads);
  double best = 0.0;
  // At least a second of runs: a process's first tenths of a second can run at a lower
  // clock (a 2-thread peak measured right at start came out 30% low on a KVM guest).
  const auto start = std::chrono::steady_clock::now();
  for (int run = 0; run < 7 || std::chrono::steady_clock::now() - start < std::chrono::seconds(1);
       ++run) {
    // Wall clock even under --cpu-time: the peak of the team, not of one thread.
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      sink[t] = isa == Isa::Avx512 ? fma_chains_avx512(kIters) : fma_chains_avx2(kIters);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double flops = 2.0 * lanes * kPeakChains * kIters * threads;
    best = std::max(best, flops / seconds * 1e-9);
  }
  // The sums are used, so the loops cannot be dropped.
  volatile float keep = 0.0f;
  for (float v : sink) keep = keep + v;
  return best;
#else
  (void)isa;
  (void)threads;
  return 0.0;
#endif
}

}  // namespace bench
