// Fused ops that exist to save memory: feed_forward (two linears around a GELU, keeping
// only the pre-activation), add_dropout (residual + dropout, not storing the branch), and
// linear / feed_forward with a PreNorm (LayerNorm recomputed in the backward) and a
// ResidualDropout (written over the op's output). Each is checked by central differences,
// shown to give exactly the bits of the unfused composition, forward and gradients, and a
// fused backward that is made wrong is shown to be caught.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/threading.hpp"
#include "gradcheck.hpp"

using namespace attnfc;
using ag::Tensor;
using test::grad_check;
using test::leaf;

namespace {

constexpr kernels::Activation kGelu = kernels::Activation::GeluTanh;

// Output and every leaf's gradient of loss = sum(f() * weights), at the current threads.
std::vector<std::vector<float>> run_fused(const std::vector<Tensor>& leaves,
                                          const std::function<Tensor()>& f) {
  for (const Tensor& t : leaves) std::memset(t.grad(), 0, t.numel() * sizeof(float));
  ag::Graph g;
  ag::GraphScope scope(g);
  const Tensor y = f();
  const std::vector<float> w = test::weights_for(y.numel(), 3);
  g.backward(ag::sum_all(ag::mul(y, ag::from_data(y.shape(), w.data()))));
  std::vector<std::vector<float>> out{std::vector<float>(y.data(), y.data() + y.numel())};
  for (const Tensor& t : leaves) out.emplace_back(t.grad(), t.grad() + t.numel());
  return out;
}

// The fused and the unfused chain give the same output and leaf gradients, bit for bit,
// at 1 and 2 threads.
void check_same_bits(const std::vector<Tensor>& leaves, const std::function<Tensor()>& fused,
                     const std::function<Tensor()>& unfused) {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    kernels::set_threads(threads);
    const auto a = run_fused(leaves, fused), b = run_fused(leaves, unfused);
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      CHECK(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) == 0);
    }
  }
  kernels::set_threads(0);
}

}  // namespace

TEST_CASE("gradcheck: feed_forward (GELU tanh and erf, with and without biases)") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {2, 3, 5}, -1, 1, 80);
  const Tensor w1 = leaf(ps, {7, 5}, -0.6f, 0.6f, 81), b1 = leaf(ps, {7}, -0.3f, 0.3f, 82);
  const Tensor w2 = leaf(ps, {4, 7}, -0.6f, 0.6f, 83), b2 = leaf(ps, {4}, -0.3f, 0.3f, 84);
  CHECK_GRADS((std::vector<Tensor>{x, w1, b1, w2, b2}),
              [&] { return ag::feed_forward(x, w1, b1, w2, b2, kGelu); });
  CHECK_GRADS((std::vector<Tensor>{x, w1, w2}), [&] {
    return ag::feed_forward(x, w1, Tensor{}, w2, Tensor{}, kernels::Activation::GeluErf);
  });
  // A strided input (a transposed view) is made contiguous first.
  const Tensor xt = leaf(ps, {5, 6}, -1, 1, 85);
  CHECK_GRADS((std::vector<Tensor>{xt, w1, b2}),
              [&] { return ag::feed_forward(xt.transpose(0, 1), w1, b1, w2, b2, kGelu); });
}

TEST_CASE("gradcheck: add_dropout is residual + a fixed linear mask per seed") {
  ag::ParameterSet ps;
  const Tensor r = leaf(ps, {3, 11}, -1, 1, 90), x = leaf(ps, {3, 11}, -1, 1, 91);
  CHECK_GRADS((std::vector<Tensor>{r, x}), [&] { return ag::add_dropout(r, x, 0.3f, 7, true); });
  CHECK_GRADS((std::vector<Tensor>{r, x}),
              [&] { return ag::add_dropout(r, x.transpose(0, 1).transpose(0, 1), 0.5f, 8, true); });
}

TEST_CASE("fused ops give the unfused bits, at 1 and 2 threads") {
  // Large enough for the parallel paths (GEMM, GELU, dropout chunks, bias sums); the
  // second size makes feed_forward recompute the GELU output instead of keeping it.
  for (int64_t rows : {129, 1100}) {
    CAPTURE(rows);
    ag::ParameterSet ps;
    const Tensor x = leaf(ps, {4, rows, 64}, -1, 1, 100);
    const Tensor w1 = leaf(ps, {256, 64}, -0.1f, 0.1f, 101);
    const Tensor b1 = leaf(ps, {256}, -0.1f, 0.1f, 102);
    const Tensor w2 = leaf(ps, {64, 256}, -0.1f, 0.1f, 103);
    const Tensor b2 = leaf(ps, {64}, -0.1f, 0.1f, 104);
    const Tensor r = leaf(ps, {4, rows, 64}, -1, 1, 105);
    const std::vector<Tensor> leaves{x, w1, b1, w2, b2, r};
    auto fused = [&] {
      return ag::add_dropout(r, ag::feed_forward(x, w1, b1, w2, b2, kGelu), 0.1f, 42, true);
    };
    auto unfused = [&] {
      const Tensor h = ag::linear(ag::linear(x, w1, b1, kGelu), w2, b2);
      return ag::add(r, ag::dropout(h, 0.1f, 42, true));
    };
    check_same_bits(leaves, fused, unfused);
  }
}

namespace {

ag::PreNorm prenorm(const Tensor& gamma, const Tensor& beta) {
  return ag::PreNorm{gamma, beta, 1e-5f};
}

// Breaks a fused node's recorded state, for the tests that must fail: `forget_norm` makes
// the backward skip the LayerNorm, otherwise it recomputes another dropout mask.
// (linear: flags iarg[0], seed iarg[1]; feed_forward: flags iarg[1], seed iarg[2].)
Tensor corrupt(Tensor y, bool ffn, bool forget_norm) {
  ag::TensorNode* n = y.node();
  if (!n) return y;  // the checker's forwards without a tape
  const int flags = ffn ? 1 : 0;
  if (forget_norm) {
    n->iarg[flags] &= ~int64_t{1};
  } else {
    n->iarg[flags + 1] ^= 1;
  }
  return y;
}

}  // namespace

TEST_CASE("gradcheck: linear with a PreNorm and a ResidualDropout") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {2, 3, 6}, -1, 1, 110), r = leaf(ps, {2, 3, 4}, -1, 1, 111);
  const Tensor g = leaf(ps, {6}, 0.5f, 1.5f, 112), be = leaf(ps, {6}, -0.3f, 0.3f, 113);
  const Tensor w = leaf(ps, {4, 6}, -0.6f, 0.6f, 114), b = leaf(ps, {4}, -0.3f, 0.3f, 115);
  const std::vector<Tensor> all{x, r, g, be, w, b};
  auto both = [&](float p, bool train) {
    return ag::linear(x, prenorm(g, be), w, b, ag::ResidualDropout{r, p, 9, train});
  };
  CHECK_GRADS(all, [&] { return both(0.3f, true); });
  CHECK_GRADS(all, [&] { return both(0.3f, false); });
  CHECK_GRADS((std::vector<Tensor>{x, g, w}),
              [&] { return ag::linear(x, prenorm(g, Tensor{}), w, Tensor{}, {}); });
  CHECK_GRADS((std::vector<Tensor>{x, r, w, b}), [&] {
    return ag::linear(x, {}, w, b, ag::ResidualDropout{r, 0.5f, 10, true});
  });
  // The residual may be the input itself (a Transformer block).
  const Tensor w6 = leaf(ps, {6, 6}, -0.6f, 0.6f, 116);
  CHECK_GRADS((std::vector<Tensor>{x, g, be, w6}), [&] {
    return ag::linear(x, prenorm(g, be), w6, Tensor{}, ag::ResidualDropout{x, 0.2f, 11, true});
  });
  CHECK_FALSE(grad_check(all, [&] { return corrupt(both(0.3f, true), false, true); }).ok);
  CHECK_FALSE(grad_check(all, [&] { return corrupt(both(0.3f, true), false, false); }).ok);
}

TEST_CASE("gradcheck: feed_forward with a PreNorm and a ResidualDropout") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {2, 3, 5}, -1, 1, 120);
  const Tensor g = leaf(ps, {5}, 0.5f, 1.5f, 121), be = leaf(ps, {5}, -0.3f, 0.3f, 122);
  const Tensor w1 = leaf(ps, {7, 5}, -0.6f, 0.6f, 123), b1 = leaf(ps, {7}, -0.3f, 0.3f, 124);
  const Tensor w2 = leaf(ps, {5, 7}, -0.6f, 0.6f, 125), b2 = leaf(ps, {5}, -0.3f, 0.3f, 126);
  const std::vector<Tensor> all{x, g, be, w1, b1, w2, b2};
  auto block = [&](float p) {
    return ag::feed_forward(x, prenorm(g, be), w1, b1, w2, b2, kGelu,
                            ag::ResidualDropout{x, p, 12, true});
  };
  CHECK_GRADS(all, [&] { return block(0.3f); });
  CHECK_GRADS(all, [&] { return block(0.0f); });
  CHECK_FALSE(grad_check(all, [&] { return corrupt(block(0.3f), true, true); }).ok);
  CHECK_FALSE(grad_check(all, [&] { return corrupt(block(0.3f), true, false); }).ok);
}

TEST_CASE("PreNorm and ResidualDropout give the unfused bits, at 1 and 2 threads") {
  for (int64_t rows : {129, 1100}) {  // 1100: feed_forward recomputes the GELU output
    CAPTURE(rows);
    ag::ParameterSet ps;
    const Tensor x = leaf(ps, {4, rows, 64}, -1, 1, 130);
    const Tensor g = leaf(ps, {64}, 0.5f, 1.5f, 131), be = leaf(ps, {64}, -0.2f, 0.2f, 132);
    const Tensor w1 = leaf(ps, {256, 64}, -0.1f, 0.1f, 133);
    const Tensor b1 = leaf(ps, {256}, -0.1f, 0.1f, 134);
    const Tensor w2 = leaf(ps, {64, 256}, -0.1f, 0.1f, 135);
    const Tensor b2 = leaf(ps, {64}, -0.1f, 0.1f, 136);
    const Tensor w3 = leaf(ps, {64, 64}, -0.1f, 0.1f, 137);
    const std::vector<Tensor> leaves{x, g, be, w1, b1, w2, b2, w3};
    // Two blocks' worth: a normalised linear with a residual, then a feed-forward one.
    auto fused = [&] {
      const Tensor h = ag::linear(x, prenorm(g, be), w3, b2, ag::ResidualDropout{x, 0, 0, false});
      const Tensor a = ag::linear(h, prenorm(g, be), w1, b1, {});
      return ag::feed_forward(a.slice(2, 0, 64), prenorm(g, be), w1, b1, w2, b2, kGelu,
                              ag::ResidualDropout{h, 0.1f, 42, true});
    };
    auto unfused = [&] {
      const Tensor h = ag::add(x, ag::linear(ag::layernorm(x, g, be, 1e-5f), w3, b2));
      const Tensor a = ag::linear(ag::layernorm(h, g, be, 1e-5f), w1, b1);
      const Tensor n = ag::layernorm(a.slice(2, 0, 64), g, be, 1e-5f);
      return ag::add_dropout(h, ag::linear(ag::linear(n, w1, b1, kGelu), w2, b2), 0.1f, 42, true);
    };
    check_same_bits(leaves, fused, unfused);
  }
}
