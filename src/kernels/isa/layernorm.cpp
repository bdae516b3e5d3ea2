// LayerNorm over the last axis, vectorised per row and parallel over rows.
// Backward: dx per row; dgamma / dbeta are reduced over rows in two fixed
// stages (rows within a fixed-size chunk, then chunks in order), so the sums
// are bit-identical at any thread count.
#include "isa.hpp"

#include "attnfc/kernels/layernorm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>

#include "parallel.hpp"
#include "simd_math.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

namespace {
using namespace simd;

constexpr int kRowChunk = 32;   // rows whose dgamma/dbeta partials are summed together
constexpr int kColBlock = 256;  // columns per work item of the chunk reduction

// Grow-only, cache-line aligned buffer owned by the calling thread: after the
// first call with the largest shape, backward allocates nothing.
struct PartialBuffer {
  std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};
  size_t capacity = 0;
  float* get(size_t n) {
    if (n > capacity) {
      const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      data.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data) throw std::bad_alloc();
      capacity = bytes / sizeof(float);
    }
    return data.get();
  }
};
thread_local PartialBuffer tls_partials;

// sum_c (x_c - mean)^2, two-pass for accuracy (no E[x^2] - mean^2 cancellation).
float sum_sq_dev(const float* x, int C, float mean) {
  const VF m = set1(mean);
  VF a0 = zero(), a1 = zero();
  int c = 0;
  for (; c + 2 * kLanes <= C; c += 2 * kLanes) {
    const VF d0 = sub(load(x + c), m), d1 = sub(load(x + c + kLanes), m);
    a0 = fmadd(d0, d0, a0);
    a1 = fmadd(d1, d1, a1);
  }
  for (; c < C; c += kLanes) {
    const VF d = sub(load(x + c, tail_mask(C - c), mean), m);  // 0 outside the row
    a0 = fmadd(d, d, a0);
  }
  return reduce_add(add(a0, a1));
}

// One row of the backward: dx += rstd * (g - mean(g) - xhat * mean(g * xhat)),
// g = dy * gamma; optionally adds dy * xhat and dy into the chunk partials.
void backward_row(const float* dy, const float* x, const float* gamma, float mean, float rstd,
                  float* dx, float* pg, float* pb, int C) {
  const VF vm = set1(mean), vs = set1(rstd);
  VF sg = zero(), sgx = zero();
  for (int c = 0; c < C; c += kLanes) {
    const Mask t = tail_mask(C - c);
    const VF xhat = mul(sub(load(x + c, t, mean), vm), vs);
    const VF d = load(dy + c, t);
    const VF g = mul(d, load(gamma + c, t));
    sg = add(sg, g);
    sgx = fmadd(g, xhat, sgx);
    if (pg) store(pg + c, fmadd(d, xhat, load(pg + c, t)), t);
    if (pb) store(pb + c, add(d, load(pb + c, t)), t);
  }
  const float invC = 1.0f / static_cast<float>(C);
  const VF mg = set1(reduce_add(sg) * invC), mgx = set1(reduce_add(sgx) * invC);
  for (int c = 0; c < C; c += kLanes) {
    const Mask t = tail_mask(C - c);
    const VF xhat = mul(sub(load(x + c, t, mean), vm), vs);
    const VF g = mul(load(dy + c, t), load(gamma + c, t));
    const VF inner = fnmadd(xhat, mgx, sub(g, mg));
    store(dx + c, fmadd(vs, inner, load(dx + c, t)), t);
  }
}
}  // namespace

// x, y: [rows, C]; mean, rstd: [rows]
void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* rstd, int rows, int C, float eps) {
  if (rows <= 0 || C <= 0) return;
  detail::parallel_for(rows, 6 * static_cast<int64_t>(C), [&](int64_t r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    const float m = simd::sum(xr, C) / static_cast<float>(C);
    const float var = sum_sq_dev(xr, C, m) / static_cast<float>(C);
    const float s = 1.0f / std::sqrt(var + eps);
    const VF vm = set1(m), vs = set1(s);
    for (int c = 0; c < C; c += kLanes) {
      const Mask t = tail_mask(C - c);
      const VF xhat = mul(sub(load(xr + c, t), vm), vs);
      const VF b = beta ? load(beta + c, t) : zero();
      store(yr + c, fmadd(xhat, load(gamma + c, t), b), t);
    }
    mean[r] = m;
    rstd[r] = s;
  });
}

// dy, x, dx: [rows, C]; dgamma, dbeta: [C] (accumulated, may be null)
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int rows,
                        int C) {
  if (rows <= 0 || C <= 0) return;
  const int chunks = (rows + kRowChunk - 1) / kRowChunk;
  // partials: [chunks][2][C] -> (dgamma, dbeta) of each row chunk.
  const bool want_params = dgamma || dbeta;
  float* partials = want_params ? tls_partials.get(static_cast<size_t>(chunks) * 2 * C) : nullptr;
  const int col_blocks = (C + kColBlock - 1) / kColBlock;
  const int threads = detail::threads_for(chunks, 12LL * kRowChunk * C);
#pragma omp parallel num_threads(threads)
  {
    enable_flush_to_zero();
#pragma omp for schedule(static)
    for (int k = 0; k < chunks; ++k) {
      float* pg = dgamma ? partials + static_cast<size_t>(k) * 2 * C : nullptr;
      float* pb = dbeta ? partials + (static_cast<size_t>(k) * 2 + 1) * C : nullptr;
      if (pg) std::fill(pg, pg + C, 0.0f);
      if (pb) std::fill(pb, pb + C, 0.0f);
      const int r1 = std::min(rows, (k + 1) * kRowChunk);
      for (int r = k * kRowChunk; r < r1; ++r) {
        const int64_t o = static_cast<int64_t>(r) * C;
        backward_row(dy + o, x + o, gamma, mean[r], rstd[r], dx + o, pg, pb, C);
      }
    }
    // (implicit barrier) reduce the chunk partials in chunk order.
    if (want_params) {
#pragma omp for schedule(static)
      for (int cb = 0; cb < col_blocks; ++cb) {
        const int c0 = cb * kColBlock, c1 = std::min(C, c0 + kColBlock);
        for (int c = c0; c < c1; c += kLanes) {
          const Mask t = tail_mask(c1 - c);
          VF g = zero(), b = zero();
          for (int k = 0; k < chunks; ++k) {
            const float* pk = partials + static_cast<size_t>(k) * 2 * C;
            if (dgamma) g = add(g, load(pk + c, t));
            if (dbeta) b = add(b, load(pk + C + c, t));
          }
          if (dgamma) store(dgamma + c, add(load(dgamma + c, t), g), t);
          if (dbeta) store(dbeta + c, add(load(dbeta + c, t), b), t);
        }
      }
    }
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA
