// A zero head ignores what it reads, so inference skips the encoder for it (the untrained
// model, a run's linear start): its forecasts must be the bits the full forward gives.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "attnfc/model/patch_transformer.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::ModelConfig;
using model::PatchTransformer;

TEST_CASE("zero head: forecasts without the encoder are the full forward's bits") {
  for (int variant = 0; variant < 5; ++variant) {
    CAPTURE(variant);
    ModelConfig c = model_test::micro_config();
    c.context_length = 48;
    c.patch_len = 6;
    c.horizon = 5;
    c.d_model = 32;
    if (variant % 2) c.quantiles = {0.025f, 0.1f, 0.5f, 0.9f, 0.975f};
    if (variant == 2 || variant == 3) c.linear_lookback = 48;
    if (variant == 4) {  // three channels a token: the head writes Q H C values a position
      c.channel_mode = ChannelMode::kMixed;
      c.channels = 3;
    }
    ag::ParameterSet params;
    PatchTransformer m(c, params, 3);
    model_test::randomize(params, 6, 0.5f);
    for (const auto& p : params.all())  // the head's weight only: its bias stays random
      if (p.name == "head.weight") std::fill_n(p.tensor.data(), p.tensor.numel(), 0.0f);
    const int64_t B = 9, L = c.context_length;
    const std::vector<float> ctx = model_test::make_series(B * L, c.token_channels(), 5);
    // Training mode (dropout 0 here, so the same arithmetic) never takes the shortcut.
    const std::vector<float> fast = model_test::forward_positions(m, ctx, B);
    const std::vector<float> full = model_test::forward_positions(m, ctx, B, {true, 0});
    REQUIRE(fast.size() == full.size());
    CHECK(std::memcmp(fast.data(), full.data(), fast.size() * sizeof(float)) == 0);
    // Not a vacuous match: the bias and the shortcut move the forecasts off the last value.
    CHECK(fast[0] != ctx[(L - 1) * c.token_channels()]);
  }
}
