// Same seed + same inputs -> bit-identical parameters after N training steps, at
// 1 and at 2 OpenMP threads. The model is a small pre-norm attention block with an
// MLP, dropout, AdamW and gradient clipping, sized so the parallel paths engage
// (the MLP's hidden activations exceed the elementwise parallel threshold).
#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/kernels/random.hpp"

using namespace attnfc;
using ag::Tensor;

namespace {
constexpr int B = 4, L = 32, D = 64, H = 4, F = 512;

struct RunResult {
  std::vector<float> params;
  std::vector<float> losses;
};

RunResult train(int threads, int steps) {
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
  ag::ParameterSet ps;
  const Tensor ln_g = ps.create("ln.weight", {D}), ln_b = ps.create("ln.bias", {D});
  const Tensor w_qkv = ps.create("attn.in_proj_weight", {3 * D, D});
  const Tensor b_qkv = ps.create("attn.in_proj_bias", {3 * D});
  const Tensor w_o = ps.create("attn.out_proj.weight", {D, D});
  const Tensor w_1 = ps.create("mlp.0.weight", {F, D}), b_1 = ps.create("mlp.0.bias", {F});
  const Tensor w_2 = ps.create("mlp.1.weight", {D, F});
  const Tensor head = ps.create("head.weight", {1, D});
  ag::init_constant(ln_g, 1.0f);
  ag::init_uniform(w_qkv, 0.09f, 1);
  ag::init_uniform(b_qkv, 0.05f, 2);
  ag::init_uniform(w_o, 0.09f, 3);
  ag::init_uniform(w_1, 0.09f, 4);
  ag::init_uniform(b_1, 0.05f, 5);
  ag::init_uniform(w_2, 0.04f, 6);
  ag::init_uniform(head, 0.09f, 7);
  std::vector<float> xs(B * L * D), ys(B * L);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 2.0f * kernels::random_uniform(11, i) - 1.0f;
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = kernels::random_normal(12, i);
  std::vector<uint8_t> pad(B * L, 0);
  pad[L - 1] = pad[2 * L - 1] = 1;
  ag::AdamW opt(ps, 0.9f, 0.999f, 1e-8f, 0.01f);
  ag::Graph g;
  RunResult r;
  for (int step = 0; step < steps; ++step) {
    ag::GraphScope scope(g);
    const Tensor x = ag::from_data({B, L, D}, xs.data());
    const Tensor y = ag::from_data({B, L, 1}, ys.data());
    ps.zero_grad();
    // Attention: q, k, v are strided views of one packed projection (no copies).
    const Tensor qkv =
        ag::linear(ag::layernorm(x, ln_g, ln_b), w_qkv, b_qkv).reshape({B, L, 3 * H, D / H});
    auto part = [&](int i) { return qkv.slice(2, i * H, (i + 1) * H).permute({0, 2, 1, 3}); };
    ag::SdpaOptions so;
    so.causal = true;
    so.key_padding = pad.data();
    const Tensor att = ag::scaled_dot_product_attention(part(0), part(1), part(2), so);
    const Tensor merged = att.permute({0, 2, 1, 3}).contiguous().reshape({B, L, D});
    const Tensor h = ag::add(x, ag::dropout(ag::linear(merged, w_o), 0.1f, 1000 + step, true));
    const Tensor m = ag::linear(ag::linear(h, w_1, b_1, kernels::Activation::GeluTanh), w_2);
    const Tensor out = ag::linear(ag::add(h, m), head);
    const Tensor loss = ag::huber_loss(out, y, 1.0f);
    g.backward(loss);
    ag::clip_grad_norm(ps, 1.0f);
    opt.step(3e-3f);
    r.losses.push_back(loss.item());
    g.reset();
  }
  for (const ag::NamedTensor& p : ps.all()) {
    r.params.insert(r.params.end(), p.tensor.data(), p.tensor.data() + p.tensor.numel());
  }
  omp_set_num_threads(saved_threads);
  return r;
}
}  // namespace

TEST_CASE("training is bit-identical at 1 and 2 threads") {
  const RunResult one = train(1, 4);
  const RunResult two = train(2, 4);
  const RunResult again = train(2, 4);
  REQUIRE(one.params.size() == two.params.size());
  CHECK(std::memcmp(one.params.data(), two.params.data(), one.params.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(two.params.data(), again.params.data(), two.params.size() * sizeof(float)) ==
        0);
  CHECK(one.losses == two.losses);
  // The run did train: the loss moved.
  CHECK(one.losses.back() != one.losses.front());
}
