// Where parameter gradients live (parameters.hpp). GradientRedirect: inside a scope, this
// thread's parameter gradients, views included, land in a packed buffer in set order; the
// set's own gradients and other threads are untouched; a gradient of another set is
// refused. A set without gradients (a model loaded to forecast) stores none.
#include <doctest/doctest.h>

#include <stdexcept>
#include <thread>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"

using namespace attnfc;
using ag::Tensor;

namespace {

// loss = sum(W x) + sum(b * [first two columns of W's row 0]): gradients through a matmul
// and through a strided view of a parameter.
Tensor loss_of(const ag::ParameterSet& set) {
  const Tensor W = set.find("W"), b = set.find("b");
  const std::vector<float> xv{0.5f, -1.0f, 2.0f, 0.25f, 3.0f, -0.5f};
  const Tensor x = ag::from_data({3, 2}, xv.data());
  const Tensor wx = ag::matmul(W, x);  // [2, 2]
  const Tensor row = W.slice(0, 0, 1).slice(1, 0, 2).reshape({2});
  return ag::add(ag::sum_all(wx), ag::sum_all(ag::mul(b, row)));
}

struct TwoParams {
  ag::ParameterSet set;
  TwoParams() {
    const Tensor b = set.create("b", {2});
    const Tensor W = set.create("W", {2, 3});
    ag::init_uniform(W, 1.0f, 3);
    ag::init_uniform(b, 1.0f, 4);
  }
  std::vector<float> own_grads() const {
    std::vector<float> out;
    for (const auto& p : set.all())
      out.insert(out.end(), p.tensor.grad(), p.tensor.grad() + p.tensor.numel());
    return out;
  }
};

}  // namespace

TEST_CASE("a redirected backward writes the packed buffer, in set order, and nothing else") {
  TwoParams m;
  ag::Graph g;
  {
    ag::GraphScope scope(g);
    g.backward(loss_of(m.set));
  }
  const std::vector<float> expected = m.own_grads();  // b's 2, then W's 6
  REQUIRE(expected.size() == 8);
  CHECK(expected[0] != 0.0f);  // the view's path reached b
  m.set.zero_grad();

  ag::GradientRedirect redirect(m.set);
  CHECK(redirect.floats() == 8);
  std::vector<float> packed(8, 0.0f);
  const float* seen_elsewhere = nullptr;
  {
    ag::Graph g2;
    ag::GraphScope scope(g2);
    ag::GradientRedirectScope to_packed(redirect, packed.data());
    CHECK(m.set.find("W").grad() == packed.data() + 2);
    CHECK(m.set.find("W").slice(1, 1, 3).grad() == packed.data() + 3);
    std::thread other([&] { seen_elsewhere = m.set.find("W").grad(); });
    other.join();
    g2.backward(loss_of(m.set));
  }
  CHECK(packed == expected);
  CHECK(m.own_grads() == std::vector<float>(8, 0.0f));
  CHECK(seen_elsewhere != nullptr);
  CHECK(seen_elsewhere != packed.data() + 2);          // another thread: the set's own storage
  CHECK(m.set.find("W").grad() != packed.data() + 2);  // the scope has ended
}

TEST_CASE("a redirect refuses a gradient outside its set") {
  TwoParams a, b;
  ag::GradientRedirect redirect(a.set);
  std::vector<float> packed(redirect.floats());
  ag::Graph g;
  ag::GraphScope scope(g);
  ag::GradientRedirectScope to_packed(redirect, packed.data());
  CHECK_THROWS_AS((void)b.set.find("W").grad(), std::logic_error);
}

TEST_CASE("a parameter set without gradients: weights only, nothing to backpropagate into") {
  ag::ParameterSet set(ag::ParameterSet::Gradients::kNone);
  const Tensor W = set.create("W", {2, 3});
  ag::init_uniform(W, 1.0f, 3);
  CHECK_FALSE(W.requires_grad());
  CHECK(W.grad() == nullptr);
  set.zero_grad();  // nothing to zero
  ag::Graph g;
  ag::GraphScope scope(g);
  const std::vector<float> xv(6, 1.0f);
  const Tensor y = ag::sum_all(ag::matmul(W, ag::from_data({3, 2}, xv.data())));
  CHECK_FALSE(y.requires_grad());
  CHECK(g.nodes() == 0);  // nothing recorded
  CHECK_THROWS_AS(g.backward(y), std::invalid_argument);
}
