#include <cmath>

#include "attnfc/kernels/gemm.hpp"

namespace attnfc::kernels {

float apply_activation(Activation act, float x) {
  switch (act) {
    case Activation::None:
      return x;
    case Activation::Relu:
      return x > 0.0f ? x : 0.0f;
    case Activation::GeluTanh: {
      const float k = 0.7978845608028654f;  // sqrt(2/pi)
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    case Activation::GeluErf:
      return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
  }
  return x;
}

void gemm_reference(bool transA, bool transB, int M, int N, int K, float alpha, const float* A,
                    int lda, const float* B, int ldb, float beta, float* C, int ldc,
                    const Epilogue& ep) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int k = 0; k < K; ++k) {
        const float a =
            transA ? A[static_cast<long>(k) * lda + i] : A[static_cast<long>(i) * lda + k];
        const float b =
            transB ? B[static_cast<long>(j) * ldb + k] : B[static_cast<long>(k) * ldb + j];
        acc += static_cast<double>(a) * b;
      }
      float& c = C[static_cast<long>(i) * ldc + j];
      float v = alpha * static_cast<float>(acc);
      if (beta != 0.0f) v += beta * c;
      if (ep.bias) v += ep.bias[j];
      c = apply_activation(ep.act, v);
    }
  }
}

}  // namespace attnfc::kernels
