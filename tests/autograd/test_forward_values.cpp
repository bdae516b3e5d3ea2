// Forward values against naive double-precision loops, through views. The gradient
// checks prove backward matches forward; these prove the forward computes the right
// function (e.g. that strides of a view reach the kernels correctly).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/random.hpp"

using namespace attnfc;
using ag::Shape;
using ag::Tensor;

namespace {
Tensor rand_tensor(const Shape& s, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = lo + (hi - lo) * kernels::random_uniform(seed, i);
  return ag::from_data(s, v.data());
}
constexpr double kTol = 2e-5;
}  // namespace

TEST_CASE("forward: linear and matmul read views correctly") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const Tensor xb = rand_tensor({2, 3, 9}, 1), Wt = rand_tensor({4, 5}, 2), b = rand_tensor({5}, 3);
  const Tensor x = xb.slice(2, 3, 7);   // [2, 3, 4], row-strided
  const Tensor W = Wt.transpose(0, 1);  // [5, 4], column-major
  for (auto act : {kernels::Activation::None, kernels::Activation::Relu,
                   kernels::Activation::GeluTanh, kernels::Activation::GeluErf}) {
    const Tensor y = ag::linear(x, W, b, act);
    for (int i = 0; i < 2; ++i)
      for (int r = 0; r < 3; ++r)
        for (int o = 0; o < 5; ++o) {
          double z = b.at({o});
          for (int k = 0; k < 4; ++k) z += static_cast<double>(x.at({i, r, k})) * W.at({o, k});
          const double want = kernels::apply_activation(act, static_cast<float>(z));
          CHECK(y.at({i, r, o}) == doctest::Approx(want).epsilon(kTol));
        }
  }
  const Tensor A = rand_tensor({3, 7, 2}, 4), B = rand_tensor({3, 5, 7}, 5);
  // A.permute -> [3, 2, 7] (column-major inner), B.transpose via flag.
  const Tensor C = ag::matmul(A.permute({0, 2, 1}), B, false, true);  // [3, 2, 5]
  for (int bt = 0; bt < 3; ++bt)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 5; ++n) {
        double z = 0;
        for (int k = 0; k < 7; ++k) z += static_cast<double>(A.at({bt, k, m})) * B.at({bt, n, k});
        CHECK(C.at({bt, m, n}) == doctest::Approx(z).epsilon(kTol));
      }
}

TEST_CASE("forward: matmul on head-split 4-d views (non-collapsible leading dims)") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const Tensor q = rand_tensor({2, 5, 3, 4}, 11), k = rand_tensor({2, 5, 3, 4}, 12);
  const Tensor qh = q.permute({0, 2, 1, 3}), kh = k.permute({0, 2, 1, 3});  // [2, 3, 5, 4]
  const Tensor s = ag::matmul(qh, kh, false, true);                         // [2, 3, 5, 5]
  CHECK(s.shape() == Shape{2, 3, 5, 5});
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 3; ++h)
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
          double z = 0;
          for (int d = 0; d < 4; ++d)
            z += static_cast<double>(q.at({b, i, h, d})) * k.at({b, j, h, d});
          CHECK(s.at({b, h, i, j}) == doctest::Approx(z).epsilon(kTol));
        }
}

TEST_CASE("forward: attention on packed views matches naive attention") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const int B = 2, L = 5, H = 3, D = 4;
  const Tensor qkv = rand_tensor({B, L, 3 * H, D}, 6);
  auto part = [&](int i) { return qkv.slice(2, i * H, (i + 1) * H).permute({0, 2, 1, 3}); };
  const uint8_t pad[B * L] = {0, 0, 0, 1, 1, 1, 0, 0, 0, 0};  // batch 1: query 0 sees nothing
  ag::SdpaOptions opt;
  opt.causal = true;
  opt.key_padding = pad;
  const Tensor q = part(0), k = part(1), v = part(2);
  const Tensor o = ag::scaled_dot_product_attention(q, k, v, opt);
  CHECK(o.shape() == Shape{B, H, L, D});
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < L; ++i) {
        std::vector<double> p(L, 0.0);
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int j = 0; j <= i; ++j) {
          if (pad[b * L + j]) continue;
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += static_cast<double>(q.at({b, h, i, d})) * k.at({b, h, j, d});
          p[j] = s / std::sqrt(static_cast<double>(D));
          mx = std::max(mx, p[j]);
        }
        for (int j = 0; j <= i; ++j) {
          if (pad[b * L + j]) continue;
          p[j] = std::exp(p[j] - mx);
          sum += p[j];
        }
        for (int d = 0; d < D; ++d) {
          double want = 0;
          for (int j = 0; j <= i; ++j) {
            if (!pad[b * L + j]) want += p[j] / sum * v.at({b, h, j, d});
          }
          CAPTURE(b);
          CAPTURE(i);
          CHECK(o.at({b, h, i, d}) == doctest::Approx(want).epsilon(1e-4));
        }
      }
  CHECK(o.at({1, 0, 0, 0}) == 0.0f);  // fully masked query row -> zeros, not NaN
}

TEST_CASE("forward: softmax variants, layernorm, reductions, maps") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const Tensor x = rand_tensor({3, 7}, 7, -3, 3);
  const Tensor xt = x.transpose(0, 1);  // [7, 3]
  const Tensor s = ag::softmax(xt);
  const uint8_t bm[3] = {0, 1, 0};  // masks column 1 in every row
  const Tensor sb = ag::softmax_bool_mask(xt, bm, Shape{3});
  for (int r = 0; r < 7; ++r) {
    double z = 0, zb = 0;
    for (int c = 0; c < 3; ++c) z += std::exp(static_cast<double>(xt.at({r, c})));
    zb = z - std::exp(static_cast<double>(xt.at({r, 1})));
    for (int c = 0; c < 3; ++c) {
      CHECK(s.at({r, c}) == doctest::Approx(std::exp(xt.at({r, c})) / z).epsilon(kTol));
      const double want_b = c == 1 ? 0.0 : std::exp(xt.at({r, c})) / zb;
      CHECK(sb.at({r, c}) == doctest::Approx(want_b).epsilon(kTol));
    }
  }
  const Tensor gamma = rand_tensor({3}, 8, 0.5f, 1.5f), beta = rand_tensor({3}, 9);
  const Tensor ln = ag::layernorm(xt, gamma, beta, 1e-5f);
  for (int r = 0; r < 7; ++r) {
    double m = 0, var = 0;
    for (int c = 0; c < 3; ++c) m += xt.at({r, c}) / 3.0;
    for (int c = 0; c < 3; ++c) var += (xt.at({r, c}) - m) * (xt.at({r, c}) - m) / 3.0;
    for (int c = 0; c < 3; ++c) {
      const double want =
          (xt.at({r, c}) - m) / std::sqrt(var + 1e-5) * gamma.at({c}) + beta.at({c});
      CHECK(ln.at({r, c}) == doctest::Approx(want).epsilon(1e-4));
    }
  }
  const Tensor sm = ag::sum(xt, 0), mn = ag::mean(x.permute({1, 0}), 1, true);
  for (int c = 0; c < 3; ++c) {
    double z = 0;
    for (int r = 0; r < 7; ++r) z += xt.at({r, c});
    CHECK(sm.at({c}) == doctest::Approx(z).epsilon(kTol));
  }
  for (int r = 0; r < 7; ++r) {
    double z = 0;
    for (int c = 0; c < 3; ++c) z += x.at({c, r});
    CHECK(mn.at({r, 0}) == doctest::Approx(z / 3).epsilon(kTol));
  }
  const Tensor pos = rand_tensor({3, 7}, 10, 0.1f, 4.0f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 7; ++j) {
      const double u = x.at({i, j}), p = pos.at({i, j});
      CHECK(ag::relu(x).at({i, j}) == doctest::Approx(u > 0 ? u : 0.0));
      CHECK(ag::tanh(x).at({i, j}) == doctest::Approx(std::tanh(u)).epsilon(kTol));
      CHECK(ag::exp(x).at({i, j}) == doctest::Approx(std::exp(u)).epsilon(kTol));
      CHECK(ag::log(pos).at({i, j}) == doctest::Approx(std::log(p)).epsilon(kTol));
      CHECK(ag::sqrt(pos).at({i, j}) == doctest::Approx(std::sqrt(p)).epsilon(kTol));
      CHECK(ag::gelu(x, false).at({i, j}) ==
            doctest::Approx(0.5 * u * (1 + std::erf(u / std::sqrt(2.0)))).epsilon(1e-4));
      CHECK(ag::gelu(x, true).at({i, j}) ==
            doctest::Approx(0.5 * u * (1 + std::tanh(0.7978845608 * (u + 0.044715 * u * u * u))))
                .epsilon(1e-4));
    }
}
