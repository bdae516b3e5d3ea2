// Public GEMM entry points: path selection (unpacked for tiny products, otherwise the
// best packed micro-kernel this build has), threading, and the strided batch. The
// packed loop nest itself is in gemm_driver.cpp.
#include "isa.hpp"

#include <omp.h>

#include <algorithm>

#include "attnfc/kernels/threading.hpp"
#include "gemm_internal.hpp"

namespace attnfc::kernels::ATTNFC_ISA {
namespace gemm_detail {
namespace {

// Products below this many multiply-adds may take the unpacked path (see prefer_small).
constexpr double kSmallMacs = 32768.0;
// Products below this many multiply-adds are not worth a parallel region.
constexpr double kParallelMacs = 262144.0;

// Tiny products where packing costs more than it saves: with op(B) row-major the
// unpacked path sweeps rows of B once per row of A, good for M <= 4 (1 x 96 x 336 NN:
// 2.2 us against 6.3 packed, AMD EPYC Zen 5 class). With B stored N x K it computes
// scalar FMA chains in the packed path's order and never wins (1 x 96 x 336 NT: 6.0 us
// against 6.2; 16 x 16 x 64: 3.5 against 0.7), so NT products are always packed.
bool prefer_small(bool transB, int M, double macs) {
  return macs < kSmallMacs && !transB && M <= 4;
}

Path best_packed_path() {
#if defined(__AVX512F__)
  return Path::Avx512;
#elif defined(__AVX2__) && defined(__FMA__)
  return Path::Avx2;
#elif ATTNFC_ISA_IS_NEON
  return Path::Neon;
#else
  return Path::Portable;
#endif
}

}  // namespace

bool path_available(Path p) {
  switch (p) {
    case Path::Auto:
    case Path::Small:
    case Path::Portable:
      return true;
    case Path::Avx2:
#if defined(__AVX2__) && defined(__FMA__)
      return true;
#else
      return false;
#endif
    case Path::Avx512:
#if defined(__AVX512F__)
      return true;
#else
      return false;
#endif
    case Path::Neon:
      return ATTNFC_ISA_IS_NEON;
  }
  return false;
}

KernelSpec kernel_spec(Path p) {
  switch (p) {
#if defined(__AVX512F__)
    case Path::Avx512:
      return avx512_spec();
#endif
#if defined(__AVX2__) && defined(__FMA__)
    case Path::Avx2:
      return avx2_spec();
#endif
#if ATTNFC_ISA_IS_NEON
    case Path::Neon:
      return neon_spec();
#endif
    default:
      return portable_spec();
  }
}

void gemm_with_path(Path path, bool threaded, bool transA, bool transB, int M, int N, int K,
                    float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                    float* C, int ldc, const Epilogue& ep) {
  if (M <= 0 || N <= 0) return;
  const double macs = static_cast<double>(M) * N * K;
  if (path == Path::Auto) path = prefer_small(transB, M, macs) ? Path::Small : best_packed_path();
  if (!path_available(path)) path = best_packed_path();
  // Serial paths set FTZ/DAZ too, so denormals behave the same at any thread count.
  enable_flush_to_zero();
  if (path == Path::Small || K <= 0) {
    gemm_small(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
    return;
  }
  const KernelSpec ks = kernel_spec(path);
  const Problem p{transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep};
  const int max_threads = omp_get_max_threads();
  if (!threaded || max_threads <= 1 || omp_in_parallel() || macs < kParallelMacs) {
    gemm_packed(ks, p, false, 1);
    return;
  }
#pragma omp parallel num_threads(max_threads)
  {
    enable_flush_to_zero();
    gemm_packed(ks, p, omp_get_num_threads() > 1, omp_get_num_threads());
  }
}

}  // namespace gemm_detail

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep) {
  gemm_detail::gemm_with_path(gemm_detail::Path::Auto, true, transA, transB, M, N, K, alpha, A, lda,
                              B, ldb, beta, C, ldc, ep);
}

// Many small products (attention heads): one product per thread, single-threaded
// inside, measured 2.3x faster than threading each product. Each product's result
// does not depend on which thread computes it, so the schedule can be dynamic.
void gemm_strided_batched(bool transA, bool transB, int M, int N, int K, float alpha,
                          const float* A, int lda, int64_t strideA, const float* B, int ldb,
                          int64_t strideB, float beta, float* C, int ldc, int64_t strideC,
                          int batch) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  const long a_floats = static_cast<long>(transA ? K : M) * lda;
  const long b_floats = static_cast<long>(transB ? N : K) * ldb;
  // The next product's operands are fetched into L2 while this one computes: the batch
  // streams from L3 or memory, and the packers read B 8 rows at a time, which the
  // hardware prefetcher does not foresee (1024 x (64x64x32) NT, avx2, one thread, AMD
  // EPYC Zen 5 class: 0.83-1.0x OpenBLAS before, 0.97-1.04x after). Only operands that
  // fit L2 easily are worth it.
  auto prefetch_operands = [&](const float* a, const float* b) {
    if (a_floats + b_floats > 16384) return;
    for (long i = 0; i < a_floats; i += 16) __builtin_prefetch(a + i, 0, 2);
    for (long i = 0; i < b_floats; i += 16) __builtin_prefetch(b + i, 0, 2);
  };
  const int nt = omp_get_max_threads();
  if (nt > 1 && batch >= nt && !omp_in_parallel()) {
    const int chunk = std::max(1, batch / (nt * 8));
#pragma omp parallel num_threads(nt)
    {
      enable_flush_to_zero();
#pragma omp for schedule(dynamic, chunk)
      for (int b = 0; b < batch; ++b) {
        if (b + 1 < batch) prefetch_operands(A + (b + 1) * strideA, B + (b + 1) * strideB);
        gemm_detail::gemm_with_path(gemm_detail::Path::Auto, false, transA, transB, M, N, K, alpha,
                                    A + b * strideA, lda, B + b * strideB, ldb, beta,
                                    C + b * strideC, ldc, {});
      }
    }
    return;
  }
  for (int b = 0; b < batch; ++b) {
    if (b + 1 < batch) prefetch_operands(A + (b + 1) * strideA, B + (b + 1) * strideB);
    gemm(transA, transB, M, N, K, alpha, A + b * strideA, lda, B + b * strideB, ldb, beta,
         C + b * strideC, ldc);
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA
