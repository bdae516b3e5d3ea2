#pragma once
// Single-precision GEMM, the performance core of attnfc.
//
//   C[M,N] = act( alpha * op(A)[M,K] * op(B)[K,N] + beta * C + bias[N] )
//
// Row-major. op(A) = A (M x K, lda >= K) or, with transA, A is K x M (lda >= M).
//            op(B) = B (K x N, ldb >= N) or, with transB, B is N x K (ldb >= K).
// beta == 0 means C is not read (it may hold garbage or NaN).
// Determinism: every C element's sum over K is evaluated in one fixed order that
// does not depend on the number of OpenMP threads, so results are bit-identical
// for OMP_NUM_THREADS=1 and 2.
// The linear layer uses NT (forward: Y = X W^T), NN (dX = dY W) and TN (dW = dY^T X).
#include <cstdint>

namespace attnfc::kernels {

enum class Activation : int { None = 0, Relu = 1, GeluTanh = 2, GeluErf = 3 };

// Fused into the store: C = act(C + bias). bias may be null (no bias).
struct Epilogue {
  const float* bias = nullptr;  // [N], added to every row of C
  Activation act = Activation::None;
};

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep = {});

// batch independent products; matrix b uses A + b*strideA, B + b*strideB, C + b*strideC.
// Parallel over the batch when it is large enough, otherwise over output tiles.
void gemm_strided_batched(bool transA, bool transB, int M, int N, int K, float alpha,
                          const float* A, int lda, int64_t strideA, const float* B, int ldb,
                          int64_t strideB, float beta, float* C, int ldc, int64_t strideC,
                          int batch);

// Plain triple loop (accumulates in double): the ground truth for tests.
void gemm_reference(bool transA, bool transB, int M, int N, int K, float alpha, const float* A,
                    int lda, const float* B, int ldb, float beta, float* C, int ldc,
                    const Epilogue& ep = {});

// Scalar activation used by the epilogue and by the references.
float apply_activation(Activation act, float x);

}  // namespace attnfc::kernels
