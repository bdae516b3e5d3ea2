// The trained head of `attnfc attention demo --train` (see attention_train.hpp): built
// from the nn layer's Linear and MultiHeadAttention, trained by the autograd engine and
// AdamW, the same code the forecaster runs.
#include "attention_train.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "../model/inputs.hpp"
#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/nn/attention.hpp"
#include "attnfc/nn/layers.hpp"

namespace attnfc::cli {

std::vector<float> toy_series(ProbeSeries kind, double period, int n, uint64_t seed) {
  std::vector<float> x(n);
  const double w = 2.0 * std::numbers::pi / period;
  for (int t = 0; t < n; ++t) {
    double v = 0;
    switch (kind) {
      case ProbeSeries::Sine:
        v = std::sin(w * t);
        break;
      case ProbeSeries::Trend:
        v = t / (4.0 * period) + std::sin(w * t);
        break;
      case ProbeSeries::Noise:
        v = kernels::random_normal(seed, static_cast<uint64_t>(t));
        break;
    }
    x[t] = static_cast<float>(v);
  }
  return x;
}

namespace {

constexpr int kSeriesLength = 1024;
constexpr int kWidth = 16;  // d_model of the head: value embedding + positions
constexpr int kBatch = 32;
constexpr float kLr = 3e-3f;

// token_t = W_e x_t + b_e + PE_t, then one causal head (learnable Q/K/V and W^O), then a
// linear read-out: the forecast of x_{t+1} from x_0..x_t.
struct Head {
  ag::ParameterSet params;
  nn::Linear embed, readout;
  nn::MultiHeadAttention attn;
  std::vector<float> positions;  // [L, kWidth] sinusoidal encoding
  int length;

  Head(int L, uint64_t seed) : length(L) {
    embed = nn::Linear(params, "embed", 1, kWidth, true, seed);
    attn = nn::MultiHeadAttention(params, "attn", kWidth, 1, true, seed + 1);
    readout = nn::Linear(params, "readout", kWidth, 1, true, seed + 2);
    positions.resize(static_cast<size_t>(L) * kWidth);
    model::detail::sinusoidal_table(L, kWidth, positions.data());  // the forecaster's table
  }

  // inputs [B, L] -> forecasts [B, L, 1]; *weights = [B, 1, L, L] when asked.
  ag::Tensor forward(const std::vector<float>& inputs, int B, ag::Tensor* weights) const {
    const ag::Tensor x = ag::from_data({B, length, 1}, inputs.data());
    const ag::Tensor pe = ag::from_data({length, kWidth}, positions.data());
    const ag::Tensor tokens = ag::add(embed.forward(x), pe);
    nn::AttentionMask causal;
    causal.causal = true;
    return readout.forward(attn.forward(tokens, causal, weights));
  }
};

// Inputs x[s .. s+L) and targets x[s+1 .. s+L] of each window start s.
void cut_windows(const std::vector<float>& x, const std::vector<int>& starts, int L,
                 std::vector<float>* inputs, std::vector<float>* targets) {
  inputs->clear();
  targets->clear();
  for (int s : starts) {
    inputs->insert(inputs->end(), x.begin() + s, x.begin() + s + L);
    targets->insert(targets->end(), x.begin() + s + 1, x.begin() + s + L + 1);
  }
}

// Scored positions: those whose value one period back is inside the window, so the
// seasonal-naive forecast and the head see the same history.
struct Scores {
  double model = 0, repeat_last = 0, seasonal_naive = 0;
  std::vector<float> weights;  // [L, L], mean over windows
};

Scores score(const Head& head, const std::vector<float>& x, const std::vector<int>& starts,
             int lag) {
  const int L = head.length, B = static_cast<int>(starts.size());
  std::vector<float> inputs, targets;
  cut_windows(x, starts, L, &inputs, &targets);
  ag::Graph g;
  ag::GraphScope scope(g);
  ag::NoGradScope no_grad;
  ag::Tensor w;
  const ag::Tensor pred = head.forward(inputs, B, &w);
  Scores s;
  s.weights.assign(static_cast<size_t>(L) * L, 0.0f);
  long n = 0;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < L; ++t) {
      for (int j = 0; j < L; ++j) s.weights[t * L + j] += w.data()[(b * L + t) * L + j] / B;
      if (t + 1 < lag) continue;
      const double y = targets[b * L + t];
      const double e_model = pred.data()[b * L + t] - y;
      const double e_last = inputs[b * L + t] - y;
      const double e_season = inputs[b * L + t + 1 - lag] - y;
      s.model += e_model * e_model;
      s.repeat_last += e_last * e_last;
      s.seasonal_naive += e_season * e_season;
      ++n;
    }
  }
  s.model /= n;
  s.repeat_last /= n;
  s.seasonal_naive /= n;
  return s;
}

void check(const TrainedHeadOptions& o, int L) {
  if (!(o.period >= 2.0) || o.period > kSeriesLength / 8)
    throw InputError("--period: expected 2.." + std::to_string(kSeriesLength / 8) + ", found " +
                     std::to_string(o.period));
  if (L < 2 || L > 64)
    throw InputError("--length: expected 2..64 with --train, found " + std::to_string(L));
  if (L < std::lround(o.period))
    throw InputError("--length: " + std::to_string(L) + " is shorter than the period " +
                     std::to_string(o.period) + ": the head could not see one period back");
  if (o.steps < 1 || o.steps > 100000)
    throw InputError("--steps: expected 1..100000, found " + std::to_string(o.steps));
}

}  // namespace

int dominant_lag_within(const LagProfile& p, int max_lag) {
  const int last = std::min(max_lag, static_cast<int>(p.lift.size()) - 1);
  double best = 0;
  for (int l = 1; l <= last; ++l) best = std::max(best, p.lift[l]);
  for (int l = 1; l <= last; ++l)
    if (best > 0 && p.lift[l] >= 0.98 * best) return l;
  return 0;
}

TrainedHead train_attention_head(const TrainedHeadOptions& o) {
  const int L =
      o.length > 0 ? o.length : std::min(64, std::max(16, static_cast<int>(3 * o.period)));
  check(o, L);
  const std::vector<float> x = toy_series(o.kind, o.period, kSeriesLength, o.seed);
  const int split = kSeriesLength * 4 / 5;  // windows wholly before it train, after it test
  const int lag = static_cast<int>(std::lround(o.period));
  std::vector<int> test_starts;
  for (int s = split; s + L + 1 <= kSeriesLength; ++s) test_starts.push_back(s);

  Head head(L, o.seed);
  TrainedHead r;
  r.length = L;
  r.width = kWidth;
  r.steps = o.steps;
  r.train_windows = split - L;
  r.test_windows = static_cast<int>(test_starts.size());
  const Scores before = score(head, x, test_starts, lag);
  r.mse_initial = before.model;
  r.initial = causal_lag_profile(before.weights.data(), L);

  ag::AdamW opt(head.params, 0.9f, 0.999f, 1e-8f, 0.0f);
  ag::Graph g;
  std::vector<int> starts(kBatch);
  std::vector<float> inputs, targets;
  for (int step = 0; step < o.steps; ++step) {
    for (int b = 0; b < kBatch; ++b) {
      const uint64_t draw =
          kernels::random_bits(o.seed + 7, static_cast<uint64_t>(step) * kBatch + b);
      starts[b] = static_cast<int>(draw % static_cast<uint64_t>(r.train_windows));
    }
    cut_windows(x, starts, L, &inputs, &targets);
    g.reset();
    ag::GraphScope scope(g);
    head.params.zero_grad();
    const ag::Tensor pred = head.forward(inputs, kBatch, nullptr);
    const ag::Tensor loss = ag::mse_loss(pred, ag::from_data({kBatch, L, 1}, targets.data()));
    g.backward(loss);
    opt.step(kLr);
  }
  const Scores after = score(head, x, test_starts, lag);
  r.mse_trained = after.model;
  r.mse_repeat_last = after.repeat_last;
  r.mse_seasonal_naive = after.seasonal_naive;
  r.weights = after.weights;
  r.trained = causal_lag_profile(after.weights.data(), L);
  r.dominant_lag = dominant_lag_within(r.trained, L / 2);
  r.initial_dominant_lag = dominant_lag_within(r.initial, L / 2);
  return r;
}

}  // namespace attnfc::cli
