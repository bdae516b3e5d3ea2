// INTERIM: forwards to the reference until the packed AVX-512 kernel lands (issue 4).
#include "attnfc/kernels/gemm.hpp"

namespace attnfc::kernels {

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep) {
  gemm_reference(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
}

void gemm_strided_batched(bool transA, bool transB, int M, int N, int K, float alpha,
                          const float* A, int lda, int64_t strideA, const float* B, int ldb,
                          int64_t strideB, float beta, float* C, int ldc, int64_t strideC,
                          int batch) {
  for (int b = 0; b < batch; ++b) {
    gemm(transA, transB, M, N, K, alpha, A + b * strideA, lda, B + b * strideB, ldb, beta,
         C + b * strideC, ldc);
  }
}

}  // namespace attnfc::kernels
