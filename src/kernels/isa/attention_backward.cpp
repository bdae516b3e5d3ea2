// Fused attention backward, FlashAttention-2 style but deterministic and
// atomic-free: P is recomputed tile by tile from the saved logsumexp, and
//   pass 1, work item (batch, head, key tile):   dV_t = sum_i P^T dO,  dK_t = sum_i dS^T Q
//   pass 2, work item (batch, head, query tile): dQ_t = sum_j dS K
// with dP = dO V^T, D_i = rowsum(dO o O), dS = P o (dP - D_i) * scale.
// Every output row belongs to one work item and is summed over the other
// axis's tiles in ascending order, so results do not depend on the thread count.
#include "isa.hpp"

#include <algorithm>

#include "attention_common.hpp"
#include "attention_tile.hpp"
#include "attnfc/kernels/attention.hpp"
#include "parallel.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

namespace {
using namespace simd;
using namespace detail;

struct BackwardScratch {
  float* P;     // [kBr, kBc]  probabilities
  float* dS;    // [kBr, kBc]  dP, then dS
  float* Kt;    // [D, kBc]
  float* Vt;    // [D, kBc]
  float* acc;   // [max(kBr, kBc), Dp]  dQ (pass 2) or dK (pass 1)
  float* acc2;  // [kBc, Dp]  dV (pass 1)
  float* acc3;  // [kBr, Dp]  dQ of the fused single-key-tile path
  float* Di;    // [kBr]
  float* lse;   // [kBr]
  static constexpr size_t floats(int Dp) {
    return 2 * kBr * kBc + 2 * Dp * kBc + 3 * std::max(kBr, kBc) * Dp + 2 * kBr;
  }
  BackwardScratch(float* base, int Dp)
      : P(base),
        dS(P + kBr * kBc),
        Kt(dS + kBr * kBc),
        Vt(Kt + Dp * kBc),
        acc(Vt + Dp * kBc),
        acc2(acc + std::max(kBr, kBc) * Dp),
        acc3(acc2 + std::max(kBr, kBc) * Dp),
        Di(acc3 + std::max(kBr, kBc) * Dp),
        lse(Di + kBr) {}
};

// D_i = <dO_i, O_i> and the saved lse for the query rows [i0, i0 + qc).
void load_row_stats(const AttnParams& p, const float* O, const float* lse, const float* dO, int b,
                    int h, int i0, int qc, BackwardScratch& w) {
  const int D = p.head_dim;
  const float* lse_t = lse + (static_cast<int64_t>(b) * p.heads + h) * p.Lq + i0;
  for (int i = 0; i < qc; ++i) {
    const float* o = row_ptr(O, p.o, b, h, i0 + i);
    const float* g = row_ptr(dO, p.o, b, h, i0 + i);
    VF acc = zero();
    for (int d = 0; d < D; d += kLanes) {
      const Mask t = tail_mask(D - d);
      acc = fmadd(load(o + d, t), load(g + d, t), acc);
    }
    w.Di[i] = reduce_add(acc);
    w.lse[i] = lse_t[i];
  }
}

// For the (query tile, key tile) pair: P (recomputed) and dS, from packed K^T / V^T.
void probs_and_dscores(const AttnParams& p, const float* Q, const float* dO, int b, int h, int i0,
                       int qc, int j0, int kc, BackwardScratch& w) {
  const int D = p.head_dim;
  const uint8_t* pad =
      p.key_padding ? p.key_padding + static_cast<int64_t>(b) * p.Lk + j0 : nullptr;
  scores_tile(p.causal, i0, j0, qc, kc, D, row_ptr(Q, p.q, b, h, i0), p.q.row_stride, w.Kt, w.P);
  recompute_probs(w.P, qc, kc, i0, j0, p.causal, pad, p.scale, w.lse);
  scores_tile(p.causal, i0, j0, qc, kc, D, row_ptr(dO, p.o, b, h, i0), p.o.row_stride, w.Vt, w.dS);
  const VF vs = set1(p.scale);
  for (int i = 0; i < qc; ++i) {
    const VF di = set1(w.Di[i]);
    float* ds = w.dS + i * kBc;
    const float* pr = w.P + i * kBc;
    // dP past a row's visible keys may be unwritten (see scores_tile): select, not multiply.
    const int visible = causal_visible(p.causal, i0 + i, j0, kc);
    for (int j = 0; j < kc; j += kLanes) {
      const VF g = mul(mul(load(pr + j), sub(load(ds + j), di)), vs);
      store(ds + j, select(tail_mask(visible - j), g, zero()));
    }
  }
}

// dst rows += acc rows ([rows, D] from a [rows, Dp] accumulator).
void add_rows(float* dst, int64_t row_stride, const float* acc, int rows, int D, int Dp) {
  for (int r = 0; r < rows; ++r) {
    float* o = dst + r * row_stride;
    const float* a = acc + r * Dp;
    for (int d = 0; d < D; d += kLanes) {
      const Mask t = tail_mask(D - d);
      store(o + d, add(load(o + d, t), load(a + d, t)), t);
    }
  }
}

// dK, dV of one key tile. With dQ given (the sequence fits in one key tile, so
// this item sees every key of each query), also produces dQ in the same sweep:
// the same operations, in the same order, as dq_tile would do for that tile.
void dkdv_tile(const AttnParams& p, const float* Q, const float* K, const float* V, const float* O,
               const float* lse, const float* dO, float* dK, float* dV, float* dQ, int b, int h,
               int j0, BackwardScratch& w) {
  const int D = p.head_dim, Dp = padded_dim(D);
  const int kc = std::min(kBc, p.Lk - j0);
  if (p.key_padding) {  // a fully padded key tile receives (and passes on) no gradient
    const uint8_t* pad = p.key_padding + static_cast<int64_t>(b) * p.Lk + j0;
    if (std::all_of(pad, pad + kc, [](uint8_t v) { return v != 0; })) return;
  }
  pack_transposed(row_ptr(K, p.k, b, h, j0), p.k.row_stride, kc, D, w.Kt);
  pack_transposed(row_ptr(V, p.v, b, h, j0), p.v.row_stride, kc, D, w.Vt);
  std::fill(w.acc, w.acc + static_cast<size_t>(kc) * Dp, 0.0f);
  std::fill(w.acc2, w.acc2 + static_cast<size_t>(kc) * Dp, 0.0f);
  // Causal: queries before j0 see none of these keys.
  const int i_begin = p.causal ? j0 / kBr * kBr : 0;
  for (int i0 = i_begin; i0 < p.Lq; i0 += kBr) {
    const int qc = std::min(kBr, p.Lq - i0);
    load_row_stats(p, O, lse, dO, b, h, i0, qc, w);
    probs_and_dscores(p, Q, dO, b, h, i0, qc, j0, kc, w);
    // dV_t += P^T dO_t ; dK_t += dS^T Q_t
    keys_times_rows(p.causal, i0, j0, qc, kc, D, w.P, row_ptr(dO, p.o, b, h, i0), p.o.row_stride,
                    w.acc2, Dp);
    keys_times_rows(p.causal, i0, j0, qc, kc, D, w.dS, row_ptr(Q, p.q, b, h, i0), p.q.row_stride,
                    w.acc, Dp);
    if (dQ) {
      std::fill(w.acc3, w.acc3 + static_cast<size_t>(qc) * Dp, 0.0f);
      rows_times_keys(p.causal, i0, j0, qc, kc, D, w.dS, row_ptr(K, p.k, b, h, j0), p.k.row_stride,
                      w.acc3, Dp);
      add_rows(row_ptr(dQ, p.q, b, h, i0), p.q.row_stride, w.acc3, qc, D, Dp);
    }
  }
  add_rows(row_ptr(dK, p.k, b, h, j0), p.k.row_stride, w.acc, kc, D, Dp);
  add_rows(row_ptr(dV, p.v, b, h, j0), p.v.row_stride, w.acc2, kc, D, Dp);
}

void dq_tile(const AttnParams& p, const float* Q, const float* K, const float* V, const float* O,
             const float* lse, const float* dO, float* dQ, int b, int h, int i0,
             BackwardScratch& w) {
  const int D = p.head_dim, Dp = padded_dim(D);
  const int qc = std::min(kBr, p.Lq - i0);
  const int kend = p.causal ? std::min(p.Lk, i0 + qc) : p.Lk;
  load_row_stats(p, O, lse, dO, b, h, i0, qc, w);
  std::fill(w.acc, w.acc + static_cast<size_t>(qc) * Dp, 0.0f);
  for (int j0 = 0; j0 < kend; j0 += kBc) {
    const int kc = std::min(kBc, kend - j0);
    pack_transposed(row_ptr(K, p.k, b, h, j0), p.k.row_stride, kc, D, w.Kt);
    pack_transposed(row_ptr(V, p.v, b, h, j0), p.v.row_stride, kc, D, w.Vt);
    probs_and_dscores(p, Q, dO, b, h, i0, qc, j0, kc, w);
    rows_times_keys(p.causal, i0, j0, qc, kc, D, w.dS, row_ptr(K, p.k, b, h, j0), p.k.row_stride,
                    w.acc, Dp);
  }
  add_rows(row_ptr(dQ, p.q, b, h, i0), p.q.row_stride, w.acc, qc, D, Dp);
}
}  // namespace

void attention_backward(const AttnParams& p, const float* Q, const float* K, const float* V,
                        const float* O, const float* lse, const float* dO, float* dQ, float* dK,
                        float* dV) {
  check_attention_params(p, "attention_backward");
  if (p.batch == 0 || p.heads == 0 || p.Lq == 0 || p.Lk == 0) return;
  const int Dp = padded_dim(p.head_dim);
  const int64_t bh = static_cast<int64_t>(p.batch) * p.heads;
  const int q_tiles = (p.Lq + kBr - 1) / kBr, k_tiles = (p.Lk + kBc - 1) / kBc;
  constexpr size_t scratch = kScratchFloats;
  static_assert(BackwardScratch::floats(kMaxDp) <= kScratchFloats);

  // Short key sequences (one key tile, as in the model's patch attention): a
  // single sweep per (batch, head) gives dQ, dK and dV without recomputing P.
  if (k_tiles == 1) {
    parallel_for_dynamic(bh, 10LL * kBc * p.Lq * p.head_dim, [&](int64_t g) {
      BackwardScratch w(tls_attention_scratch.floats(scratch), Dp);
      dkdv_tile(p, Q, K, V, O, lse, dO, dK, dV, dQ, static_cast<int>(g / p.heads),
                static_cast<int>(g % p.heads), 0, w);
    });
    return;
  }
  // Pass 1: dK, dV. With causal masking, the first key tiles see the most queries.
  parallel_for_dynamic(bh * k_tiles, 8LL * kBc * p.Lq * p.head_dim, [&](int64_t item) {
    BackwardScratch w(tls_attention_scratch.floats(scratch), Dp);
    const int kt = static_cast<int>(item % k_tiles), g = static_cast<int>(item / k_tiles);
    dkdv_tile(p, Q, K, V, O, lse, dO, dK, dV, nullptr, g / p.heads, g % p.heads, kt * kBc, w);
  });
  // Pass 2: dQ. With causal masking, the last query tiles see the most keys.
  parallel_for_dynamic(bh * q_tiles, 8LL * kBr * p.Lk * p.head_dim, [&](int64_t item) {
    BackwardScratch w(tls_attention_scratch.floats(scratch), Dp);
    const int64_t rev = bh * q_tiles - 1 - item;
    const int qt = static_cast<int>(rev % q_tiles), g = static_cast<int>(rev / q_tiles);
    dq_tile(p, Q, K, V, O, lse, dO, dQ, g / p.heads, g % p.heads, qt * kBr, w);
  });
}

}  // namespace attnfc::kernels::ATTNFC_ISA
