// Full-model gradient check: the analytic gradient of the training loss with
// respect to every parameter tensor against central differences.
//
// Tolerance: the model runs in float32; the loss is summed in double. With step
// h = 1e-2 on O(1) weights, the float rounding in the loss (about 1e-7 of an O(1)
// loss) contributes 1e-7 / h = 1e-5 to a difference quotient, and the O(h^2)
// truncation about 1e-4 of the third derivative; so we demand agreement within
// 2e-3 absolute + 2e-2 relative per entry. A backward that drops a term, or a
// wrong sign, misses by far more (the tampering case below proves the check bites).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::ModelConfig;
using model::PatchTransformer;

namespace {

struct GradFixture {
  ModelConfig cfg;
  ag::ParameterSet params;
  PatchTransformer model;
  std::vector<float> window, observed;
  int64_t B = 3;
  model::ForwardOptions options;  // dropout's masks are fixed by the seed: still differentiable

  explicit GradFixture(const ModelConfig& c) : cfg(c), model(c, params, 11) {
    model_test::randomize(params, 5);
    const int64_t T = cfg.context_length + cfg.horizon, C = cfg.token_channels();
    window = model_test::make_series(B * T, C, 3);
    observed.assign(window.size(), 1.0f);
    observed[1] = 0.0f;  // a missing context value and a missing target
    observed[observed.size() - 2] = 0.0f;
  }

  double loss_value() {
    ag::Graph g;
    ag::GraphScope scope(g);
    const int64_t C = cfg.token_channels();
    SampleBuffers s =
        model_test::samples_from_windows(window, B, cfg.context_length, cfg.horizon, C, &observed);
    model_test::add_known(s, cfg, 9);
    return model.loss(s.view(B), options).item();
  }

  void analytic() {
    params.zero_grad();
    ag::Graph g;
    ag::GraphScope scope(g);
    const int64_t C = cfg.token_channels();
    SampleBuffers s =
        model_test::samples_from_windows(window, B, cfg.context_length, cfg.horizon, C, &observed);
    model_test::add_known(s, cfg, 9);
    g.backward(model.loss(s.view(B), options));
  }
};

// Returns the worst violation ratio |a - n| / (abs_tol + rel_tol |n|) over a sample of
// entries of every parameter (> 1 means the check fails), and names the parameter.
// h: the central difference's step. The pinball loss is piecewise linear, so its numeric
// derivative is exact unless a prediction crosses its target within +-h; the quantile
// cases take smaller steps to make that rare. (At 1e-3 a shortcut weight, which moves
// every level of a step at once, did cross a kink: 10% off, right again at 1e-4, where the
// float rounding of the loss adds about 1e-3, still inside abs_tol.)
double worst_violation(GradFixture& f, std::string* where, const char* tamper = nullptr,
                       double h = 1e-2) {
  f.analytic();
  const double abs_tol = 2e-3, rel_tol = 2e-2;
  double worst = 0;
  for (const auto& p : f.params.all()) {
    const int64_t n = p.tensor.numel();
    const int64_t stride = std::max<int64_t>(1, n / 6);  // about 6 entries per tensor
    for (int64_t i = 0; i < n; i += stride) {
      float* x = p.tensor.data() + i;
      const float saved = *x;
      *x = saved + static_cast<float>(h);
      const double up = f.loss_value();
      *x = saved - static_cast<float>(h);
      const double down = f.loss_value();
      *x = saved;
      const double numeric = (up - down) / (2 * h);
      double analytic = p.tensor.grad()[i];
      if (tamper && p.name == tamper && i == 0) analytic = analytic * 1.5 + 0.01;
      const double v = std::fabs(analytic - numeric) / (abs_tol + rel_tol * std::fabs(numeric));
      if (v > worst) {
        worst = v;
        *where = p.name + "[" + std::to_string(i) + "]: analytic " + std::to_string(analytic) +
                 ", numeric " + std::to_string(numeric);
      }
    }
  }
  return worst;
}

// Every parameter's analytic gradient against central differences (worst_violation <= 1).
void check_gradients(const ModelConfig& c) {
  GradFixture f(c);
  std::string where;
  const double v = worst_violation(f, &where);
  INFO(where);
  CHECK(v <= 1.0);
}

}  // namespace

TEST_CASE("model gradcheck: default architecture (causal norm, delta target, all positions)") {
  check_gradients(model_test::micro_config());
}

TEST_CASE("model gradcheck: mlp embedding, learned positions, instance norm, last position") {
  ModelConfig c = model_test::micro_config();
  c.embedding = model::PatchEmbedding::kResidualMlp;
  c.positional = model::PositionalEncoding::kLearned;
  c.norm = model::InputNorm::kInstance;
  c.loss_positions = model::LossPositions::kLast;
  c.target = model::HeadTarget::kValue;
  c.loss = model::LossKind::kHuber;
  c.huber_delta = 0.5f;
  check_gradients(c);
}

TEST_CASE("model gradcheck: mixed channels, point tokens (P = 1)") {
  ModelConfig c = model_test::micro_config();
  c.channel_mode = ChannelMode::kMixed;
  c.channels = 2;
  c.patch_len = 1;
  c.context_length = 5;
  c.n_layers = 1;
  c.positional = model::PositionalEncoding::kNone;
  check_gradients(c);
}

TEST_CASE("model gradcheck: linear shortcut (lookback shorter and longer than the context)") {
  for (int lookback : {5, 12}) {  // 12 > context_length: every position is padded in front
    CAPTURE(lookback);
    ModelConfig c = model_test::micro_config();
    c.linear_lookback = lookback;
    check_gradients(c);
  }
}

TEST_CASE("model gradcheck: overlapping patches (stride 1 and 2 of 4) with the linear shortcut") {
  for (int stride : {1, 2}) {
    CAPTURE(stride);
    ModelConfig c = model_test::micro_config();
    c.patch_len = 4;
    c.patch_stride = stride;
    c.linear_lookback = 6;
    check_gradients(c);
  }
}

TEST_CASE("model gradcheck: cross-attention decoder with known, numeric and categorical inputs") {
  // Every decoder parameter (step embedding, known and static projections, both category
  // tables, cross-attention, feed-forward, norms) and the encoder beneath it; B = 3 samples
  // share category rows, so the lookup's backward must sum them. Two decoder layers, the
  // linear shortcut beside it, and dropout on.
  ModelConfig c = model_test::micro_cross_config();
  c.decoder_layers = 2;
  c.linear_lookback = 5;
  c.dropout = 0.2f;
  GradFixture f(c);
  f.options = model::ForwardOptions{true, 77};
  std::string where;
  const double v = worst_violation(f, &where);
  INFO(where);
  CHECK(v <= 1.0);
  CHECK(worst_violation(f, &where, "decoder.static_embedding.1") > 1.0);
  ModelConfig m = model_test::micro_cross_config();  // mixed channels, a past covariate
  m.channel_mode = ChannelMode::kMixed;
  m.channels = 2;
  m.target_channels = 1;
  m.static_categories.clear();
  GradFixture fm(m);
  CHECK(worst_violation(fm, &where) <= 1.0);
}

TEST_CASE("model gradcheck: quantile head (non-crossing map, pinball loss over levels)") {
  // Levels below and above the median, the linear shortcut shifting every level, all
  // positions; then the cross-attention decoder's per-step quantile head.
  ModelConfig c = model_test::micro_config();
  c.quantiles = {0.05f, 0.25f, 0.5f, 0.8f};
  c.linear_lookback = 5;
  GradFixture f(c);
  std::string where;
  double v = worst_violation(f, &where, nullptr, 1e-4);
  INFO(where);
  CHECK(v <= 1.0);
  CHECK(worst_violation(f, &where, "head.weight", 1e-3) > 1.0);
  // The other levels trained at the last position only (the median's head rows at every
  // position, the whole head at the last: two products sharing the weight).
  c.quantile_positions = model::LossPositions::kLast;
  GradFixture fl(c);
  v = worst_violation(fl, &where, nullptr, 1e-4);
  INFO(where);
  CHECK(v <= 1.0);
  CHECK(worst_violation(fl, &where, "head.weight", 1e-3) > 1.0);
  // The same with mixed channels (a token of C = 2 channels, H C values per level).
  ModelConfig mixed = c;
  mixed.linear_lookback = 0;
  mixed.channel_mode = ChannelMode::kMixed;
  mixed.channels = 2;
  GradFixture fm(mixed);
  v = worst_violation(fm, &where, nullptr, 1e-4);
  INFO(where);
  CHECK(v <= 1.0);
  ModelConfig x = model_test::micro_cross_config();
  x.quantiles = {0.1f, 0.5f, 0.9f};
  GradFixture fx(x);
  v = worst_violation(fx, &where, nullptr, 1e-3);
  INFO(where);
  CHECK(v <= 1.0);
}

TEST_CASE("model gradcheck: a wrong gradient is caught") {
  GradFixture f(model_test::micro_config());
  std::string where;
  CHECK(worst_violation(f, &where, "blocks.0.ff_in.weight") > 1.0);
  CHECK(where.find("blocks.0.ff_in.weight[0]") == 0);
}

TEST_CASE("model gradcheck: linear embedding, learned positions, dropout on") {
  // The fused embedding/positions/dropout, LayerNorm and residual-dropout ops with their
  // dropout masks on; the loss is a fixed function of the weights for a fixed seed.
  ModelConfig c = model_test::micro_config();
  c.positional = model::PositionalEncoding::kLearned;
  c.dropout = 0.3f;
  GradFixture f(c);
  f.options = model::ForwardOptions{true, 77};
  std::string where;
  const double v = worst_violation(f, &where);
  INFO(where);
  CHECK(v <= 1.0);
  CHECK(worst_violation(f, &where, "pos_embedding") > 1.0);
  // The fused ops run only while recording; without a tape the model composes the unfused
  // ops, and the two give the same loss bits.
  double untaped = 0;
  {
    ag::NoGradScope no_grad;
    untaped = f.loss_value();
  }
  CHECK(untaped == f.loss_value());
}
