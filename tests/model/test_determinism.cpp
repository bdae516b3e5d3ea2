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

std::vector<float> train_and_forecast(int threads) {
  kernels::set_threads(threads);
  model::ModelConfig c;
  c.context_length = 48;
  c.patch_len = 4;
  c.horizon = 12;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_layers = 2;
  c.dropout = 0.2f;
  ag::ParameterSet params;
  model::PatchTransformer m(c, params, 17);
  ag::AdamW opt(params);
  const int64_t B = 16, T = c.context_length + c.horizon;
  const std::vector<float> w = model_test::make_series(B * T, 1, 5);
  const SampleBuffers samples =
      model_test::samples_from_windows(w, B, c.context_length, c.horizon, 1);
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
  const std::vector<float> f = m.forecast(w.data(), nullptr, B, T, 30);
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
}

TEST_CASE("determinism: every kernel path this CPU runs trains the same bits as portable") {
  // The goal of the kernel paths (docs/ARCHITECTURE.md, "Kernel paths"): a model trained
  // with the same config and seed is byte-identical whichever instruction set ran it.
  const kernels::Isa before = kernels::active_isa();
  kernels::set_isa(kernels::Isa::Portable);
  const std::vector<float> portable = train_and_forecast(2);
  for (kernels::Isa isa : kernels::supported_isas()) {
    CAPTURE(kernels::isa_name(isa));
    kernels::set_isa(isa);
    const std::vector<float> got = train_and_forecast(2);
    REQUIRE(got.size() == portable.size());
    size_t first_diff = got.size();
    for (size_t i = 0; i < got.size() && first_diff == got.size(); ++i)
      if (std::memcmp(&got[i], &portable[i], sizeof(float)) != 0) first_diff = i;
    CAPTURE(first_diff);
    CHECK(first_diff == got.size());
  }
  kernels::set_isa(before);
}
