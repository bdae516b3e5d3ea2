// Tensor, views, tape and graph semantics: forward values, storage sharing, fan-out,
// no-grad mode, arena reuse and error reporting.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"

using namespace attnfc;
using ag::Shape;
using ag::Tensor;

TEST_CASE("shape, strides and contiguity") {
  const Shape s{2, 3, 4};
  CHECK(s.numel() == 24);
  CHECK(s[-1] == 4);
  CHECK(s.str() == "[2, 3, 4]");
  CHECK(ag::contiguous_strides(s) == std::array<int64_t, 4>{12, 4, 1, 0});
  CHECK_THROWS_AS(Shape({1, 2, 3, 4, 5}), std::invalid_argument);
  ag::Graph g;
  ag::GraphScope scope(g);
  const Tensor t = ag::zeros({2, 3, 4});
  CHECK(t.is_contiguous());
  CHECK_FALSE(t.transpose(0, 2).is_contiguous());
  CHECK(t.slice(0, 1, 2).is_contiguous());
  CHECK_FALSE(t.slice(2, 1, 3).is_contiguous());
  CHECK_THROWS_AS(t.transpose(0, 1).reshape({6, 4}), std::invalid_argument);
  CHECK_THROWS_AS(t.reshape({5, 5}), std::invalid_argument);
  CHECK_THROWS_AS(t.slice(1, 2, 4), std::invalid_argument);
  CHECK_THROWS_AS(t.permute({0, 0, 1}), std::invalid_argument);
  CHECK_THROWS_AS(t.at({0, 3, 0}), std::out_of_range);
}

TEST_CASE("views share storage and read the right elements") {
  ag::Graph g;
  ag::GraphScope scope(g);
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  const Tensor t = ag::from_data({2, 3, 4}, v.data());
  const Tensor p = t.permute({2, 0, 1});  // [4, 2, 3]
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.at({3, 1, 2}) == t.at({1, 2, 3}));
  CHECK(p.data() == t.data());
  const Tensor s = t.slice(2, -3, -1);  // columns 1, 2
  CHECK(s.at({1, 2, 0}) == 21.0f);
  CHECK(t.transpose(-1, 0).at({3, 2, 1}) == 23.0f);
  const Tensor c = p.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.data() != t.data());
  CHECK(c.at({3, 1, 2}) == 23.0f);
  CHECK(t.contiguous().data() == t.data());  // already contiguous: no copy
  CHECK(t.reshape({6, 4}).at({5, 3}) == 23.0f);
}

TEST_CASE("forward values: broadcasting, matmul, reductions, concat") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const float a[3] = {1, 2, 3}, b[2] = {10, 20};
  const Tensor col = ag::from_data({3, 1}, a), row = ag::from_data({2}, b);
  const Tensor s = ag::add(col, row);  // [3, 2]
  CHECK(s.shape() == Shape{3, 2});
  CHECK(s.at({2, 1}) == 23.0f);
  CHECK(ag::sub(col, row).at({0, 1}) == -19.0f);
  CHECK(ag::div(row, col).at({1, 0}) == 5.0f);
  const float m1[6] = {1, 2, 3, 4, 5, 6}, m2[6] = {7, 8, 9, 10, 11, 12};
  const Tensor A = ag::from_data({2, 3}, m1), B = ag::from_data({3, 2}, m2);
  const Tensor C = ag::matmul(A, B);
  CHECK(C.at({0, 0}) == 58.0f);
  CHECK(C.at({1, 1}) == 154.0f);
  CHECK(ag::matmul(B, A, true, true).at({1, 0}) == 64.0f);  // (A B)^T
  CHECK(ag::sum(A, 0).at({2}) == 9.0f);
  CHECK(ag::mean(A, 1, true).shape() == Shape{2, 1});
  CHECK(ag::mean(A, 1, true).at({1, 0}) == 5.0f);
  CHECK(ag::sum_all(A).item() == 21.0f);
  const std::array<Tensor, 2> parts{A, ag::scale(A, 2.0f)};
  const Tensor cat = ag::concat(parts, 0);
  CHECK(cat.shape() == Shape{4, 3});
  CHECK(cat.at({3, 2}) == 12.0f);
  CHECK_THROWS_AS(ag::add(A, B), std::invalid_argument);
  CHECK_THROWS_AS(ag::matmul(A, A), std::invalid_argument);
}

TEST_CASE("fan-out accumulates, views route gradients into strided elements") {
  ag::ParameterSet ps;
  const Tensor w = ps.create("w", {2, 3});
  for (int i = 0; i < 6; ++i) w.data()[i] = static_cast<float>(i + 1);
  ag::Graph g;
  ag::GraphScope scope(g);
  // L = sum(w * w) + sum(w^T[:, 1])  ->  dL/dw = 2 w + [0 0 0; 1 1 1]
  const Tensor loss =
      ag::add(ag::sum_all(ag::mul(w, w)), ag::sum_all(w.transpose(0, 1).slice(1, 1, 2)));
  g.backward(loss);
  for (int i = 0; i < 6; ++i) {
    CHECK(w.grad()[i] == doctest::Approx(2.0 * (i + 1) + (i >= 3 ? 1.0 : 0.0)));
  }
  CHECK(g.nodes() > 4);  // views are on the tape too
  // Replaying the same tape again would double-count: refused.
  CHECK_THROWS_AS(g.backward(loss), std::logic_error);
}

TEST_CASE("NoGradScope records nothing; tensors without grads stay without") {
  ag::ParameterSet ps;
  const Tensor w = ps.create("w", {3});
  ag::init_constant(w, 2.0f);
  ag::Graph g;
  ag::GraphScope scope(g);
  {
    ag::NoGradScope no_grad;
    CHECK_FALSE(ag::grad_enabled());
    const Tensor y = ag::exp(ag::mul(w, w.transpose(0, 0)));
    CHECK_FALSE(y.requires_grad());
    CHECK(y.at({1}) == doctest::Approx(std::exp(4.0)));
    CHECK(g.nodes() == 0);
  }
  CHECK(ag::grad_enabled());
  const Tensor x = ag::full({3}, 1.0f);
  const Tensor z = ag::mul(x, x);
  CHECK_FALSE(z.requires_grad());
  CHECK(g.nodes() == 0);
  const Tensor y = ag::mul(w, x);
  CHECK(y.requires_grad());
  CHECK(y.grad() == nullptr);  // an intermediate's gradient exists only during backward
  CHECK(g.nodes() == 1);
  CHECK_THROWS_AS(g.backward(y), std::invalid_argument);               // not a scalar
  CHECK_THROWS_AS(g.backward(ag::sum_all(x)), std::invalid_argument);  // no grad
}

TEST_CASE("ops need an active graph; scopes nest") {
  CHECK_THROWS_AS(ag::current_graph(), std::logic_error);
  ag::Graph outer, inner;
  ag::GraphScope s1(outer);
  {
    ag::GraphScope s2(inner);
    CHECK(&ag::current_graph() == &inner);
  }
  CHECK(&ag::current_graph() == &outer);
}

TEST_CASE("reset recycles the arena: same shapes, same memory, no growth") {
  ag::ParameterSet ps;
  const Tensor w = ps.create("w", {64, 64});
  ag::init_uniform(w, 0.1f, 5);
  ag::Graph g;
  ag::GraphScope scope(g);
  const float* first = nullptr;
  size_t reserved = 0;
  for (int step = 0; step < 3; ++step) {
    const Tensor x = ag::full({300, 64}, 0.5f);  // > 1 MiB over the step: several blocks
    Tensor h = x;
    for (int i = 0; i < 6; ++i) h = ag::linear(h, w, {}, kernels::Activation::GeluTanh);
    g.backward(ag::mean_all(h));
    if (step == 0) first = x.data();
    if (step == 1) reserved = g.bytes_reserved();
    CHECK(x.data() == first);
    if (step == 2) CHECK(g.bytes_reserved() == reserved);
    g.reset();
    CHECK(g.nodes() == 0);
  }
  CHECK(reserved > (size_t{1} << 20));
}

TEST_CASE("intermediate gradients share a recycled region; unused outputs cost nothing") {
  ag::ParameterSet ps;
  const Tensor w = ps.create("w", {1 << 16});
  ag::init_uniform(w, 0.5f, 9);
  ag::Graph g;
  ag::GraphScope scope(g);
  constexpr size_t kTensorBytes = (size_t{1} << 16) * sizeof(float);  // 256 KiB
  for (int step = 0; step < 3; ++step) {
    ps.zero_grad();
    Tensor h = ag::mul(w, w);
    Tensor unused;
    for (int i = 0; i < 16; ++i) {
      unused = ag::exp(h);  // never reaches the loss: its backward is skipped
      h = ag::tanh(h);
    }
    g.backward(ag::sum_all(h));
    CHECK(h.grad() == nullptr);  // released once consumed
    CHECK(unused.grad() == nullptr);
    // d/dw of sum(tanh^16(w^2)) at one element, by the chain rule.
    double v = static_cast<double>(w.data()[5]) * w.data()[5], d = 2.0 * w.data()[5];
    for (int i = 0; i < 16; ++i) {
      v = std::tanh(v);
      d *= 1.0 - v * v;
    }
    CHECK(w.grad()[5] == doctest::Approx(d).epsilon(1e-4));
    // 33 activations of 256 KiB each; gradients kept for all 18 taped outputs would
    // take another 4.5 MiB, recycled they take two tensors (plus 1 MiB of scratch).
    if (step == 2) CHECK(g.bytes_reserved() < 33 * kTensorBytes + (size_t{3} << 20));
    g.reset();
  }
}

TEST_CASE("parameters: creation, lookup, duplicates, zero_grad, initialisers") {
  ag::ParameterSet ps;
  const Tensor a = ps.create("blocks.0.w", {3, 4});
  const Tensor b = ps.create("blocks.0.b", {4});
  CHECK_THROWS_AS(ps.create("blocks.0.w", {1}), std::invalid_argument);
  CHECK(ps.find("blocks.0.b").data() == b.data());
  CHECK_FALSE(ps.find("nope").defined());
  CHECK(ps.numel() == 16);
  CHECK(a.requires_grad());
  CHECK(a.data()[5] == 0.0f);
  ag::init_uniform(a, 0.5f, 42);
  float lo = 1, hi = -1;
  for (int i = 0; i < 12; ++i) {
    lo = std::min(lo, a.data()[i]);
    hi = std::max(hi, a.data()[i]);
  }
  CHECK(lo >= -0.5f);
  CHECK(hi <= 0.5f);
  CHECK(hi - lo > 0.3f);
  std::vector<float> before(a.data(), a.data() + 12);
  ag::init_uniform(a, 0.5f, 42);
  CHECK(std::vector<float>(a.data(), a.data() + 12) == before);  // reproducible
  // Initialising a view writes only the viewed elements, in logical order.
  ag::init_constant(a.slice(1, 1, 2), 7.0f);
  CHECK(a.at({2, 1}) == 7.0f);
  CHECK(a.at({2, 2}) == before[10]);
  a.grad()[3] = 1.0f;
  ps.zero_grad();
  CHECK(a.grad()[3] == 0.0f);
}

TEST_CASE("dropout: reproducible per seed, unbiased, identity when not training") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const Tensor x = ag::full({1000}, 1.0f);
  CHECK(ag::dropout(x, 0.3f, 1, false).data() == x.data());
  CHECK(ag::dropout(x, 0.0f, 1, true).data() == x.data());
  const Tensor a = ag::dropout(x, 0.3f, 1, true), b = ag::dropout(x, 0.3f, 1, true);
  const Tensor c = ag::dropout(x, 0.3f, 2, true);
  int kept = 0, same = 0, differ = 0;
  for (int i = 0; i < 1000; ++i) {
    kept += a.data()[i] != 0.0f;
    same += a.data()[i] == b.data()[i];
    differ += a.data()[i] != c.data()[i];
    if (a.data()[i] != 0.0f) CHECK(a.data()[i] == doctest::Approx(1.0 / 0.7));
  }
  CHECK(same == 1000);
  CHECK(differ > 100);
  CHECK(kept > 640);
  CHECK(kept < 760);
  CHECK(ag::sum_all(ag::dropout(x, 1.0f, 3, true)).item() == 0.0f);
  CHECK_THROWS_AS(ag::dropout(x, 1.5f, 3, true), std::invalid_argument);
}
