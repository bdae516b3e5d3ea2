// End to end on the engine: 120 AdamW steps on a noisy daily-cycle series
// must beat the naive forecast (repeat the last value) by a wide margin on windows
// the model never trained on. A broken gradient, optimiser or de-normalisation fails.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "model_test_util.hpp"

using namespace attnfc;

TEST_CASE("training: the model learns a seasonal series far better than the naive forecast") {
  model::ModelConfig c;
  c.context_length = 48;
  c.patch_len = 4;
  c.horizon = 12;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_layers = 1;
  c.dropout = 0.0f;
  const int64_t rows = 600, L = c.context_length, H = c.horizon, T = L + H, B = 16;
  std::vector<float> y(rows);
  for (int64_t t = 0; t < rows; ++t) {
    y[t] = static_cast<float>(2.0 * std::sin(2 * M_PI * t / 24.0) + 0.01 * t) +
           0.1f * kernels::random_normal(3, static_cast<uint64_t>(t));
  }
  const int64_t train_end = 450;  // windows starting before train_end - T train; the rest test
  ag::ParameterSet params;
  model::PatchTransformer m(c, params, 1);
  ag::AdamW opt(params, 0.9f, 0.999f, 1e-8f, 0.0f);
  ag::Graph g;
  std::vector<float> batch(static_cast<size_t>(B * T));
  for (int step = 0; step < 120; ++step) {
    for (int64_t b = 0; b < B; ++b) {
      const int64_t start = kernels::random_bits(step, b) % (train_end - T + 1);
      std::copy(y.begin() + start, y.begin() + start + T, batch.begin() + b * T);
    }
    g.reset();
    ag::GraphScope scope(g);
    params.zero_grad();
    g.backward(
        m.loss(model_test::samples_from_windows(batch, B, c.context_length, c.horizon, 1).view(B)));
    opt.step(3e-3f);
  }
  double model_se = 0, naive_se = 0;
  std::vector<float> contexts;
  int64_t windows = 0;
  for (int64_t s = train_end; s + T <= rows; s += 3, ++windows) {
    contexts.insert(contexts.end(), y.begin() + s, y.begin() + s + L);
  }
  const std::vector<float> f = m.forecast(contexts.data(), nullptr, windows, L, 0);
  for (int64_t w = 0; w < windows; ++w) {
    const int64_t s = train_end + 3 * w;
    for (int64_t h = 0; h < H; ++h) {
      const double truth = y[s + L + h];
      model_se += (f[w * H + h] - truth) * (f[w * H + h] - truth);
      naive_se += (y[s + L - 1] - truth) * (y[s + L - 1] - truth);
    }
  }
  INFO("model MSE " << model_se / (windows * H) << ", naive MSE " << naive_se / (windows * H));
  CHECK(model_se < 0.2 * naive_se);
}
