// model.quantile_positions "last": the median trained at every position (weight 1), the other
// levels at the last one (weight 1/Q each). The loss must be exactly that formula, computed here
// from the model's own forecasts (every position's median by forward(), the last position's levels
// by forecast()), and its gradient must check (test_model_gradcheck covers "all").
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::ModelConfig;
using model::PatchTransformer;

namespace {

double pinball(double q, double u) {
  return std::max(q * u, (q - 1.0) * u);
}

// Loss of quantile_positions "last" from the model's forecasts: windows [B, L + H] (C = 1).
double expected_loss(const PatchTransformer& m, const std::vector<float>& windows, int64_t B) {
  const ModelConfig& c = m.config();
  const int64_t L = c.context_length, H = c.horizon, T = L + H, N = c.num_patches();
  const int64_t Q = c.levels(), mid = c.median_level();
  SampleBuffers s = model_test::samples_from_windows(windows, B, L, H, 1);
  std::vector<float> median;
  {
    ag::Graph g;
    ag::GraphScope scope(g);
    const ag::Tensor f = m.forward(s.view(B));  // [B, N, H]
    median.assign(f.data(), f.data() + f.numel());
  }
  std::vector<float> contexts(static_cast<size_t>(B * L)), levels;
  for (int64_t b = 0; b < B; ++b) std::copy_n(&windows[b * T], L, &contexts[b * L]);
  m.forecast(contexts.data(), nullptr, B, L, 0, {}, &levels);  // [B, H, Q]
  double med = 0, others = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t n = 0; n < N; ++n) {
        const double y = windows[b * T + c.patch_end(n) + h];
        med += pinball(0.5, y - median[(b * N + n) * H + h]);
      }
      const double y = windows[b * T + L + h];
      for (int64_t j = 0; j < Q; ++j)
        if (j != mid) others += pinball(c.quantiles[j], y - levels[(b * H + h) * Q + j]);
    }
  return med / static_cast<double>(B * N * H) +
         others / static_cast<double>(B * H) / static_cast<double>(Q);
}

}  // namespace

TEST_CASE("quantile_positions last: the median's loss at every position, the others' at the last") {
  ModelConfig c = model_test::micro_config();
  c.quantiles = {0.1f, 0.25f, 0.5f, 0.9f};
  for (int lookback : {0, 5}) {
    c.linear_lookback = lookback;
    c.quantile_positions = model::LossPositions::kLast;
    ag::ParameterSet params;
    PatchTransformer m(c, params, 2);
    model_test::randomize(params, 7);
    const int64_t B = 5, T = c.context_length + c.horizon;
    const std::vector<float> windows = model_test::make_series(B * T, 1, 4);
    SampleBuffers s = model_test::samples_from_windows(windows, B, c.context_length, c.horizon, 1);
    double loss = 0, all_positions = 0;
    {
      ag::Graph g;
      ag::GraphScope scope(g);
      loss = m.loss(s.view(B)).item();
    }
    const double want = expected_loss(m, windows, B);
    CAPTURE(lookback);
    CHECK(loss == doctest::Approx(want).epsilon(1e-5));
    // The same weights trained at every position give another loss: the switch is live.
    ModelConfig every = c;
    every.quantile_positions = model::LossPositions::kAll;
    ag::ParameterSet params_all;
    PatchTransformer m_all(every, params_all, 2);
    model_test::randomize(params_all, 7);
    {
      ag::Graph g;
      ag::GraphScope scope(g);
      all_positions = m_all.loss(s.view(B)).item();
    }
    CHECK(std::fabs(all_positions - want) > 1e-3 * std::fabs(want));
  }
}

TEST_CASE("quantile_positions last is refused without quantile levels or with last losses") {
  ModelConfig c = model_test::micro_config();
  c.quantile_positions = model::LossPositions::kLast;
  auto error_of = [](const ModelConfig& config) {
    try {
      config.validate();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(c).find("'model.quantile_positions': found \"last\" without") !=
        std::string::npos);
  c.quantiles = {0.1f, 0.5f, 0.9f};
  CHECK(error_of(c).empty());
  c.loss_positions = model::LossPositions::kLast;  // also what the decoder requires
  CHECK(error_of(c).find("'model.quantile_positions': found \"last\" with "
                         "model.loss_positions \"last\"") != std::string::npos);
}
