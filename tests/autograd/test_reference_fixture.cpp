// Loss trajectories pinned against tests/autograd/reference_trajectories.json, which
// scripts/make_autograd_reference.py computes by hand in double-precision Python
// (independent of this engine). Inputs and initial parameters come from the fixture.
// Observed agreement is ~1e-7 (float rounding); the tolerance is 1e-6.
#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/autograd/parameters.hpp"

using namespace attnfc;
using ag::Tensor;
using nlohmann::json;

namespace {
json load_fixture() {
  const std::string path =
      std::string(ATTNFC_SOURCE_DIR) + "/tests/autograd/reference_trajectories.json";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open ", path);
  return json::parse(in);
}

// Runs the fixture's MLP (n_in -> hidden -> 1, tanh, MSE) and returns the loss
// before each of `steps` optimiser steps.
std::vector<double> run_fixture(const json& f,
                                ag::Optimizer* (*make)(ag::ParameterSet&, const json&), int steps) {
  const int n_in = f["n_in"], hidden = f["hidden"];
  const std::vector<float> xs = f["x"].get<std::vector<float>>();
  const std::vector<float> ys = f["y"].get<std::vector<float>>();
  const int n = static_cast<int>(ys.size());
  ag::ParameterSet ps;
  const Tensor w1 = ps.create("w1", {hidden, n_in}), b1 = ps.create("b1", {hidden});
  const Tensor w2 = ps.create("w2", {1, hidden}), b2 = ps.create("b2", {1});
  for (const auto& [name, t] : {std::pair{"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}}) {
    const std::vector<float> v = f["params"][name].get<std::vector<float>>();
    REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
    std::copy(v.begin(), v.end(), t.data());
  }
  std::unique_ptr<ag::Optimizer> opt(make(ps, f));
  const float lr = f["lr"];
  ag::Graph g;
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    ag::GraphScope scope(g);
    ps.zero_grad();
    const Tensor x = ag::from_data({n, n_in}, xs.data()), y = ag::from_data({n, 1}, ys.data());
    const Tensor loss = ag::mse_loss(ag::linear(ag::tanh(ag::linear(x, w1, b1)), w2, b2), y);
    g.backward(loss);
    opt->step(lr);
    losses.push_back(loss.item());
    g.reset();
  }
  return losses;
}
}  // namespace

TEST_CASE("fixture: sine MLP with SGD momentum follows the Python reference") {
  const json f = load_fixture()["sine_sgd"];
  const std::vector<double> want = f["losses"].get<std::vector<double>>();
  const std::vector<double> got = run_fixture(
      f,
      [](ag::ParameterSet& ps, const json& j) -> ag::Optimizer* {
        return new ag::SGD(ps, j["momentum"].get<float>());
      },
      static_cast<int>(want.size()));
  REQUIRE(want.size() == 10);
  for (size_t s = 0; s < want.size(); ++s) {
    CAPTURE(s);
    CHECK(got[s] == doctest::Approx(want[s]).epsilon(1e-6));
  }
}

TEST_CASE("fixture: XOR MLP with Adam follows the Python reference") {
  const json f = load_fixture()["xor_adam"];
  const std::vector<double> want = f["losses"].get<std::vector<double>>();
  const std::vector<double> got = run_fixture(
      f,
      [](ag::ParameterSet& ps, const json& j) -> ag::Optimizer* {
        return new ag::AdamW(ps, j["beta1"].get<float>(), j["beta2"].get<float>(),
                             j["eps"].get<float>(), 0.0f);
      },
      static_cast<int>(want.size()));
  REQUIRE(want.size() == 10);
  for (size_t s = 0; s < want.size(); ++s) {
    CAPTURE(s);
    CHECK(got[s] == doctest::Approx(want[s]).epsilon(1e-6));
  }
}
