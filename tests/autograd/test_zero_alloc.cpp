// After the first step, a training step with the same shapes makes zero heap
// allocations: activations, saved state, gradients and tape nodes come from the
// graph's arena, and reset() keeps its blocks and the tape's capacity.
//
// This file replaces the global operator new / delete with counting versions
// (for the whole test_autograd program; they count only while armed).
#include <doctest/doctest.h>

#include "../support/counting_allocator.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/autograd/parameters.hpp"

using attnfc_test::g_allocations;
using attnfc_test::g_armed;

using namespace attnfc;
using ag::Tensor;

namespace {
struct Model {
  ag::ParameterSet ps;
  Tensor w1, b1, gamma, beta, w2, b2, w3;
  Model() {
    w1 = ps.create("w1", {16, 5});
    b1 = ps.create("b1", {16});
    gamma = ps.create("ln.weight", {16});
    beta = ps.create("ln.bias", {16});
    w2 = ps.create("w2", {16, 16});
    b2 = ps.create("b2", {16});
    w3 = ps.create("w3", {3, 16});
    ag::init_uniform(w1, 0.4f, 1);
    ag::init_uniform(b1, 0.4f, 2);
    ag::init_constant(gamma, 1.0f);
    ag::init_uniform(w2, 0.25f, 3);
    ag::init_uniform(w3, 0.25f, 4);
  }
  // A step touching every kind of node: fused-GELU linear, layernorm, residual add,
  // views (slice, transpose), batched matmul, broadcasting mul, sum, dropout,
  // concat and a masked loss.
  Tensor loss(const Tensor& x, const Tensor& y, const Tensor& mask, uint64_t step) const {
    const Tensor h = ag::linear(x, w1, b1, kernels::Activation::GeluTanh);  // [4, 6, 16]
    const Tensor n = ag::layernorm(h, gamma, beta);
    const Tensor r = ag::add(h, ag::linear(n, w2, b2, kernels::Activation::Relu));
    const Tensor g = ag::matmul(r.slice(2, 0, 8), r.slice(2, 8, 16).transpose(1, 2));  // [4,6,6]
    const Tensor s = ag::mul(ag::softmax(g), ag::tanh(ag::sum(g, -1, true)));
    const Tensor d = ag::dropout(ag::concat(std::array<Tensor, 3>{s, s, s}, 2), 0.1f, step, true);
    const Tensor out = ag::linear(ag::add(r, d.slice(2, 1, 17)), w3);  // [4, 6, 3]
    return ag::add(ag::mse_loss(out, y, mask), ag::scale(ag::mean_all(ag::exp(out)), 1e-3f));
  }
};
}  // namespace

TEST_CASE("a steady-state training step makes zero heap allocations") {
  Model m;
  ag::AdamW opt(m.ps, 0.9f, 0.999f, 1e-8f, 0.01f);
  ag::Graph graph;
  std::vector<float> xs(4 * 6 * 5), ys(4 * 6 * 3), ms(4 * 6 * 3);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<float>(i % 5) * 0.2f - 0.4f;
  for (size_t i = 0; i < ms.size(); ++i) ms[i] = i % 4 == 0 ? 0.0f : 1.0f;
  long per_step[4] = {};
  size_t reserved[4] = {};
  for (int step = 0; step < 4; ++step) {
    g_allocations = 0;
    g_armed = step >= 1;  // steps 2-4
    {
      ag::GraphScope scope(graph);
      const Tensor x = ag::from_data({4, 6, 5}, xs.data());
      const Tensor y = ag::from_data({4, 6, 3}, ys.data());
      const Tensor mask = ag::from_data({4, 6, 3}, ms.data());
      m.ps.zero_grad();
      const Tensor loss = m.loss(x, y, mask, static_cast<uint64_t>(step));
      graph.backward(loss);
      ag::clip_grad_norm(m.ps, 1.0f);
      opt.step(1e-3f);
      graph.reset();
    }
    g_armed = false;
    per_step[step] = g_allocations.load();
    reserved[step] = graph.bytes_reserved();
  }
  CHECK(per_step[1] == 0);
  CHECK(per_step[2] == 0);
  CHECK(per_step[3] == 0);
  CHECK(reserved[3] == reserved[1]);
  CHECK(graph.nodes() == 0);
}

TEST_CASE("a steady-state attention step (fused SDPA, masked softmax) makes zero allocations") {
  ag::ParameterSet ps;
  const Tensor w_qkv = ps.create("in_proj_weight", {3 * 16, 16});
  const Tensor w_o = ps.create("out_proj.weight", {16, 16});
  const Tensor ln_g = ps.create("ln.weight", {16});
  ag::init_uniform(w_qkv, 0.25f, 1);
  ag::init_uniform(w_o, 0.25f, 2);
  ag::init_constant(ln_g, 1.0f);
  ag::SGD opt(ps, 0.9f);
  ag::Graph graph;
  std::vector<float> xs(2 * 7 * 16);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 11) * 0.1f - 0.5f;
  const uint8_t pad[2 * 7] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  long per_step[4] = {};
  for (int step = 0; step < 4; ++step) {
    g_allocations = 0;
    g_armed = step >= 1;
    {
      ag::GraphScope scope(graph);
      const Tensor x = ag::from_data({2, 7, 16}, xs.data());
      ps.zero_grad();
      const Tensor qkv =
          ag::linear(ag::layernorm(x, ln_g, Tensor{}), w_qkv).reshape({2, 7, 3 * 2, 8});
      auto part = [&](int i) { return qkv.slice(2, 2 * i, 2 * i + 2).permute({0, 2, 1, 3}); };
      ag::SdpaOptions so;
      so.causal = true;
      so.key_padding = pad;
      const Tensor att = ag::scaled_dot_product_attention(part(0), part(1), part(2), so);
      // The materialising path too: scores, causal row-masked softmax, weighted values.
      const Tensor scores = ag::matmul(part(0), part(1), false, true);
      kernels::RowMask rm;
      rm.causal = true;
      rm.rows_per_matrix = 7;
      const Tensor p = ag::softmax_masked(ag::scale(scores, 0.35f), rm);
      const Tensor att2 = ag::matmul(p, part(2));
      const Tensor merged =
          ag::add(att, att2).permute({0, 2, 1, 3}).contiguous().reshape({2, 7, 16});
      graph.backward(ag::mean_all(ag::mul(ag::linear(merged, w_o), x)));
      opt.step(1e-2f);
      graph.reset();
    }
    g_armed = false;
    per_step[step] = g_allocations.load();
  }
  CHECK(per_step[1] == 0);
  CHECK(per_step[2] == 0);
  CHECK(per_step[3] == 0);
}

TEST_CASE("the allocation counter sees allocations (the test above can fail)") {
  g_allocations = 0;
  g_armed = true;
  {
    ag::Graph graph;  // a fresh graph must allocate its first arena block
    ag::GraphScope scope(graph);
    const Tensor t = ag::zeros({8});
    CHECK(t.numel() == 8);
  }
  g_armed = false;
  CHECK(g_allocations.load() >= 2);
}
