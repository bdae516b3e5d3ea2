// The autograd engine's own cost: (1) bookkeeping per op on one-element tensors
// (forward + tape + backward, so kernels cost ~nothing), and (2) a whole training step
// of a pre-norm Transformer block at the model's scale, reported as ms per step and as
// effective GFLOP/s over the step's GEMM work (compare with bench_gemm to see how much
// of the step the kernels, not the engine, account for).
#include <cstdint>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "bench_util.hpp"

namespace ag = attnfc::ag;
namespace ak = attnfc::kernels;

namespace {

void bench_overhead(const bench::Options& opt) {
  const std::string name = "per op, 1-element tensors, forward+backward";
  if (!bench::selected(opt, name)) return;
  ag::ParameterSet ps;
  const ag::Tensor w = ps.create("w", {1});
  ag::init_constant(w, 0.5f);
  ag::Graph g;
  const int ops = 1000;
  const double t = bench::time_median(
      [&] {
        ag::GraphScope scope(g);
        ag::Tensor h = w;
        for (int i = 0; i < ops / 2; ++i) h = ag::tanh(ag::mul(h, w));
        g.backward(ag::sum_all(h));
        g.reset();
      },
      opt.min_seconds);
  bench::emit("autograd", name, "ns/op", t / ops * 1e9);
}

void bench_broadcast(const bench::Options& opt) {
  const std::string name = "broadcast add+mul [32,64,128] x [64,128], forward+backward";
  if (!bench::selected(opt, name)) return;
  ag::ParameterSet ps;
  const ag::Tensor pe = ps.create("pe", {64, 128}), sc = ps.create("scale", {32, 1, 128});
  ag::init_uniform(pe, 0.1f, 1);
  ag::init_uniform(sc, 0.1f, 2);
  std::vector<float> xs(32 * 64 * 128);
  bench::fill_random(xs.data(), xs.size(), 3);
  ag::Graph g;
  const double t = bench::time_median(
      [&] {
        ag::GraphScope scope(g);
        const ag::Tensor x = ag::from_data({32, 64, 128}, xs.data());
        g.backward(ag::sum_all(ag::mul(ag::add(x, pe), sc)));
        g.reset();
      },
      opt.min_seconds);
  bench::emit("autograd", name, "Gelem/s", static_cast<double>(xs.size()) / t * 1e-9);
}

void bench_block_step(const bench::Options& opt) {
  const int B = 32, L = 64, D = 128, H = 4, F = 4 * D;
  const std::string name = "transformer block step B=32 L=64 d=128 h=4 ffn=512";
  if (!bench::selected(opt, name)) return;
  ag::ParameterSet ps;
  const ag::Tensor ln1 = ps.create("ln1.weight", {D}), ln1b = ps.create("ln1.bias", {D});
  const ag::Tensor ln2 = ps.create("ln2.weight", {D}), ln2b = ps.create("ln2.bias", {D});
  const ag::Tensor wqkv = ps.create("attn.in_proj_weight", {3 * D, D});
  const ag::Tensor bqkv = ps.create("attn.in_proj_bias", {3 * D});
  const ag::Tensor wo = ps.create("attn.out_proj.weight", {D, D});
  const ag::Tensor bo = ps.create("attn.out_proj.bias", {D});
  const ag::Tensor w1 = ps.create("ffn.0.weight", {F, D}), b1 = ps.create("ffn.0.bias", {F});
  const ag::Tensor w2 = ps.create("ffn.1.weight", {D, F}), b2 = ps.create("ffn.1.bias", {D});
  ag::init_constant(ln1, 1.0f);
  ag::init_constant(ln2, 1.0f);
  uint64_t seed = 1;
  for (const ag::Tensor& t : {wqkv, wo, w1, w2}) ag::init_uniform(t, 0.08f, seed++);
  std::vector<float> xs(static_cast<size_t>(B) * L * D), ys(xs.size());
  bench::fill_random(xs.data(), xs.size(), 1);
  bench::fill_random(ys.data(), ys.size(), 2);
  ag::AdamW adam(ps);
  ag::Graph g;
  size_t nodes = 0;
  auto step = [&] {
    ag::GraphScope scope(g);
    const ag::Tensor x = ag::from_data({B, L, D}, xs.data());
    const ag::Tensor y = ag::from_data({B, L, D}, ys.data());
    ps.zero_grad();
    const ag::Tensor qkv =
        ag::linear(ag::layernorm(x, ln1, ln1b), wqkv, bqkv).reshape({B, L, 3 * H, D / H});
    auto part = [&](int i) { return qkv.slice(2, i * H, (i + 1) * H).permute({0, 2, 1, 3}); };
    ag::SdpaOptions so;
    so.causal = true;
    const ag::Tensor att = ag::scaled_dot_product_attention(part(0), part(1), part(2), so);
    const ag::Tensor merged = att.permute({0, 2, 1, 3}).contiguous().reshape({B, L, D});
    const ag::Tensor h = ag::add(x, ag::linear(merged, wo, bo));
    const ag::Tensor f = ag::linear(ag::layernorm(h, ln2, ln2b), w1, b1, ak::Activation::GeluTanh);
    const ag::Tensor out = ag::add(h, ag::linear(f, w2, b2));
    g.backward(ag::mse_loss(out, y));
    ag::clip_grad_norm(ps, 1.0f);
    adam.step(1e-3f);
    nodes = g.nodes();
    g.reset();
  };
  const double t = bench::time_median(step, opt.min_seconds);
  // GEMM work: forward 2*T*(in*out) per linear, backward twice that.
  const double T = static_cast<double>(B) * L;
  const double linear_flops = 2.0 * T * (3.0 * D * D + D * D + 2.0 * D * F) * 3.0;
  bench::emit("autograd", name, "ms/step", t * 1e3);
  bench::emit("autograd", name, "linear GFLOP/s", linear_flops / t * 1e-9);
  bench::emit("autograd", name, "tape nodes", static_cast<double>(nodes));
  bench::emit("autograd", name, "arena MiB", static_cast<double>(g.bytes_reserved()) / (1 << 20));
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt = bench::parse_args(argc, argv);
  bench_overhead(opt);
  bench_broadcast(opt);
  bench_block_step(opt);
  return 0;
}
