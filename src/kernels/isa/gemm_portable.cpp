// Portable pieces of the GEMM: the scalar tile epilogue shared by the AVX2 and portable
// kernels, a plain-C++ 4 x 16 micro-kernel that the compiler vectorises, and the
// unpacked path for tiny products where packing would cost more than it saves.
#include "isa.hpp"

#include <algorithm>
#include <cmath>

#include "gemm_internal.hpp"
#include "simd_gelu.hpp"

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {

void store_tile_generic(const float* acc, int ld, const TileStore& st) {
  // The arithmetic of the AVX-512 epilogue, element for element: v = alpha*acc, then
  // fma(beta, c, v) on the first K block or c + v on later ones, then bias and the
  // activation (GELU through simd_gelu.hpp, as everywhere), so every micro-kernel path
  // stores the same bits.
  const float alpha = st.alpha, beta = st.beta;
  for (int r = 0; r < st.rows; ++r) {
    float* c = st.C + static_cast<long>(r) * st.ldc;
    const float* a = acc + static_cast<long>(r) * ld;
    const int n = st.cols;
    if (!st.first) {
      for (int j = 0; j < n; ++j) c[j] = c[j] + alpha * a[j];
    } else if (beta != 0.0f) {
      for (int j = 0; j < n; ++j) c[j] = std::fma(beta, c[j], alpha * a[j]);
    } else {
      for (int j = 0; j < n; ++j) c[j] = alpha * a[j];
    }
    if (!st.last) continue;
    if (st.bias) {
      for (int j = 0; j < n; ++j) c[j] += st.bias[j];
    }
    switch (st.act) {
      case Activation::None:
        break;
      case Activation::Relu:
        for (int j = 0; j < n; ++j) c[j] = c[j] > 0.0f ? c[j] : 0.0f;
        break;
      case Activation::GeluTanh:
      case Activation::GeluErf: {
        const bool tanh_form = st.act == Activation::GeluTanh;
        for (int j = 0; j < n; j += simd::kLanes) {
          const simd::Mask m = simd::tail_mask(n - j);
          simd::store(c + j, simd::gelu(simd::load(c + j, m), tanh_form), m);
        }
        break;
      }
    }
  }
}

namespace {

constexpr int kMr = 4;
constexpr int kNr = 16;

void kernel_4x16(int kc, const float* pa, const float* pb, const TileStore& st) {
  alignas(64) float acc[kMr * kNr] = {};
  for (int k = 0; k < kc; ++k) {
    for (int r = 0; r < kMr; ++r) {
      const float a = pa[r];
      for (int c = 0; c < kNr; ++c) acc[r * kNr + c] = std::fma(a, pb[c], acc[r * kNr + c]);
    }
    pa += kMr;
    pb += kNr;
  }
  store_tile_generic(acc, kNr, st);
}

}  // namespace

KernelSpec portable_spec() {
  return {kMr, kNr, &kernel_4x16};
}

namespace {

constexpr int kCols = 4;    // dot products computed together (independent chains)
constexpr int kLanes = 16;  // partial sums per dot product

// out[c] = sum_k a[k * sa_k] * b[c][k] for c < cols: kCols dot products at once so the
// chains of different columns overlap. The summation order depends only on K.
// Columns beyond `cols` alias the last one and are discarded.
void dot_columns(const float* a, long sa_k, const float* const b[kCols], int K, float* out,
                 int cols) {
  if (sa_k == 1) {  // contiguous k: 16 lanes at a time, lane l takes the k with k % 16 == l
    simd::VF acc[kCols];
    for (int c = 0; c < kCols; ++c) acc[c] = simd::zero();
    for (int k = 0; k < K; k += kLanes) {
      const simd::Mask m = simd::tail_mask(K - k);
      const simd::VF av = simd::load(a + k, m);
      for (int c = 0; c < kCols; ++c) acc[c] = simd::fmadd(av, simd::load(b[c] + k, m), acc[c]);
    }
    for (int c = 0; c < cols; ++c) out[c] = simd::reduce_add(acc[c]);
    return;
  }
  // Strided k: the same lanes one k at a time (lane k % 16 accumulates by FMA), summed by
  // the same fixed tree, so both forms give the same bits.
  float part[kCols][kLanes] = {};
  for (int k = 0; k < K; ++k) {
    const float av = a[k * sa_k];
    for (int c = 0; c < kCols; ++c) {
      float& p = part[c][k % kLanes];
      p = std::fma(av, b[c][k], p);
    }
  }
  for (int c = 0; c < cols; ++c) out[c] = simd::reduce_add(simd::load(part[c]));
}

}  // namespace

// Row by row, in chunks of kChunk columns kept on the stack. With op(B) row-major the
// chunk is an axpy over k (vectorised over columns); with B stored N x K each element
// is a dot product over contiguous k, summed in kLanes fixed partial sums.
void gemm_small(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep) {
  constexpr int kChunk = 64;
  alignas(64) float acc[kChunk];
  const long sa_i = transA ? 1 : lda;  // stride of op(A) along i
  const long sa_k = transA ? lda : 1;  // stride of op(A) along k
  for (int i = 0; i < M; ++i) {
    const float* arow = A + i * sa_i;
    for (int j0 = 0; j0 < N; j0 += kChunk) {
      const int nb = std::min(kChunk, N - j0);
      if (!transB) {
        for (int j = 0; j < nb; ++j) acc[j] = 0.0f;
        for (int k = 0; k < K; ++k) {
          const float a = arow[k * sa_k];
          const float* b = B + static_cast<long>(k) * ldb + j0;
          for (int j = 0; j < nb; ++j) acc[j] = std::fma(a, b[j], acc[j]);
        }
      } else {
        for (int j = 0; j < nb; j += kCols) {
          const int cols = std::min(kCols, nb - j);
          const float* b[kCols];
          for (int c = 0; c < kCols; ++c) {
            b[c] = B + static_cast<long>(j0 + j + std::min(c, cols - 1)) * ldb;
          }
          dot_columns(arow, sa_k, b, K, acc + j, cols);
        }
      }
      const TileStore st{C + static_cast<long>(i) * ldc + j0, ldc,   1, nb, alpha, beta, true, true,
                         ep.bias ? ep.bias + j0 : nullptr,    ep.act};
      store_tile_generic(acc, kChunk, st);
    }
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail
