// Unzeroed gradient slots (GradSlot::fresh, TensorNode::assigns): a backward that writes
// every element of an input's gradient may receive that slot without a memset when it is
// the first writer. These tests run each graph twice in one Graph, so the recycled
// gradient region holds the first step's values: a slot handed out unzeroed where the
// rules forbid it shows up as a wrong gradient.
#include <doctest/doctest.h>

#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"

using namespace attnfc;
using ag::Tensor;

namespace {

std::vector<float> ramp(int64_t n, float start, float step) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + step * static_cast<float>(i);
  return v;
}

// Runs `loss_of(x)` twice (x = p * c, an op output with a lazy gradient slot) and
// returns p's gradient after the second backward.
template <class Loss>
std::vector<float> grad_after_two_steps(const ag::Shape& shape, Loss loss_of) {
  ag::ParameterSet ps;
  const Tensor p = ps.create("p", shape);
  const std::vector<float> init = ramp(p.numel(), 0.5f, 0.25f);
  std::copy(init.begin(), init.end(), p.data());
  const std::vector<float> c = ramp(p.numel(), -1.5f, 0.5f);
  ag::Graph g;
  for (int step = 0; step < 2; ++step) {
    g.reset();
    ps.zero_grad();
    ag::GraphScope scope(g);
    const Tensor x = ag::mul(p, ag::from_data(shape, c.data()));
    g.backward(loss_of(x));
  }
  return {p.grad(), p.grad() + p.numel()};
}

}  // namespace

TEST_CASE("fresh slots: an input used twice by one node is zeroed, not assigned twice") {
  // z = x + x: both of add's operands are x's slot; assigning it (as a lone operand of the
  // output's shape may) would keep one term. dL/dp = 2 * w * c.
  const ag::Shape shape{5, 7};
  const std::vector<float> w = ramp(35, 1.0f, -0.125f), c = ramp(35, -1.5f, 0.5f);
  const std::vector<float> got = grad_after_two_steps(shape, [&](const Tensor& x) {
    return ag::sum_all(ag::mul(ag::add(x, x), ag::from_data(shape, w.data())));
  });
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == 2.0f * w[i] * c[i]);
}

TEST_CASE("fresh slots: a view covering part of a slot gets it zeroed") {
  // Only rows 0..1 of x [4, 6] reach the loss, through a contiguous view at offset 0 that
  // add would otherwise assign whole; rows 2..3 of x's gradient must be 0, not the first
  // step's values left in the recycled region.
  const ag::Shape shape{4, 6}, part{2, 6};
  const std::vector<float> w = ramp(12, 2.0f, 0.5f), c = ramp(24, -1.5f, 0.5f);
  const std::vector<float> other = ramp(12, 0.3f, 0.1f);
  const std::vector<float> got = grad_after_two_steps(shape, [&](const Tensor& x) {
    const Tensor z = ag::add(x.slice(0, 0, 2), ag::from_data(part, other.data()));
    return ag::sum_all(ag::mul(z, ag::from_data(part, w.data())));
  });
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == (i < 12 ? w[i] * c[i] : 0.0f));
  }
}

TEST_CASE("fresh slots: a lone operand of the output's shape is assigned, exactly") {
  // z = x + b with b broadcast [7]: x's slot comes unzeroed to add's backward, which
  // writes each element once; b's gradient is a reduction and is zeroed as always.
  const ag::Shape shape{5, 7};
  const std::vector<float> w = ramp(35, 0.75f, 0.0625f), c = ramp(35, -1.5f, 0.5f);
  const std::vector<float> bias = ramp(7, 0.1f, 0.1f);
  const std::vector<float> got = grad_after_two_steps(shape, [&](const Tensor& x) {
    const Tensor z = ag::add(x, ag::from_data({7}, bias.data()));
    return ag::sum_all(ag::mul(z, ag::from_data(shape, w.data())));
  });
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == w[i] * c[i]);
}
