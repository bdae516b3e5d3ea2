// What the forecaster promises: causality, the untrained baseline, the two loss
// forms, forecasting with short/long/missing contexts, and rollout.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::ModelConfig;
using model::PatchTransformer;

namespace {

void check_causal(const ModelConfig& cfg) {
  ag::ParameterSet params;
  PatchTransformer m(cfg, params, 3);
  model_test::randomize(params, 8);
  const int64_t B = 2, L = cfg.context_length, C = cfg.token_channels(), P = cfg.patch_len;
  const int64_t S = cfg.stride();
  const int64_t N = cfg.num_patches(), per_pos = cfg.horizon * C;
  std::vector<float> ctx = model_test::make_series(B * L, C, 1);
  std::vector<float> obs(ctx.size(), 1.0f);
  const std::vector<float> base = model_test::forward_positions(m, ctx, B, {}, &obs);
  for (int64_t t = 0; t < L; ++t) {
    for (int kind = 0; kind < 2; ++kind) {  // change the value, or mark it missing
      std::vector<float> c2 = ctx, o2 = obs;
      const int64_t k = (1 * L + t) * C + (C - 1);  // window 1, last channel
      if (kind == 0)
        c2[k] += 5.0f;
      else
        o2[k] = 0.0f;
      const std::vector<float> out = model_test::forward_positions(m, c2, B, {}, &o2);
      // The first token whose steps reach t: tokens end at n S + P.
      const int64_t first_affected = t < P ? 0 : (t - P) / S + 1;
      // Window 0 is untouched; window 1 positions before the change are bit-identical.
      CHECK(std::memcmp(out.data(), base.data(), N * per_pos * sizeof(float)) == 0);
      const size_t w1 = static_cast<size_t>(N * per_pos);
      CHECK(std::memcmp(out.data() + w1, base.data() + w1,
                        first_affected * per_pos * sizeof(float)) == 0);
      // ... and the position that sees the change does react (the test can fail).
      bool changed = false;
      for (int64_t i = first_affected * per_pos; i < (first_affected + 1) * per_pos; ++i) {
        changed |= out[w1 + i] != base[w1 + i];
      }
      CHECK(changed);
    }
  }
}

}  // namespace

TEST_CASE("causality: changing a future value changes no earlier position") {
  ModelConfig c = model_test::micro_config();
  SUBCASE("causal norm, delta target") {
    check_causal(c);
  }
  SUBCASE("no norm, value target, learned positions, mlp embedding") {
    c.norm = model::InputNorm::kNone;
    c.target = model::HeadTarget::kValue;
    c.positional = model::PositionalEncoding::kLearned;
    c.embedding = model::PatchEmbedding::kResidualMlp;
    check_causal(c);
  }
  SUBCASE("linear shortcut longer than one patch") {
    c.linear_lookback = 5;
    check_causal(c);
  }
  SUBCASE("overlapping patches (stride 2 of 4), linear shortcut") {
    c.patch_len = 4;
    c.patch_stride = 2;
    c.context_length = 12;
    c.linear_lookback = 6;
    check_causal(c);
  }
  SUBCASE("overlapping patches (stride 1 of 3), instance norm on the last position") {
    c.patch_len = 3;
    c.patch_stride = 1;
    c.norm = model::InputNorm::kNone;
    check_causal(c);
  }
  SUBCASE("mixed channels, P = 1") {
    c.channel_mode = ChannelMode::kMixed;
    c.channels = 3;
    c.patch_len = 1;
    c.context_length = 6;
    check_causal(c);
  }
}

TEST_CASE("untrained model forecasts the last observed value (zero head)") {
  ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 1);
  std::vector<float> ctx = {1, 2, 3, 4, 5, 6, 7, 8.5f};
  const std::vector<float> f = m.forecast(ctx);
  REQUIRE(f.size() == 3);
  for (float v : f) CHECK(v == 8.5f);
  // A missing last step: the last observed value is used instead.
  const uint8_t obs[8] = {1, 1, 1, 1, 1, 1, 1, 0};
  const std::vector<float> g = m.forecast(ctx.data(), obs, 1, 8, 0);
  for (float v : g) CHECK(v == 7.0f);
}

TEST_CASE("loss: all positions vs last position match the forward's predictions") {
  // Position n forecasts the H steps after its token's end, n S + P: checked without and
  // with overlapping patches (stride 1 of 2).
  for (int variant = 0; variant < 4; ++variant) {
    const auto where = variant % 2 ? model::LossPositions::kLast : model::LossPositions::kAll;
    ModelConfig c = model_test::micro_config();
    c.loss_positions = where;
    c.patch_stride = variant < 2 ? 0 : 1;
    CAPTURE(variant);
    ag::ParameterSet params;
    PatchTransformer m(c, params, 2);
    model_test::randomize(params, 4);
    const int64_t B = 2, L = c.context_length, H = c.horizon, N = c.num_patches();
    const std::vector<float> win = model_test::make_series(B * (L + H), 1, 9);
    std::vector<float> ctx, fut;
    for (int64_t b = 0; b < B; ++b) {
      ctx.insert(ctx.end(), win.begin() + b * (L + H), win.begin() + b * (L + H) + L);
      fut.insert(fut.end(), win.begin() + b * (L + H) + L, win.begin() + (b + 1) * (L + H));
    }
    const std::vector<float> pred = model_test::forward_positions(m, ctx, B);
    double sum = 0;
    int64_t count = 0;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t n = (where == model::LossPositions::kLast ? N - 1 : 0); n < N; ++n) {
        for (int64_t h = 0; h < H; ++h) {
          const double e =
              pred[(b * N + n) * H + h] - win[b * (L + H) + n * c.stride() + c.patch_len + h];
          sum += e * e;
          ++count;
        }
      }
    }
    ag::Graph g;
    ag::GraphScope scope(g);
    const float whole = m.loss(model_test::samples_from_windows(win, B, L, H, 1).view(B)).item();
    SampleBuffers halves(B, L, H, 1);
    halves.context_values = ctx;
    halves.target_values = fut;
    std::fill(halves.context_observed.begin(), halves.context_observed.end(), 1);
    std::fill(halves.target_observed.begin(), halves.target_observed.end(), 1);
    const float split = m.loss(halves.view(B)).item();
    CHECK(whole == doctest::Approx(sum / count).epsilon(1e-5));
    CHECK(split == whole);
  }
}

TEST_CASE("forecast computes the final block at the last position only: the same bits") {
  // forecast() skips the final block's queries, output projection and feed-forward at every
  // position but the last; the full forward's last position must agree bit for bit (with
  // shapes large enough for the packed GEMM paths, one to three blocks, overlapping patches).
  for (int variant = 0; variant < 4; ++variant) {
    CAPTURE(variant);
    ModelConfig c = model_test::micro_config();
    c.context_length = 96;
    c.patch_len = 8;
    c.horizon = 12;
    c.d_model = 64;
    c.n_heads = 4;
    c.n_layers = 1 + variant % 3;
    c.patch_stride = variant == 3 ? 4 : 0;
    ag::ParameterSet params;
    PatchTransformer m(c, params, 7);
    model_test::randomize(params, 5, 0.3f);
    const int64_t B = 37, L = c.context_length, H = c.horizon, N = c.num_patches();
    const std::vector<float> ctx = model_test::make_series(B * L, 1, 4);
    const std::vector<float> all = model_test::forward_positions(m, ctx, B);
    const std::vector<float> last = m.forecast(ctx.data(), nullptr, B, L);
    REQUIRE(last.size() == static_cast<size_t>(B * H));
    int differ = 0;
    for (int64_t b = 0; b < B; ++b)
      differ += std::memcmp(&last[b * H], &all[(b * N + N - 1) * H], H * sizeof(float)) != 0;
    CHECK(differ == 0);
  }
}

TEST_CASE("forecast: short, long and padded contexts; rollout beyond the horizon") {
  ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 5);
  model_test::randomize(params, 6, 0.2f);
  const std::vector<float> series = model_test::make_series(40, 1, 2);
  // A longer context uses its last L steps.
  const std::vector<float> last8(series.end() - 8, series.end());
  CHECK(m.forecast(series) == m.forecast(last8));
  // A shorter one is front-padded with unobserved steps.
  std::vector<float> padded(8, 123.0f);
  std::copy(series.end() - 5, series.end(), padded.begin() + 3);
  const uint8_t obs[8] = {0, 0, 0, 1, 1, 1, 1, 1};
  const std::vector<float> short_ctx(series.end() - 5, series.end());
  CHECK(m.forecast(short_ctx) == m.forecast(padded.data(), obs, 1, 8, 0));
  // Rollout: 7 steps = 3 + 3 + 1, each continuation forecast from the extended context.
  const std::vector<float> long_f = m.forecast(last8, 7);
  REQUIRE(long_f.size() == 7);
  const std::vector<float> first = m.forecast(last8, 3);
  CHECK(std::equal(first.begin(), first.end(), long_f.begin()));
  std::vector<float> extended = last8;
  extended.insert(extended.end(), first.begin(), first.end());
  const std::vector<float> second = m.forecast(extended, 4);
  CHECK(std::equal(second.begin(), second.end(), long_f.begin() + 3));
  for (float v : long_f) CHECK(std::isfinite(v));
  // Batch form = one window at a time.
  std::vector<float> two(series.begin(), series.begin() + 16);
  const std::vector<float> both = m.forecast(two.data(), nullptr, 2, 8, 0);
  const std::vector<float> w1 = m.forecast(std::vector<float>(two.begin() + 8, two.end()));
  CHECK(std::equal(w1.begin(), w1.end(), both.begin() + 3));
}

TEST_CASE("forecast: bad inputs are clear errors") {
  ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 5);
  std::vector<float> ctx(8, 1.0f);
  ctx[2] = NAN;
  CHECK_THROWS_WITH_AS(m.forecast(ctx), doctest::Contains("non-finite"), InputError);
  const uint8_t none[8] = {};
  CHECK_THROWS_WITH_AS(m.forecast(ctx.data(), none, 1, 8, 0),
                       doctest::Contains("no observed value"), InputError);
  ctx[2] = 1.0f;
  uint8_t nan_but_missing[8] = {1, 1, 0, 1, 1, 1, 1, 1};
  ctx[2] = NAN;  // a NaN marked missing is fine
  CHECK(m.forecast(ctx.data(), nan_but_missing, 1, 8, 0).size() == 3);
}

TEST_CASE("attention maps are causal rows summing to one") {
  ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 5);
  model_test::randomize(params, 6);
  const std::vector<float> s = model_test::make_series(8, 1, 4);
  const auto maps = m.attention_maps(s.data(), nullptr, 8);
  REQUIRE(maps.size() == 2);
  const int N = c.num_patches();
  REQUIRE(maps[0].size() == static_cast<size_t>(c.n_heads * N * N));
  for (int h = 0; h < c.n_heads; ++h) {
    for (int i = 0; i < N; ++i) {
      double row = 0;
      for (int j = 0; j < N; ++j) {
        const float w = maps[1][(h * N + i) * N + j];
        if (j > i) CHECK(w == 0.0f);
        row += w;
      }
      CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("model: a past covariate is an input only, never a target (model.target_channels)") {
  ModelConfig c = model_test::micro_config();
  c.channel_mode = ChannelMode::kMixed;
  c.channels = 2;
  const int64_t B = 3, L = c.context_length, H = c.horizon, T = L + H;
  const std::vector<float> win = model_test::make_series(B * T, 2, 11);
  const auto loss_of = [&](int targets, const std::vector<float>& w) {
    ModelConfig cc = c;
    cc.target_channels = targets;
    ag::ParameterSet params;
    const model::PatchTransformer m(cc, params, 5);
    ag::Graph g;
    ag::GraphScope scope(g);
    return m.loss(model_test::samples_from_windows(w, B, L, H, 2).view(B)).item();
  };
  // Channel 1's future values: with target_channels 1 they are not targets, so changing
  // them changes nothing; with every channel a target they change the loss.
  std::vector<float> moved = win;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = L; t < T; ++t) moved[static_cast<size_t>((b * T + t) * 2 + 1)] += 3.0f;
  CHECK(loss_of(1, moved) == loss_of(1, win));
  CHECK(loss_of(0, moved) != loss_of(0, win));
  // Channel 0's future is a target either way.
  std::vector<float> target_moved = win;
  for (int64_t b = 0; b < B; ++b) target_moved[static_cast<size_t>((b * T + L) * 2)] += 3.0f;
  CHECK(loss_of(1, target_moved) != loss_of(1, win));
  // Only mixed samples have covariates, and at most model.channels of them are targets.
  ModelConfig bad = c;
  bad.target_channels = 3;
  CHECK_THROWS_AS(bad.validate(), InputError);
  bad = model_test::micro_config();
  bad.target_channels = 1;
  CHECK_THROWS_AS(bad.validate(), InputError);
}

TEST_CASE("quantiles: levels never cross, the median is the point forecast, causality holds") {
  ModelConfig c = model_test::micro_config();
  c.quantiles = {0.025f, 0.1f, 0.5f, 0.9f, 0.975f};
  check_causal(c);
  ag::ParameterSet params;
  PatchTransformer m(c, params, 1);
  // Untrained (zero head): the median is the last value and the levels sit sigma / 2 apart.
  std::vector<float> ctx = {1, 2, 3, 4, 5, 6, 7, 8.5f};
  std::vector<float> levels;
  const std::vector<float> point = m.forecast(ctx.data(), nullptr, 1, 8, 0, {}, &levels);
  REQUIRE(levels.size() == 3 * 5);
  for (int h = 0; h < 3; ++h) {
    CHECK(point[h] == 8.5f);
    CHECK(levels[h * 5 + 2] == 8.5f);
    for (int q = 1; q < 5; ++q) CHECK(levels[h * 5 + q] > levels[h * 5 + q - 1]);
  }
  // Random weights, a rollout beyond H: still ordered at every step, median = point.
  model_test::randomize(params, 4, 2.0f);
  const std::vector<float> series = model_test::make_series(20, 1, 2);
  const std::vector<float> p2 = m.forecast(series.data(), nullptr, 1, 20, 7, {}, &levels);
  for (int h = 0; h < 7; ++h) {
    CHECK(p2[h] == levels[h * 5 + 2]);
    for (int q = 1; q < 5; ++q) CHECK(levels[h * 5 + q] > levels[h * 5 + q - 1]);
  }
}

TEST_CASE("quantiles: bad levels are refused naming model.quantiles") {
  for (const std::vector<float>& bad : std::vector<std::vector<float>>{
           {0.1f, 0.9f}, {0.5f, 0.5f}, {0.9f, 0.5f}, {0.0f, 0.5f}, {0.5f, 1.0f}}) {
    ModelConfig c = model_test::micro_config();
    c.quantiles = bad;
    std::string error;
    try {
      c.validate();
    } catch (const InputError& e) {
      error = e.what();
    }
    CAPTURE(error);
    CHECK(error.find("model.quantiles") != std::string::npos);
  }
}
