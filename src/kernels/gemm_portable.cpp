// Portable pieces of the GEMM: the scalar tile epilogue shared by the AVX2 and portable
// kernels, a plain-C++ 4 x 16 micro-kernel that the compiler vectorises, and the
// unpacked path for tiny products where packing would cost more than it saves.
#include <algorithm>

#include "gemm_internal.hpp"

namespace attnfc::kernels::gemm_detail {

void store_tile_generic(const float* acc, int ld, const TileStore& st) {
  for (int r = 0; r < st.rows; ++r) {
    float* c = st.C + static_cast<long>(r) * st.ldc;
    const float* a = acc + static_cast<long>(r) * ld;
    for (int j = 0; j < st.cols; ++j) {
      float v = st.alpha * a[j];
      if (st.first) {
        if (st.beta != 0.0f) v += st.beta * c[j];
      } else {
        v = c[j] + v;
      }
      if (st.last) {
        if (st.bias) v += st.bias[j];
        v = apply_activation(st.act, v);
      }
      c[j] = v;
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
      for (int c = 0; c < kNr; ++c) acc[r * kNr + c] += a * pb[c];
    }
    pa += kMr;
    pb += kNr;
  }
  store_tile_generic(acc, kNr, st);
}

}  // namespace

KernelSpec portable_spec() { return {kMr, kNr, &kernel_4x16}; }

// Row by row, in chunks of kChunk columns kept on the stack. With op(B) row-major the
// chunk is an axpy over k (vectorised over columns); with B stored N x K each element
// is a dot product over contiguous k, summed in kLanes fixed partial sums.
void gemm_small(bool transA, bool transB, int M, int N, int K, float alpha, const float* A,
                int lda, const float* B, int ldb, float beta, float* C, int ldc,
                const Epilogue& ep) {
  constexpr int kChunk = 64;
  constexpr int kLanes = 8;
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
          for (int j = 0; j < nb; ++j) acc[j] += a * b[j];
        }
      } else {
        for (int j = 0; j < nb; ++j) {
          const float* b = B + static_cast<long>(j0 + j) * ldb;
          float part[kLanes] = {};
          int k = 0;
          for (; k + kLanes <= K; k += kLanes) {
            for (int l = 0; l < kLanes; ++l) part[l] += arow[(k + l) * sa_k] * b[k + l];
          }
          for (; k < K; ++k) part[k % kLanes] += arow[k * sa_k] * b[k];
          float s = 0.0f;
          for (int l = 0; l < kLanes; ++l) s += part[l];
          acc[j] = s;
        }
      }
      const TileStore st{C + static_cast<long>(i) * ldc + j0, ldc, 1, nb, alpha, beta, true,
                         true, ep.bias ? ep.bias + j0 : nullptr, ep.act};
      store_tile_generic(acc, kChunk, st);
    }
  }
}

}  // namespace attnfc::kernels::gemm_detail
