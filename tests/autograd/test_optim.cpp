// Optimisers against hand-written double-precision updates (PyTorch semantics),
// state round trips (a resumed run is bit-identical), and gradient clipping.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "attnfc/autograd/optim.hpp"
#include "attnfc/base/error.hpp"

using namespace attnfc;
using ag::Tensor;

namespace {
// A deterministic "gradient" that depends on the parameters, so trajectories diverge
// if any update differs.
void fake_backward(ag::ParameterSet& ps) {
  for (const ag::NamedTensor& p : ps.all()) {
    for (int64_t i = 0; i < p.tensor.numel(); ++i) {
      p.tensor.grad()[i] = std::sin(3.0f * p.tensor.data()[i]) + 0.1f * static_cast<float>(i);
    }
  }
}

void make_params(ag::ParameterSet& ps) {
  ag::init_uniform(ps.create("a", {3, 7}), 1.0f, 1);
  ag::init_uniform(ps.create("b", {33}), 1.0f, 2);
  ag::init_uniform(ps.create("c", {1}), 1.0f, 3);
  // Larger than AdamW's piece of 2^14 elements, and the set large enough to update in
  // parallel: pieces of one tensor, and of several, share one region.
  ag::init_uniform(ps.create("d", {40001}), 1.0f, 4);
}

std::vector<float> flat(const ag::ParameterSet& ps) {
  std::vector<float> v;
  for (const ag::NamedTensor& p : ps.all())
    v.insert(v.end(), p.tensor.data(), p.tensor.data() + p.tensor.numel());
  return v;
}

enum class Kind { Sgd, Adam, AdamW, AdamL2 };
std::unique_ptr<ag::Optimizer> make_opt(Kind k, ag::ParameterSet& ps) {
  switch (k) {
    case Kind::Sgd:
      return std::make_unique<ag::SGD>(ps, 0.9f, 0.01f);
    case Kind::Adam:
      return std::make_unique<ag::AdamW>(ps, 0.9f, 0.999f, 1e-8f, 0.0f);
    case Kind::AdamW:
      return std::make_unique<ag::AdamW>(ps, 0.8f, 0.99f, 1e-6f, 0.1f, true);
    case Kind::AdamL2:
      return std::make_unique<ag::AdamW>(ps, 0.8f, 0.99f, 1e-6f, 0.1f, false);
  }
  return nullptr;
}
}  // namespace

TEST_CASE("optimisers match hand-written double-precision updates") {
  for (Kind kind : {Kind::Sgd, Kind::Adam, Kind::AdamW, Kind::AdamL2}) {
    CAPTURE(static_cast<int>(kind));
    ag::ParameterSet ps;
    make_params(ps);
    const std::vector<float> init = flat(ps);
    std::vector<double> p(init.begin(), init.end()), m(p.size()), v(p.size());
    auto opt = make_opt(kind, ps);
    const double lr = 0.05, wd = kind == Kind::Sgd ? 0.01 : 0.1;
    const double b1 = kind == Kind::Adam ? 0.9 : 0.8, b2 = kind == Kind::Adam ? 0.999 : 0.99;
    const double eps = kind == Kind::Adam ? 1e-8 : 1e-6;
    for (int t = 1; t <= 5; ++t) {
      fake_backward(ps);
      std::vector<double> g;
      for (const ag::NamedTensor& q : ps.all())
        g.insert(g.end(), q.tensor.grad(), q.tensor.grad() + q.tensor.numel());
      for (size_t i = 0; i < p.size(); ++i) {
        if (kind == Kind::Sgd) {
          m[i] = 0.9 * m[i] + (g[i] + wd * p[i]);
          p[i] -= lr * m[i];
          continue;
        }
        const double gi = kind == Kind::AdamL2 ? g[i] + wd * p[i] : g[i];
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        const double step =
            (m[i] / (1 - std::pow(b1, t))) / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
        p[i] -= lr * (step + (kind == Kind::AdamW ? wd * p[i] : 0.0));
      }
      opt->step(static_cast<float>(lr));
      // Continue the reference from the engine's float parameters, so each step is
      // compared on its own (float rounding does not compound).
      const std::vector<float> got = flat(ps);
      for (size_t i = 0; i < p.size(); ++i) {
        REQUIRE(got[i] == doctest::Approx(p[i]).epsilon(1e-5));
        p[i] = got[i];
      }
    }
    CHECK(opt->steps_taken() == 5);
  }
}

TEST_CASE("resuming from saved optimiser state is bit-identical to an uninterrupted run") {
  for (Kind kind : {Kind::Sgd, Kind::AdamW, Kind::AdamL2}) {
    CAPTURE(static_cast<int>(kind));
    ag::ParameterSet full;
    make_params(full);
    auto opt_full = make_opt(kind, full);
    for (int t = 0; t < 6; ++t) {
      fake_backward(full);
      opt_full->step(0.03f);
    }
    ag::ParameterSet first;
    make_params(first);
    auto opt_first = make_opt(kind, first);
    for (int t = 0; t < 3; ++t) {
      fake_backward(first);
      opt_first->step(0.03f);
    }
    const std::vector<ag::StateTensor> saved = opt_first->state();
    const std::vector<float> saved_params = flat(first);
    // A fresh process: new parameters (loaded from the "checkpoint") and a new optimiser.
    ag::ParameterSet resumed;
    make_params(resumed);
    size_t off = 0;
    for (const ag::NamedTensor& p : resumed.all()) {
      std::memcpy(p.tensor.data(), saved_params.data() + off, sizeof(float) * p.tensor.numel());
      off += static_cast<size_t>(p.tensor.numel());
    }
    auto opt_resumed = make_opt(kind, resumed);
    opt_resumed->load_state(saved);
    CHECK(opt_resumed->steps_taken() == 3);
    for (int t = 0; t < 3; ++t) {
      fake_backward(resumed);
      opt_resumed->step(0.03f);
    }
    const std::vector<float> a = flat(full), b = flat(resumed);
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    // Without the state the run differs (the test can fail).
    ag::ParameterSet cold;
    make_params(cold);
    off = 0;
    for (const ag::NamedTensor& p : cold.all()) {
      std::memcpy(p.tensor.data(), saved_params.data() + off, sizeof(float) * p.tensor.numel());
      off += static_cast<size_t>(p.tensor.numel());
    }
    auto opt_cold = make_opt(kind, cold);
    for (int t = 0; t < 3; ++t) {
      fake_backward(cold);
      opt_cold->step(0.03f);
    }
    const std::vector<float> c = flat(cold);
    CHECK(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) != 0);
  }
}

TEST_CASE("load_state rejects state from another model or optimiser") {
  ag::ParameterSet ps;
  make_params(ps);
  ag::AdamW adam(ps);
  ag::SGD sgd(ps, 0.9f);
  std::vector<ag::StateTensor> s = adam.state();
  CHECK(s.size() == 9);  // m and v of four parameters, and the step count
  CHECK_THROWS_AS(sgd.load_state(s), InputError);
  std::vector<ag::StateTensor> wrong_size = s;
  wrong_size[0].values.pop_back();
  CHECK_THROWS_AS(adam.load_state(wrong_size), InputError);
  std::vector<ag::StateTensor> extra = s;
  extra.push_back(ag::StateTensor{"adamw.m.unknown", {1.0f}});
  CHECK_THROWS_AS(adam.load_state(extra), InputError);
  std::vector<ag::StateTensor> missing(s.begin() + 1, s.end());
  CHECK_THROWS_AS(adam.load_state(missing), InputError);
  // The step count survives exactly even beyond float's 2^24 integer range.
  std::vector<ag::StateTensor> big = s;
  big.back().values = {3.0f, 5.0f};
  adam.load_state(big);
  CHECK(adam.steps_taken() == (int64_t{3} << 24) + 5);
  CHECK(adam.state().back().values == std::vector<float>{3.0f, 5.0f});
}

TEST_CASE("clip_grad_norm: global L2 norm, PyTorch's scaling rule, NaN passes through") {
  ag::ParameterSet ps;
  const Tensor a = ps.create("a", {2});
  const Tensor b = ps.create("b", {1});
  a.grad()[0] = 3.0f;
  a.grad()[1] = 4.0f;
  b.grad()[0] = 12.0f;
  CHECK(ag::clip_grad_norm(ps, 100.0f) == doctest::Approx(13.0));
  CHECK(a.grad()[0] == 3.0f);  // below the limit: untouched
  CHECK(ag::clip_grad_norm(ps, 6.5f) == doctest::Approx(13.0));
  const double c = 6.5 / (13.0 + 1e-6);
  CHECK(a.grad()[1] == doctest::Approx(4.0 * c));
  CHECK(b.grad()[0] == doctest::Approx(12.0 * c));
  const double after =
      std::sqrt(a.grad()[0] * a.grad()[0] + a.grad()[1] * a.grad()[1] + b.grad()[0] * b.grad()[0]);
  CHECK(after == doctest::Approx(6.5).epsilon(1e-6));
  b.grad()[0] = std::numeric_limits<float>::quiet_NaN();
  const float before = a.grad()[0];
  CHECK(std::isnan(ag::clip_grad_norm(ps, 1.0f)));
  CHECK(a.grad()[0] == before);
  b.grad()[0] = std::numeric_limits<float>::infinity();
  CHECK(std::isinf(ag::clip_grad_norm(ps, 1.0f)));
}

TEST_CASE("AdamW learning-rate scale per parameter: 0 freezes, 0.25 scales the first step") {
  ag::ParameterSet ps;
  make_params(ps);
  ag::AdamW opt(ps, 0.9f, 0.999f, 1e-8f, 0.1f);
  CHECK(opt.set_lr_scale("a", 0.0f) == 1);
  CHECK(opt.set_lr_scale("b", 0.25f) == 1);
  CHECK(opt.set_lr_scale("nothing", 2.0f) == 0);
  CHECK_THROWS_AS(opt.set_lr_scale("c", -1.0f), std::invalid_argument);
  const std::vector<float> before = flat(ps);
  fake_backward(ps);
  opt.step(0.01f);
  const std::vector<float> after = flat(ps);
  // a [3, 7] is frozen: no update and no decay.
  for (size_t i = 0; i < 21; ++i) CHECK(after[i] == before[i]);
  // Adam's first step is lr * g / (|g| + eps) ~ +-lr, plus decay lr * wd * p: b moves a
  // quarter as far as c, which keeps scale 1.
  for (size_t i = 21; i < 54; ++i) {
    const double g = ps.all()[1].tensor.grad()[i - 21];
    const double expect = before[i] - 0.0025 * (before[i] * 0.1 + g / (std::fabs(g) + 1e-8));
    CHECK(after[i] == doctest::Approx(expect).epsilon(1e-5));
  }
  const double gc = ps.all()[2].tensor.grad()[0];
  CHECK(after[54] ==
        doctest::Approx(before[54] - 0.01 * (before[54] * 0.1 + gc / (std::fabs(gc) + 1e-8)))
            .epsilon(1e-5));
}
