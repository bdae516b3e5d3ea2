// Portable pieces of the GEMM: the scalar tile epilogue shared by the AVX2 and portable
// kernels, a plain-C++ 4 x 16 micro-kernel that the compiler vectorises, and the
// unpacked path for tiny products where packing would cost more than it saves (same bits
// as the packed path).
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

constexpr int kChunk = 64;  // columns of C kept on the stack at a time
constexpr int kChains = 8;  // dot products computed together: 8 chains cover FMA latency

// acc[j] = sum over k in [k0, k0 + kc) of op(A)[i, k] * B[j0 + j][k] (B stored N x K),
// each as one FMA chain in increasing k: the packed micro-kernels' order.
void dots_nt(const float* arow, long sa_k, const float* B, int ldb, int j0, int nb, int k0, int kc,
             float* acc) {
  for (int j = 0; j < nb; j += kChains) {
    const int cols = std::min(kChains, nb - j);
    float part[kChains] = {};
    const float* b[kChains];
    for (int c = 0; c < kChains; ++c)  // columns beyond `cols` alias the last one
      b[c] = B + static_cast<long>(j0 + j + std::min(c, cols - 1)) * ldb;
    for (int k = k0; k < k0 + kc; ++k) {
      const float a = arow[k * sa_k];
      for (int c = 0; c < kChains; ++c) part[c] = std::fma(a, b[c][k], part[c]);
    }
    for (int c = 0; c < cols; ++c) acc[j + c] = part[c];
  }
}

// The same sums with op(B) row-major: an axpy per k, vectorised over the columns.
void dots_nn(const float* arow, long sa_k, const float* B, int ldb, int j0, int nb, int k0, int kc,
             float* acc) {
  for (int j = 0; j < nb; ++j) acc[j] = 0.0f;
  for (int k = k0; k < k0 + kc; ++k) {
    const float a = arow[k * sa_k];
    const float* b = B + static_cast<long>(k) * ldb + j0;
    for (int j = 0; j < nb; ++j) acc[j] = std::fma(a, b[j], acc[j]);
  }
}

}  // namespace

// Row by row, in chunks of kChunk columns kept on the stack. The arithmetic is the
// packed path's, element for element: K cut into the same blocks (kKc, split_point),
// one FMA chain per element and block in increasing k, and the same epilogue
// (store_tile_generic). So a row of C has the same bits whichever path computed it,
// and a forecast does not depend on how many windows share its batch (M picks the path).
void gemm_small(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep) {
  alignas(64) float acc[kChunk];
  const long sa_i = transA ? 1 : lda;  // stride of op(A) along i
  const long sa_k = transA ? lda : 1;  // stride of op(A) along k
  const int nkb = std::max(1, (K + kKc - 1) / kKc);
  for (int i = 0; i < M; ++i) {
    const float* arow = A + i * sa_i;
    for (int j0 = 0; j0 < N; j0 += kChunk) {
      const int nb = std::min(kChunk, N - j0);
      for (int kb = 0; kb < nkb; ++kb) {
        const int k0 = static_cast<int>(static_cast<long>(K) * kb / nkb);
        const int kc = static_cast<int>(static_cast<long>(K) * (kb + 1) / nkb) - k0;
        if (transB) {
          dots_nt(arow, sa_k, B, ldb, j0, nb, k0, kc, acc);
        } else {
          dots_nn(arow, sa_k, B, ldb, j0, nb, k0, kc, acc);
        }
        const bool last = kb == nkb - 1;
        const TileStore st{
            C + static_cast<long>(i) * ldc + j0,      ldc,   1, nb, alpha, beta, kb == 0, last,
            last && ep.bias ? ep.bias + j0 : nullptr, ep.act};
        store_tile_generic(acc, kChunk, st);
      }
    }
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail
