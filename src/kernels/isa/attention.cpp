// Fused attention forward, FlashAttention-2 style. Work item = (batch, head,
// tile of kBr queries); for each tile of kBc keys:
//   S = Q_t K_t^T (register-blocked tile product), scale + mask,
//   online softmax: m' = max(m, rowmax S), P = exp(S - m'), l = l e^{m - m'} + rowsum P,
//   O_acc = O_acc e^{m - m'} + P V_t.
// Only O and lse = m + log l are written; the state per work item is
// O(kBr * D + D * kBc), independent of L. Causal key tiles above the diagonal
// are never visited. Each output row is produced by exactly one work item in a
// fixed order, so results are bit-identical at any thread count.
#include "isa.hpp"

#include <algorithm>
#include <cmath>

#include "attention_common.hpp"
#include "attention_tile.hpp"
#include "attnfc/kernels/attention.hpp"
#include "parallel.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

namespace {
using namespace simd;
using namespace detail;

struct ForwardScratch {
  float* S;     // [kBr, kBc] scores, then probabilities
  float* Oacc;  // [kBr, Dp]  unnormalised output
  float* Kt;    // [D, kBc]   key tile, transposed
  float* m;     // [kBr]      running row max
  float* l;     // [kBr]      running row sum
  static constexpr size_t floats(int Dp) { return kBr * kBc + kBr * Dp + Dp * kBc + 2 * kBr; }
  ForwardScratch(float* base, int Dp)
      : S(base), Oacc(S + kBr * kBc), Kt(Oacc + kBr * Dp), m(Kt + Dp * kBc), l(m + kBr) {}
};

static_assert(ForwardScratch::floats(kMaxDp) <= kScratchFloats);

// Online-softmax update of one query row for one key tile. Returns the factor
// by which the row's O accumulator must be rescaled.
float softmax_update_row(float* row, int kc, int visible, const uint8_t* pad, float scale, float* m,
                         float* l) {
  const VF vs = set1(scale);
  VF mx = set1(-kInf);
  for (int j = 0; j < kc; j += kLanes) {
    const VF s = select(visible_lanes(pad, j, visible), mul(load(row + j), vs), set1(-kInf));
    store(row + j, s);
    mx = max(mx, s);
  }
  const float m_new = std::max(*m, reduce_max(mx));
  if (!(m_new > -kInf)) {  // nothing visible so far: keep O = 0, l = 0
    for (int j = 0; j < kc; j += kLanes) store(row + j, zero());
    return 1.0f;
  }
  const float alpha = *m > -kInf ? std::exp(*m - m_new) : 0.0f;
  const VF vm = set1(m_new);
  VF sum = zero();
  for (int j = 0; j < kc; j += kLanes) {
    const VF p = j < visible ? exp(sub(load(row + j), vm)) : zero();  // masked: exp(-inf) = 0
    store(row + j, p);
    sum = add(sum, p);
  }
  *l = *l * alpha + reduce_add(sum);
  *m = m_new;
  return alpha;
}

void forward_tile(const AttnParams& p, const float* Q, const float* K, const float* V, float* O,
                  float* lse, int b, int h, int i0, ForwardScratch& w) {
  const int D = p.head_dim, Dp = padded_dim(D);
  const int qc = std::min(kBr, p.Lq - i0);
  const int kend = p.causal ? std::min(p.Lk, i0 + qc) : p.Lk;  // keys the last row can see
  const uint8_t* pad_b = p.key_padding ? p.key_padding + static_cast<int64_t>(b) * p.Lk : nullptr;
  const float* Qt = row_ptr(Q, p.q, b, h, i0);
  std::fill(w.m, w.m + qc, -kInf);
  std::fill(w.l, w.l + qc, 0.0f);
  std::fill(w.Oacc, w.Oacc + static_cast<size_t>(qc) * Dp, 0.0f);

  for (int j0 = 0; j0 < kend; j0 += kBc) {
    const int kc = std::min(kBc, kend - j0);
    const uint8_t* pad = pad_b ? pad_b + j0 : nullptr;
    pack_transposed(row_ptr(K, p.k, b, h, j0), p.k.row_stride, kc, D, w.Kt);
    scores_tile(p.causal, i0, j0, qc, kc, D, Qt, p.q.row_stride, w.Kt, w.S);
    for (int i = 0; i < qc; ++i) {
      const int visible = causal_visible(p.causal, i0 + i, j0, kc);
      const float alpha =
          softmax_update_row(w.S + i * kBc, kc, visible, pad, p.scale, &w.m[i], &w.l[i]);
      if (alpha != 1.0f) {
        float* o = w.Oacc + i * Dp;
        const VF va = set1(alpha);
        for (int d = 0; d < Dp; d += kLanes) store(o + d, mul(load(o + d), va));
      }
    }
    rows_times_keys(p.causal, i0, j0, qc, kc, D, w.S, row_ptr(V, p.v, b, h, j0), p.v.row_stride,
                    w.Oacc, Dp);
  }

  // lse = m + log l (l >= 1 wherever a key was visible), 16 rows at a time.
  float* lse_t = lse + (static_cast<int64_t>(b) * p.heads + h) * p.Lq + i0;
  for (int i = 0; i < qc; i += kLanes) {
    const Mask t = tail_mask(qc - i);
    const VF l = load(w.l + i, t, 1.0f);
    const VF lse_v = add(load(w.m + i, t), log(l));
    store(lse_t + i, select(less(zero(), l), lse_v, set1(-kInf)), t);
  }
  for (int i = 0; i < qc; ++i) {
    float* o = row_ptr(O, p.o, b, h, i0 + i);
    if (!(w.l[i] > 0.0f)) {  // no visible key: O = 0, lse = -inf
      std::fill(o, o + D, 0.0f);
      continue;
    }
    const VF inv = set1(1.0f / w.l[i]);
    const float* acc = w.Oacc + i * Dp;
    for (int d = 0; d < D; d += kLanes) {
      const Mask t = tail_mask(D - d);
      store(o + d, mul(load(acc + d, t), inv), t);
    }
  }
}
}  // namespace

void attention_forward(const AttnParams& p, const float* Q, const float* K, const float* V,
                       float* O, float* lse) {
  check_attention_params(p, "attention_forward");
  if (p.batch == 0 || p.heads == 0 || p.Lq == 0) return;
  const int q_tiles = (p.Lq + kBr - 1) / kBr;
  const int64_t items = static_cast<int64_t>(p.batch) * p.heads * q_tiles;
  const int Dp = padded_dim(p.head_dim);
  const int64_t work = 4LL * kBr * std::max(1, p.Lk) * p.head_dim;
  // Causal tiles near the end of the sequence cost the most: hand them out first.
  parallel_for_dynamic(items, work, [&](int64_t item) {
    const int64_t rev = items - 1 - item;
    const int qt = static_cast<int>(rev % q_tiles);
    const int bh = static_cast<int>(rev / q_tiles);
    ForwardScratch w(tls_attention_scratch.floats(kScratchFloats), Dp);
    forward_tile(p, Q, K, V, O, lse, bh / p.heads, bh % p.heads, qt * kBr, w);
  });
}

}  // namespace attnfc::kernels::ATTNFC_ISA
