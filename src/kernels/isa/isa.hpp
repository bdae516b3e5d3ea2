#pragma once
// Included first by every file in src/kernels/isa/. CMake compiles each of those files
// once per instruction set with -DATTNFC_ISA=<name> and that set's -march, so everything
// here and in the headers below lives in attnfc::kernels::<name>: the entry points that
// the set's KernelTable (isa_table.hpp) points at.
#include "../isa_table.hpp"

#if !defined(ATTNFC_ISA)
#error "src/kernels/isa/ is compiled once per instruction set: CMake defines ATTNFC_ISA"
#endif

// The compiler flags must give each set what its name promises.
#define ATTNFC_ISA_portable 1
#define ATTNFC_ISA_avx2 2
#define ATTNFC_ISA_avx512 3
#define ATTNFC_ISA_neon 4
#define ATTNFC_ISA_LEVEL_OF(name) ATTNFC_ISA_LEVEL_OF_(name)
#define ATTNFC_ISA_LEVEL_OF_(name) ATTNFC_ISA_##name
#define ATTNFC_ISA_LEVEL ATTNFC_ISA_LEVEL_OF(ATTNFC_ISA)
#if ATTNFC_ISA_LEVEL == ATTNFC_ISA_avx512 && !(defined(__AVX512F__) && defined(__AVX512DQ__) && \
                                               defined(__AVX512BW__) && defined(__AVX512VL__))
#error "the avx512 kernels need -march=x86-64-v4 (AVX-512 F/DQ/BW/VL)"
#endif
#if ATTNFC_ISA_LEVEL == ATTNFC_ISA_avx2 && \
    (!defined(__AVX2__) || !defined(__FMA__) || defined(__AVX512F__))
#error "the avx2 kernels need -march=x86-64-v3 (AVX2 + FMA, no AVX-512)"
#endif
#if ATTNFC_ISA_LEVEL == ATTNFC_ISA_portable && (defined(__AVX2__) || defined(__AVX512F__))
#error "the portable kernels are built for the baseline instruction set"
#endif
#if ATTNFC_ISA_LEVEL == ATTNFC_ISA_neon && !(defined(__aarch64__) && defined(__ARM_NEON))
#error "the neon kernels are built for aarch64 (ARMv8-A Advanced SIMD)"
#endif
// The neon set is chosen by its name, not by a compiler macro: aarch64's baseline, which
// the portable set is built for too, always has Advanced SIMD (__ARM_NEON).
#define ATTNFC_ISA_IS_NEON (ATTNFC_ISA_LEVEL == ATTNFC_ISA_neon)

namespace attnfc::kernels::ATTNFC_ISA {

inline constexpr Isa kIsa = ATTNFC_ISA_LEVEL == ATTNFC_ISA_avx512 ? Isa::Avx512
                            : ATTNFC_ISA_LEVEL == ATTNFC_ISA_avx2 ? Isa::Avx2
                            : ATTNFC_ISA_LEVEL == ATTNFC_ISA_neon ? Isa::Neon
                                                                  : Isa::Portable;

// The public kernels' signatures (include/attnfc/kernels/*.hpp), defined for this set.
void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep = {});
void gemm_strided_batched(bool transA, bool transB, int M, int N, int K, float alpha,
                          const float* A, int lda, int64_t strideA, const float* B, int ldb,
                          int64_t strideB, float beta, float* C, int ldc, int64_t strideC,
                          int batch);
void softmax_forward(const float* x, float* y, int rows, int cols, const RowMask& mask = {});
void softmax_backward(const float* y, const float* dy, float* dx, int rows, int cols);
void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* rstd, int rows, int C, float eps);
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int rows, int C);
void gelu_forward(const float* x, float* y, int64_t n, bool tanh_approx);
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n, bool tanh_approx);
void dropout_forward(const float* x, const float* residual, float* y, int64_t n, uint64_t seed,
                     float p);
void dropout_backward(const float* dy, float* dx, int64_t n, uint64_t seed, float p);
void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n,
                  const AdamWStep& s);
void attention_forward(const AttnParams& p, const float* Q, const float* K, const float* V,
                       float* O, float* lse);
void attention_backward(const AttnParams& p, const float* Q, const float* K, const float* V,
                        const float* O, const float* lse, const float* dO, float* dQ, float* dK,
                        float* dV);

}  // namespace attnfc::kernels::ATTNFC_ISA
