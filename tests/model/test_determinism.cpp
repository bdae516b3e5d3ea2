// House rule: the same seed and data give the same numbers bit for bit at any
// thread count and on any kernel path. Five training steps with dropout, then a
// forecast and every weight, at 1 and 2 threads, and on each path this CPU runs.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/kernels/isa.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "model_test_util.hpp"

using namespace attnfc;

namespace {

// cross: the cross-attention decoder reading known features and statics (model_test::
// add_known), forecasting its own horizon; else the linear head, rolled out to 30 steps.
std::vector<float> train_and_forecast(int threads, bool cross = false) {
  kernels::set_threads(threads);
  model::ModelConfig c;
  c.context_length = 48;
  c.patch_len = 4;
  c.horizon = 12;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_layers = 2;
  c.dropout = 0.2f;
  if (cross) {
    const model::ModelConfig x = model_test::micro_cross_config();
    c.decoder = x.decoder;
    c.loss_positions = x.loss_positions;
    c.known_features = x.known_features;
    c.static_numeric = x.static_numeric;
    c.static_categories = x.static_categories;
    c.decoder_layers = 2;
  }
  ag::ParameterSet params;
  model::PatchTransformer m(c, params, 17);
  ag::AdamW opt(params);
  const int64_t B = 16, T = c.context_length + c.horizon;
  const std::vector<float> w = model_test::make_series(B * T, 1, 5);
  SampleBuffers samples = model_test::samples_from_windows(w, B, c.context_length, c.horizon, 1);
  model_test::add_known(samples, c, 23);
  std::vector<float> out;
  ag::Graph g;
  for (int s = 0; s < 5; ++s) {
    g.reset();
    ag::GraphScope scope(g);
    params.zero_grad();
    const ag::Tensor loss = m.loss(samples.view(B), model::ForwardOptions{true, uint64_t(s)});
    g.backward(loss);
    out.push_back(loss.item());
    opt.step(1e-3f);
  }
  const std::vector<float> f =
      m.forecast(w.data(), nullptr, B, T, cross ? 0 : 30, samples.view(B).known);
  out.insert(out.end(), f.begin(), f.end());
  for (const auto& p : params.all())
    out.insert(out.end(), p.tensor.data(), p.tensor.data() + p.tensor.numel());
  kernels::set_threads(kernels::default_threads());
  return out;
}

}  // namespace

TEST_CASE("determinism: 1 and 2 threads give bit-identical training and forecasts") {
  const std::vector<float> one = train_and_forecast(1);
  const std::vector<float> two = train_and_forecast(2);
  REQUIRE(one.size() == two.size());
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  CHECK(one[4] != one[0]);  // it trained
  const std::vector<float> cross_one = train_and_forecast(1, true);
  const std::vector<float> cross_two = train_and_forecast(2, true);
  REQUIRE(cross_one.size() == cross_two.size());
  CHECK(std::memcmp(cross_one.data(), cross_two.data(), cross_one.size() * sizeof(float)) == 0);
}

TEST_CASE("determinism: every kernel path this CPU runs trains the same bits as portable") {
  // The goal of the kernel paths (docs/ARCHITECTURE.md, "Kernel paths"): a model trained
  // with the same config and seed is byte-identical whichever instruction set ran it.
  const kernels::Isa before = kernels::active_isa();
  kernels::set_isa(kernels::Isa::Portable);
  const std::vector<float> portable = train_and_forecast(2);
  const std::vector<float> cross_portable = train_and_forecast(2, true);
  for (kernels::Isa isa : kernels::supported_isas()) {
    CAPTURE(kernels::isa_name(isa));
    kernels::set_isa(isa);
    const std::vector<float> got = train_and_forecast(2);
    CHECK(train_and_forecast(2, true) == cross_portable);
    REQUIRE(got.size() == portable.size());
    size_t first_diff = got.size();
    for (size_t i = 0; i < got.size() && first_diff == got.size(); ++i)
      if (std::memcmp(&got[i], &portable[i], sizeof(float)) != 0) first_diff = i;
    CAPTURE(first_diff);
    CHECK(first_diff == got.size());
  }
  kernels::set_isa(before);
}

TEST_CASE("determinism: a window's forecast does not depend on the batch it is computed in") {
  // Validation and evaluate cut the windows into batches (train.eval_batch_size); the last
  // batch may hold one window, and tiny products take another GEMM path. A score must not
  // move with the batch size, so each window's forecast is compared alone, in pairs and
  // all together, with the linear shortcut (a [B, 96] x [96, 12] product: unpacked for
  // a few windows, packed for 32) and quantiles.
  model::ModelConfig c;
  c.context_length = 96;
  c.patch_len = 4;
  c.horizon = 12;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_layers = 2;
  c.linear_lookback = 96;
  c.quantiles = {0.1f, 0.5f, 0.9f};
  ag::ParameterSet params;
  model::PatchTransformer m(c, params, 3);
  model_test::randomize(params, 9, 0.2f);
  const int64_t B = 32, L = c.context_length, H = c.horizon;
  const std::vector<float> w = model_test::make_series(B * L, 1, 8);
  std::vector<float> all_levels;
  const std::vector<float> all = m.forecast(w.data(), nullptr, B, L, 0, {}, &all_levels);
  const int64_t Q = static_cast<int64_t>(c.quantiles.size());
  for (int64_t size : {1, 4}) {
    for (int64_t b = 0; b + size <= B; b += size) {
      CAPTURE(size);
      CAPTURE(b);
      std::vector<float> levels;
      const std::vector<float> got = m.forecast(w.data() + b * L, nullptr, size, L, 0, {}, &levels);
      CHECK(std::memcmp(got.data(), all.data() + b * H, sizeof(float) * got.size()) == 0);
      CHECK(std::memcmp(levels.data(), all_levels.data() + b * H * Q,
                        sizeof(float) * levels.size()) == 0);
    }
  }
}
