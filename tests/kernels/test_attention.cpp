#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnfc/kernels/attention.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc;
using namespace attnfc::kernels;
using attnfc::test::ThreadCount;

namespace {

enum class Pad { None, Random, AllOfBatch1, FirstKeys };
enum class Layout { Contiguous, Packed, Gapped };

struct Case {
  int B, H, Lq, Lk, D;
  bool causal;
  Pad pad;
  Layout layout;
};

std::string describe(const Case& c) {
  return "B" + std::to_string(c.B) + " H" + std::to_string(c.H) + " Lq" + std::to_string(c.Lq) +
         " Lk" + std::to_string(c.Lk) + " D" + std::to_string(c.D) + (c.causal ? " causal" : "") +
         " pad" + std::to_string(static_cast<int>(c.pad)) + " layout" +
         std::to_string(static_cast<int>(c.layout));
}

// Buffers and layouts of one case. With Layout::Packed, Q/K/V share one
// [B, L, 3, H, D] buffer (self-attention) or Q is [B, Lq, H, D] and K/V share a
// [B, Lk, 2, H, D] buffer; O is [B, Lq, H, D]. With Layout::Gapped every row has
// unused floats after it, which must never be written.
struct Problem {
  AttnParams p;
  std::vector<uint8_t> pad;
  std::vector<float> qbuf, kvbuf;  // kvbuf also holds Q when packed self-attention
  size_t q_off = 0, k_off = 0, v_off = 0;
  size_t o_size = 0;
  std::vector<float> dO;  // same layout as O
  float* Q() { return (p.Lq == p.Lk && !qbuf.size() ? kvbuf.data() : qbuf.data()) + q_off; }
  float* K() { return kvbuf.data() + k_off; }
  float* V() { return kvbuf.data() + v_off; }
};

size_t extent(const AttnLayout& l, int B, int H, int L, int D) {
  return static_cast<size_t>((B - 1) * l.batch_stride + (H - 1) * l.head_stride +
                             std::max(L - 1, 0) * l.row_stride + D);
}

Problem make_problem(const Case& c, uint32_t seed) {
  Problem pr;
  AttnParams& p = pr.p;
  p.batch = c.B, p.heads = c.H, p.Lq = c.Lq, p.Lk = c.Lk, p.head_dim = c.D;
  p.scale = 1.0f / std::sqrt(static_cast<float>(c.D));
  p.causal = c.causal;
  const int HD = c.H * c.D;
  const bool self = c.Lq == c.Lk;
  if (c.layout == Layout::Contiguous) {
    p.q = p.o = contiguous_layout(c.H, c.Lq, c.D);
    p.k = p.v = contiguous_layout(c.H, c.Lk, c.D);
    pr.qbuf = test::randn(extent(p.q, c.B, c.H, c.Lq, c.D), seed);
    pr.kvbuf = test::randn(2 * extent(p.k, c.B, c.H, c.Lk, c.D), seed + 1);
    pr.v_off = pr.kvbuf.size() / 2;
  } else {
    const int gap = c.layout == Layout::Gapped ? 5 : 0;
    const int parts = self ? 3 : 2;
    const AttnLayout kv{static_cast<int64_t>(c.Lk) * (parts * HD + gap), c.D, parts * HD + gap};
    p.k = p.v = kv;
    pr.kvbuf = test::randn(static_cast<size_t>(c.B) * kv.batch_stride, seed + 1);
    if (self) {
      p.q = kv;
      pr.q_off = 0, pr.k_off = HD, pr.v_off = 2 * HD;
    } else {
      p.q = AttnLayout{static_cast<int64_t>(c.Lq) * (HD + gap), c.D, HD + gap};
      pr.qbuf = test::randn(static_cast<size_t>(c.B) * p.q.batch_stride, seed);
      pr.k_off = 0, pr.v_off = HD;
    }
    p.o = AttnLayout{static_cast<int64_t>(c.Lq) * (HD + gap), c.D, HD + gap};
  }
  pr.o_size = std::max<size_t>(extent(p.o, c.B, c.H, c.Lq, c.D), 1);
  pr.dO = test::randn(pr.o_size, seed + 2);
  if (c.pad != Pad::None) {
    pr.pad = test::random_mask(static_cast<size_t>(c.B) * c.Lk, seed + 3,
                               c.pad == Pad::Random ? 0.3 : 0.0);
    if (c.pad == Pad::AllOfBatch1 && c.B > 1)
      std::fill(pr.pad.begin() + c.Lk, pr.pad.begin() + 2 * c.Lk, 1);
    if (c.pad == Pad::FirstKeys)
      for (int b = 0; b < c.B; ++b)
        for (int j = 0; j < std::min(c.Lk, 3 + b); ++j) pr.pad[b * c.Lk + j] = 1;
    p.key_padding = pr.pad.data();
  }
  return pr;
}

struct Outputs {
  std::vector<float> O, lse, dQ, dKV, dQself;
};

// Runs forward + backward (fast or reference). Gradient buffers start from a
// fixed non-zero fill so that accumulation (+=) and untouched gaps are checked.
Outputs run_attention(Problem& pr, bool fast) {
  const AttnParams& p = pr.p;
  Outputs out;
  out.O.assign(pr.o_size, 7.0f);
  out.lse.assign(std::max<size_t>(static_cast<size_t>(p.batch) * p.heads * p.Lq, 1), 7.0f);
  const bool packed_self = pr.qbuf.empty();
  out.dKV = test::randn(pr.kvbuf.size(), 77);
  if (!packed_self) out.dQ = test::randn(pr.qbuf.size(), 78);
  float* dQ = (packed_self ? out.dKV.data() : out.dQ.data()) + pr.q_off;
  float* dK = out.dKV.data() + pr.k_off;
  float* dV = out.dKV.data() + pr.v_off;
  if (fast) {
    attention_forward(p, pr.Q(), pr.K(), pr.V(), out.O.data(), out.lse.data());
    attention_backward(p, pr.Q(), pr.K(), pr.V(), out.O.data(), out.lse.data(), pr.dO.data(), dQ,
                       dK, dV);
  } else {
    attention_forward_reference(p, pr.Q(), pr.K(), pr.V(), out.O.data(), out.lse.data());
    attention_backward_reference(p, pr.Q(), pr.K(), pr.V(), out.O.data(), out.lse.data(),
                                 pr.dO.data(), dQ, dK, dV);
  }
  return out;
}

const Case kCases[] = {
    {1, 1, 1, 1, 1, false, Pad::None, Layout::Contiguous},
    {1, 1, 1, 1, 64, true, Pad::None, Layout::Contiguous},
    {1, 1, 7, 7, 7, true, Pad::None, Layout::Contiguous},
    {2, 2, 33, 33, 64, true, Pad::Random, Layout::Contiguous},
    {1, 2, 129, 129, 65, false, Pad::Random, Layout::Contiguous},
    {1, 1, 257, 257, 64, true, Pad::None, Layout::Contiguous},
    {1, 1, 257, 257, 1, false, Pad::None, Layout::Contiguous},
    {1, 1, 65, 129, 256, true, Pad::None, Layout::Contiguous},
    {2, 1, 33, 129, 7, false, Pad::Random, Layout::Contiguous},
    {1, 1, 129, 33, 256, true, Pad::None, Layout::Contiguous},
    {2, 1, 129, 7, 33, false, Pad::AllOfBatch1, Layout::Contiguous},
    {2, 2, 70, 70, 16, true, Pad::FirstKeys, Layout::Contiguous},
    {2, 3, 65, 65, 16, true, Pad::Random, Layout::Packed},
    {2, 2, 40, 97, 32, false, Pad::Random, Layout::Gapped},
    {1, 2, 130, 130, 7, true, Pad::FirstKeys, Layout::Gapped},
    {2, 1, 5, 0, 8, false, Pad::None, Layout::Contiguous},
    {1, 2, 64, 64, 32, true, Pad::None, Layout::Contiguous},      // exactly one tile
    {1, 1, 128, 128, 16, true, Pad::Random, Layout::Contiguous},  // exact tile boundaries
};

}  // namespace

TEST_CASE("fused attention matches the materialising reference; 1 and 2 threads agree") {
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    CAPTURE(describe(c));
    Problem pr = make_problem(c, seed += 10);
    const Outputs want = run_attention(pr, false);
    Outputs got[2];
    for (int t = 0; t < 2; ++t) {
      ThreadCount tc(t + 1);
      got[t] = run_attention(pr, true);
    }
    const Outputs& g = got[0];
    test::all_close(g.O, want.O, 2e-6, 2e-5, "O");
    test::all_close(g.lse, want.lse, 2e-6, 2e-6, "lse");
    test::all_close(g.dQ, want.dQ, 2e-5, 2e-4, "dQ");
    test::all_close(g.dKV, want.dKV, 2e-5, 2e-4, "dQKV / dKV");
    CHECK(test::bit_equal(got[0].O, got[1].O));
    CHECK(test::bit_equal(got[0].lse, got[1].lse));
    CHECK(test::bit_equal(got[0].dQ, got[1].dQ));
    CHECK(test::bit_equal(got[0].dKV, got[1].dKV));
    // Rows without a visible key: O = 0 and lse = -inf exactly.
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < c.H; ++h)
        for (int i = 0; i < c.Lq; ++i) {
          const size_t r = (static_cast<size_t>(b) * c.H + h) * c.Lq + i;
          if (std::isinf(want.lse[r])) {
            REQUIRE(g.lse[r] == -INFINITY);
            const float* o = g.O.data() + b * pr.p.o.batch_stride + h * pr.p.o.head_stride +
                             i * pr.p.o.row_stride;
            for (int d = 0; d < c.D; ++d) REQUIRE(o[d] == 0.0f);
          }
        }
  }
}

TEST_CASE("fully masked rows give zero gradients, never NaN") {
  Case c{2, 1, 9, 9, 8, true, Pad::FirstKeys, Layout::Contiguous};
  Problem pr = make_problem(c, 5);
  std::fill(pr.pad.begin() + c.Lk, pr.pad.end(), 1);  // batch 1: every key padded
  const AttnParams& p = pr.p;
  std::vector<float> O(pr.o_size), lse(c.B * c.Lq);
  std::vector<float> dQ(pr.qbuf.size(), 0.0f), dKV(pr.kvbuf.size(), 0.0f);
  attention_forward(p, pr.Q(), pr.K(), pr.V(), O.data(), lse.data());
  attention_backward(p, pr.Q(), pr.K(), pr.V(), O.data(), lse.data(), pr.dO.data(), dQ.data(),
                     dKV.data(), dKV.data() + pr.v_off);
  for (float v : O) REQUIRE(std::isfinite(v));
  for (float v : dQ) REQUIRE(std::isfinite(v));
  for (float v : dKV) REQUIRE(std::isfinite(v));
  const int per_batch = c.Lq * c.D;
  for (int i = per_batch; i < 2 * per_batch; ++i) CHECK(dQ[i] == 0.0f);  // batch 1
  for (int i = 0; i < 3 * c.D; ++i) CHECK(dQ[i] == 0.0f);  // batch 0: queries 0..2 see nothing
  for (int i = 0; i < c.Lq; ++i) CHECK((i < 3 ? std::isinf(lse[i]) : std::isfinite(lse[i])));
}

TEST_CASE("attention rejects head widths outside 1..256") {
  Case c{1, 1, 4, 4, 8, false, Pad::None, Layout::Contiguous};
  Problem pr = make_problem(c, 9);
  std::vector<float> O(pr.o_size), lse(4);
  pr.p.head_dim = 257;
  CHECK_THROWS_AS(attention_forward(pr.p, pr.Q(), pr.K(), pr.V(), O.data(), lse.data()),
                  std::invalid_argument);
  pr.p.head_dim = 0;
  CHECK_THROWS_AS(attention_forward(pr.p, pr.Q(), pr.K(), pr.V(), O.data(), lse.data()),
                  std::invalid_argument);
}

namespace {
// Largest |central difference - analytic| / (1 + |central difference|) of
// loss = sum(W o O) with respect to every element of Q, K and V, all in double.
// `analytic` comes from attention_backward_reference(p_backward, ...).
double reference_gradient_error(const AttnParams& p, const AttnParams& p_backward) {
  const int D = p.head_dim;
  const size_t nq = static_cast<size_t>(p.batch) * p.heads * p.Lq * D;
  const size_t nk = static_cast<size_t>(p.batch) * p.heads * p.Lk * D;
  std::vector<double> Q(nq), K(nk), V(nk), W(nq), O(nq), lse(nq / D);
  const auto rq = test::randn(nq, 1), rk = test::randn(nk, 2), rv = test::randn(nk, 3),
             rw = test::randn(nq, 4);
  std::copy(rq.begin(), rq.end(), Q.begin());
  std::copy(rk.begin(), rk.end(), K.begin());
  std::copy(rv.begin(), rv.end(), V.begin());
  std::copy(rw.begin(), rw.end(), W.begin());
  std::vector<double> dQ(nq, 0.0), dK(nk, 0.0), dV(nk, 0.0);
  attention_backward_reference(p_backward, Q.data(), K.data(), V.data(), W.data(), dQ.data(),
                               dK.data(), dV.data());
  auto loss = [&] {
    attention_forward_reference(p, Q.data(), K.data(), V.data(), O.data(), lse.data());
    double s = 0.0;
    for (size_t i = 0; i < nq; ++i) s += W[i] * O[i];
    return s;
  };
  double worst = 0.0;
  const double h = 1e-6;
  for (auto [x, g] : {std::pair{&Q, &dQ}, std::pair{&K, &dK}, std::pair{&V, &dV}}) {
    for (size_t i = 0; i < x->size(); ++i) {
      const double x0 = (*x)[i];
      (*x)[i] = x0 + h;
      const double up = loss();
      (*x)[i] = x0 - h;
      const double down = loss();
      (*x)[i] = x0;
      const double numeric = (up - down) / (2 * h);
      worst = std::max(worst, std::fabs(numeric - (*g)[i]) / (1.0 + std::fabs(numeric)));
    }
  }
  return worst;
}

AttnParams small_params(int Lq, int Lk, bool causal, const uint8_t* pad) {
  AttnParams p;
  p.batch = 2, p.heads = 2, p.Lq = Lq, p.Lk = Lk, p.head_dim = 3;
  p.scale = 0.7f;
  p.causal = causal;
  p.key_padding = pad;
  p.q = p.o = contiguous_layout(p.heads, Lq, p.head_dim);
  p.k = p.v = contiguous_layout(p.heads, Lk, p.head_dim);
  return p;
}
}  // namespace

TEST_CASE("the reference attention backward agrees with central differences in double") {
  // batch 0: key 0 padded, so causal query 0 sees nothing; batch 1: key 4 padded.
  const std::vector<uint8_t> pad = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
  for (bool causal : {false, true}) {
    for (auto [Lq, Lk] : {std::pair{5, 6}, std::pair{6, 6}, std::pair{4, 1}}) {
      CAPTURE(causal);
      CAPTURE(Lq);
      CAPTURE(Lk);
      const uint8_t* padp = Lk == 6 ? pad.data() : nullptr;
      const AttnParams p = small_params(Lq, Lk, causal, padp);
      CHECK(reference_gradient_error(p, p) < 1e-7);
    }
  }
  // The check has teeth: a backward with the wrong scale or a forgotten mask fails it.
  AttnParams p = small_params(5, 6, true, pad.data());
  AttnParams wrong_scale = p;
  wrong_scale.scale *= 1.01f;
  CHECK(reference_gradient_error(p, wrong_scale) > 1e-4);
  AttnParams no_causal = p;
  no_causal.causal = false;
  CHECK(reference_gradient_error(p, no_causal) > 1e-2);
  AttnParams no_padding = p;
  no_padding.key_padding = nullptr;
  CHECK(reference_gradient_error(p, no_padding) > 1e-2);
}
