// Fused ops that exist to save memory: feed_forward (two linears around a GELU, keeping
// only the pre-activation) and add_dropout (residual + dropout, not storing the branch).
// Each is checked by central differences and shown to give exactly the bits of the
// unfused composition, forward and gradients.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <vector>

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
std::vector<std::vector<float>> run(const std::vector<Tensor>& leaves,
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
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      kernels::set_threads(threads);
      const auto a = run(leaves, fused), b = run(leaves, unfused);
      for (size_t i = 0; i < a.size(); ++i) {
        CAPTURE(i);
        CHECK(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) == 0);
      }
    }
    kernels::set_threads(0);
  }
}
