// Linear and LayerNorm against torch fixtures; initialisation, names, errors, and
// thread-count determinism of the nn modules.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/nn/attention.hpp"
#include "attnfc/nn/layers.hpp"
#include "golden.hpp"
#include "golden_tensors.hpp"

using namespace attnfc;

namespace {

using golden::fill;
using golden::shape_of;

ag::Tensor layer_loss_against(const golden::Case& c, const ag::Tensor& out) {
  const auto dout = c.at("dout").as_float();
  REQUIRE(out.shape() == shape_of(c.at("dout")));
  return ag::sum_all(ag::mul(out, ag::from_data(out.shape(), dout.data())));
}

void check(const golden::Case& c, const char* ref, const float* got) {
  REQUIRE(got != nullptr);
  const double m = golden::mismatch(got, c.at(ref));
  CHECK_MESSAGE(m <= 1.0, c.name << ": " << ref << " off by " << m << " x tolerance");
}

}  // namespace

TEST_CASE("Linear matches torch.nn.Linear (with and without bias)") {
  for (const char* name : {"linear_bias", "linear_nobias"}) {
    const golden::Case c = golden::load(name);
    const bool bias = c.attr("bias") != 0;
    ag::Graph g;
    ag::GraphScope scope(g);
    ag::ParameterSet ps;
    nn::Linear lin(ps, "proj", static_cast<int>(c.attr("in")), static_cast<int>(c.attr("out")),
                   bias, 3);
    CHECK(lin.bias.defined() == bias);
    CHECK(ps.find("proj.bias").defined() == bias);
    fill(lin.weight, c.at("weight"));
    if (bias) fill(lin.bias, c.at("bias"));
    ag::Tensor x = ps.create("x", shape_of(c.at("x")));
    fill(x, c.at("x"));
    const ag::Tensor out = lin.forward(x);
    g.backward(layer_loss_against(c, out));
    check(c, "out", out.data());
    check(c, "dx", x.grad());
    check(c, "dweight", lin.weight.grad());
    if (bias) check(c, "dbias", lin.bias.grad());
  }
}

TEST_CASE("LayerNorm matches torch.nn.LayerNorm") {
  const golden::Case c = golden::load("layernorm");
  ag::Graph g;
  ag::GraphScope scope(g);
  ag::ParameterSet ps;
  nn::LayerNorm ln(ps, "norm", static_cast<int>(c.attr("dim")));
  // torch's defaults before the fixture's values are loaded.
  for (int i = 0; i < ln.weight.numel(); ++i) {
    CHECK(ln.weight.data()[i] == 1.0f);
    CHECK(ln.bias.data()[i] == 0.0f);
  }
  fill(ln.weight, c.at("weight"));
  fill(ln.bias, c.at("bias"));
  ag::Tensor x = ps.create("x", shape_of(c.at("x")));
  fill(x, c.at("x"));
  const ag::Tensor out = ln.forward(x);
  g.backward(layer_loss_against(c, out));
  check(c, "out", out.data());
  check(c, "dx", x.grad());
  check(c, "dweight", ln.weight.grad());
  check(c, "dbias", ln.bias.grad());
}

TEST_CASE("module initialisation follows torch's bounds and is seeded") {
  ag::ParameterSet ps;
  nn::Linear a(ps, "a", 16, 8, true, 1), b(ps, "b", 16, 8, true, 1), c(ps, "c", 16, 8, true, 2);
  const float bound = 1.0f / 4.0f;
  double sum_sq = 0;
  for (int i = 0; i < a.weight.numel(); ++i) {
    CHECK(std::abs(a.weight.data()[i]) <= bound);
    sum_sq += a.weight.data()[i] * a.weight.data()[i];
    CHECK(a.weight.data()[i] == b.weight.data()[i]);
  }
  CHECK(sum_sq / a.weight.numel() > bound * bound / 3 * 0.5);  // uniform: E[w^2] = bound^2 / 3
  CHECK(std::memcmp(a.weight.data(), c.weight.data(), 16 * 8 * sizeof(float)) != 0);
  CHECK(std::memcmp(a.weight.data(), a.bias.data(), 8 * sizeof(float)) != 0);
  for (int i = 0; i < 8; ++i) CHECK(std::abs(a.bias.data()[i]) <= bound);

  nn::MultiHeadAttention mha(ps, "blocks.0.attn", 8, 2, true, 5);
  CHECK(ps.find("blocks.0.attn.in_proj_weight").shape() == ag::Shape{24, 8});
  CHECK(ps.find("blocks.0.attn.in_proj_bias").shape() == ag::Shape{24});
  CHECK(ps.find("blocks.0.attn.out_proj.weight").shape() == ag::Shape{8, 8});
  CHECK(ps.find("blocks.0.attn.out_proj.bias").shape() == ag::Shape{8});
  const float xavier = std::sqrt(6.0f / 32.0f);
  for (int i = 0; i < mha.in_proj_weight.numel(); ++i)
    CHECK(std::abs(mha.in_proj_weight.data()[i]) <= xavier);
  for (int i = 0; i < 24; ++i) CHECK(mha.in_proj_bias.data()[i] == 0.0f);  // as torch
  nn::MultiHeadAttention nobias(ps, "x", 8, 4, false, 5);
  CHECK_FALSE(ps.find("x.in_proj_bias").defined());
  CHECK_FALSE(nobias.out_proj_bias.defined());
}

TEST_CASE("bad module sizes are input errors naming the module") {
  ag::ParameterSet ps;
  CHECK_THROWS_AS(nn::MultiHeadAttention(ps, "attn", 10, 3, true, 1), InputError);
  CHECK_THROWS_WITH_AS(nn::MultiHeadAttention(ps, "enc.attn", 10, 4, true, 1),
                       doctest::Contains("enc.attn"), InputError);
  CHECK_THROWS_AS(nn::Linear(ps, "l", 0, 3, true, 1), InputError);
  CHECK_THROWS_AS(nn::LayerNorm(ps, "n", 0), InputError);
  nn::MultiHeadAttention ok(ps, "ok", 8, 2, true, 1);
  ag::Graph g;
  ag::GraphScope scope(g);
  CHECK_THROWS_AS(ok.forward(ag::zeros({2, 3, 6})), std::invalid_argument);
  CHECK_THROWS_AS(ok.forward(ag::zeros({2, 3, 8}), ag::zeros({3, 3, 8}), {}),
                  std::invalid_argument);
}

TEST_CASE("heads wider than the fused kernel take the materialising path") {
  ag::Graph g;
  ag::GraphScope scope(g);
  ag::ParameterSet ps;
  const int D = 300;
  ag::Tensor q = ps.create("q", {1, 1, 3, D}), k = ps.create("k", {1, 1, 4, D}),
             v = ps.create("v", {1, 1, 4, D});
  ag::init_normal(q, 0.05f, 1);
  ag::init_normal(k, 0.05f, 2);
  ag::init_normal(v, 1.0f, 3);
  ag::Tensor w;
  const ag::Tensor fused = nn::scaled_dot_product_attention(q, k, v, {true, nullptr});
  const ag::Tensor explicit_ = nn::scaled_dot_product_attention(q, k, v, {true, nullptr}, &w);
  for (int i = 0; i < fused.numel(); ++i) CHECK(fused.data()[i] == explicit_.data()[i]);
  CHECK(w.at({0, 0, 0, 0}) == doctest::Approx(1.0f));
}

TEST_CASE("MultiHeadAttention forward and backward are bit-identical at 1 and 2 threads") {
  auto run = [](int threads, bool with_weights) {
    kernels::set_threads(threads);
    ag::Graph g;
    ag::GraphScope scope(g);
    ag::ParameterSet ps;
    nn::MultiHeadAttention mha(ps, "attn", 32, 4, true, 11);
    ag::init_uniform(mha.in_proj_bias, 0.1f, 12);
    ag::Tensor x = ps.create("x", {3, 33, 32});
    ag::init_normal(x, 1.0f, 13);
    const std::vector<uint8_t> pad = [] {
      std::vector<uint8_t> p(3 * 33, 0);
      p[33 + 30] = p[2 * 33 + 0] = 1;
      return p;
    }();
    ag::Tensor w;
    const ag::Tensor out = mha.forward(x, {true, pad.data()}, with_weights ? &w : nullptr);
    g.backward(ag::sum_all(ag::mul(out, out)));
    std::vector<float> all(out.data(), out.data() + out.numel());
    for (const auto& p : ps.all())
      all.insert(all.end(), p.tensor.grad(), p.tensor.grad() + p.tensor.numel());
    return all;
  };
  const int saved = kernels::current_threads();
  for (bool with_weights : {false, true}) {
    const auto one = run(1, with_weights), two = run(2, with_weights);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  }
  kernels::set_threads(saved);
}
