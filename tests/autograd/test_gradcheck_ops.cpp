// Every differentiable op, gradient-checked by central differences (see gradcheck.hpp)
// on small awkward shapes, with broadcasting and non-contiguous (view) inputs.
#include <doctest/doctest.h>

#include <array>
#include <limits>
#include <vector>

#include "attnfc/autograd/ops.hpp"
#include "gradcheck.hpp"

using namespace attnfc;
using ag::Shape;
using ag::Tensor;
using test::grad_check;
using test::leaf;

TEST_CASE("gradcheck: linear with bias, 3-d input, fused activations") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {2, 3, 7}, -1, 1, 1);
  const Tensor W = leaf(ps, {5, 7}, -0.5f, 0.5f, 2);
  const Tensor b = leaf(ps, {5}, -0.5f, 0.5f, 3);
  CHECK_GRADS((std::vector<Tensor>{x, W, b}), [&] { return ag::linear(x, W, b); });
  CHECK_GRADS((std::vector<Tensor>{x, W}), [&] { return ag::linear(x, W); });
  CHECK_GRADS((std::vector<Tensor>{x, W, b}),
              [&] { return ag::linear(x, W, b, kernels::Activation::GeluTanh); });
  CHECK_GRADS((std::vector<Tensor>{x, W, b}),
              [&] { return ag::linear(x, W, b, kernels::Activation::GeluErf); });
}

TEST_CASE("gradcheck: linear on a 1-d input and a single output") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {33}, -1, 1, 41);
  const Tensor W = leaf(ps, {1, 33}, -0.3f, 0.3f, 42);
  const Tensor b = leaf(ps, {1}, -1, 1, 43);
  CHECK_GRADS((std::vector<Tensor>{x, W, b}), [&] { return ag::linear(x, W, b); });
  CHECK_GRADS((std::vector<Tensor>{x, W}), [&] {
    return ag::linear(x.reshape({1, 1, 33}), W, {}, kernels::Activation::GeluErf);
  });
}

TEST_CASE("gradcheck: linear relu away from the kink") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {3, 1}, 0.5f, 1.0f, 4);
  const Tensor W = leaf(ps, {7, 1}, -1, 1, 5);
  const Tensor b = leaf(ps, {7}, -1, 1, 6);
  test::keep_away(W, 0.0f, 0.2f);
  test::keep_away(b, 0.0f, 0.2f);
  // pre-activations are W*x + b; with |W|,|b| >= 0.2 and x in [0.5, 1] a few may sit
  // near 0, so shift b away from -W*x.
  for (int j = 0; j < 7; ++j) {
    for (int r = 0; r < 3; ++r) {
      const float z = W.data()[j] * x.data()[r] + b.data()[j];
      if (std::fabs(z) < 0.1f) b.data()[j] += 0.3f;
    }
  }
  CHECK_GRADS((std::vector<Tensor>{x, W, b}),
              [&] { return ag::linear(x, W, b, kernels::Activation::Relu); });
}

TEST_CASE("gradcheck: linear on views (transposed weight, sliced and permuted input)") {
  ag::ParameterSet ps;
  const Tensor xb = leaf(ps, {3, 9}, -1, 1, 7);
  const Tensor Wt = leaf(ps, {4, 5}, -1, 1, 8);  // used as W = Wt^T  [5, 4]
  const Tensor xp = leaf(ps, {4, 2, 3}, -1, 1, 9);
  // Sliced input: row-strided, no copy. Transposed weight: column-major, no copy.
  CHECK_GRADS((std::vector<Tensor>{xb, Wt}),
              [&] { return ag::linear(xb.slice(1, 2, 6), Wt.transpose(0, 1)); });
  // Permuted input: not row-strided, the op copies it on the tape.
  CHECK_GRADS((std::vector<Tensor>{xp, Wt}), [&] {
    return ag::linear(xp.permute({1, 2, 0}), Wt.transpose(0, 1));
  });
}

TEST_CASE("gradcheck: matmul with every transpose combination and batching") {
  ag::ParameterSet ps;
  const Tensor a = leaf(ps, {2, 3, 7}, -1, 1, 10);  // [B, M, K]
  const Tensor b = leaf(ps, {2, 7, 5}, -1, 1, 11);  // [B, K, N]
  const Tensor at = leaf(ps, {2, 7, 3}, -1, 1, 12);
  const Tensor bt = leaf(ps, {2, 5, 7}, -1, 1, 13);
  CHECK_GRADS((std::vector<Tensor>{a, b}), [&] { return ag::matmul(a, b); });
  CHECK_GRADS((std::vector<Tensor>{at, b}), [&] { return ag::matmul(at, b, true, false); });
  CHECK_GRADS((std::vector<Tensor>{a, bt}), [&] { return ag::matmul(a, bt, false, true); });
  CHECK_GRADS((std::vector<Tensor>{at, bt}), [&] { return ag::matmul(at, bt, true, true); });
  // Views: a transposed view flips the physical layout; a flag on top flips it back.
  CHECK_GRADS((std::vector<Tensor>{at, b}), [&] { return ag::matmul(at.transpose(1, 2), b); });
  CHECK_GRADS((std::vector<Tensor>{a, bt}),
              [&] { return ag::matmul(a.transpose(1, 2), bt.transpose(1, 2), true, false); });
}

TEST_CASE("gradcheck: matmul on 4-d head views (K = 1 and 33)") {
  ag::ParameterSet ps;
  // [B, L, H, D] -> [B, H, L, D] via permute: the leading dims do not collapse, so
  // matmul runs B batched GEMMs over H, reading the views in place.
  const Tensor q = leaf(ps, {2, 3, 2, 33}, -1, 1, 14);
  const Tensor k = leaf(ps, {2, 3, 2, 33}, -1, 1, 15);
  CHECK_GRADS((std::vector<Tensor>{q, k}), [&] {
    return ag::matmul(q.permute({0, 2, 1, 3}), k.permute({0, 2, 1, 3}), false, true);
  });
  const Tensor u = leaf(ps, {3, 1}, -1, 1, 16);
  const Tensor v = leaf(ps, {1, 7}, -1, 1, 17);
  CHECK_GRADS((std::vector<Tensor>{u, v}), [&] { return ag::matmul(u, v); });
}

TEST_CASE("gradcheck: add, sub, mul, div with broadcasting") {
  ag::ParameterSet ps;
  const Tensor a = leaf(ps, {3, 1, 7}, -1, 1, 20);
  const Tensor b = leaf(ps, {4, 7}, -1, 1, 21);
  const Tensor c = leaf(ps, {1}, 0.5f, 1.5f, 22);
  const Tensor d = leaf(ps, {4, 1}, 0.5f, 2.0f, 23);
  CHECK_GRADS((std::vector<Tensor>{a, b}), [&] { return ag::add(a, b); });
  CHECK_GRADS((std::vector<Tensor>{a, b}), [&] { return ag::sub(a, b); });
  CHECK_GRADS((std::vector<Tensor>{a, b}), [&] { return ag::mul(a, b); });
  CHECK_GRADS((std::vector<Tensor>{a, d}), [&] { return ag::div(a, d); });
  CHECK_GRADS((std::vector<Tensor>{b, c}), [&] { return ag::div(c, ag::add_scalar(b, 2.0f)); });
  CHECK_GRADS((std::vector<Tensor>{b, c}), [&] { return ag::mul(b, c); });
  // Same tensor on both sides (fan-in), and a non-contiguous operand.
  CHECK_GRADS((std::vector<Tensor>{b}), [&] { return ag::mul(b, b); });
  CHECK_GRADS((std::vector<Tensor>{a, b}), [&] {
    return ag::add(a.permute({2, 1, 0}), b.transpose(0, 1).slice(1, 1, 2));
  });
}

TEST_CASE("gradcheck: scale, add_scalar and unary maps") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {3, 7}, -2, 2, 30);
  const Tensor p = leaf(ps, {33}, 0.5f, 2.0f, 31);
  const Tensor r = leaf(ps, {7, 3}, -1, 1, 32);
  test::keep_away(r, 0.0f, 0.1f);
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::scale(x, -0.75f); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::add_scalar(x, 3.0f); });
  CHECK_GRADS((std::vector<Tensor>{r}), [&] { return ag::relu(r.transpose(0, 1)); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::gelu(x, true); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::gelu(x.transpose(0, 1), false); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::tanh(x); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::exp(ag::scale(x, 0.5f)); });
  CHECK_GRADS((std::vector<Tensor>{p}), [&] { return ag::log(p); });
  CHECK_GRADS((std::vector<Tensor>{p}), [&] { return ag::sqrt(p); });
}

TEST_CASE("gradcheck: sum and mean over an axis, and over everything") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {3, 7, 2}, -1, 1, 40);
  for (int dim : {0, 1, 2, -1}) {
    for (bool keep : {false, true}) {
      CAPTURE(dim);
      CAPTURE(keep);
      CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::sum(x, dim, keep); });
      CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::mean(x, dim, keep); });
    }
  }
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::sum(x.permute({2, 0, 1}), 1); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::sum_all(x.transpose(0, 2)); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::mean_all(x.slice(1, 2, 5)); });
}

TEST_CASE("gradcheck: views and concat") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {2, 3, 7}, -1, 1, 50);
  const Tensor y = leaf(ps, {2, 1, 7}, -1, 1, 51);
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return x.reshape({6, 7}); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return x.transpose(0, 2).contiguous(); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return x.permute({1, 2, 0}); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return x.slice(2, 1, 6).slice(1, -2, 3); });
  // Overlapping uses of one leaf through different views: contributions add up.
  CHECK_GRADS((std::vector<Tensor>{x}),
              [&] { return ag::mul(x.slice(2, 0, 3), x.slice(2, 4, 7)); });
  CHECK_GRADS((std::vector<Tensor>{x, y}), [&] {
    const std::array<Tensor, 3> parts{x, y, x.slice(1, 1, 2)};
    return ag::concat(parts, 1);
  });
  CHECK_GRADS((std::vector<Tensor>{x, y}), [&] {
    const std::array<Tensor, 2> parts{x.transpose(1, 2), y.transpose(1, 2)};
    return ag::concat(parts, -1);
  });
}
