// House rule: the same seed and data give the same numbers bit for bit at any
// thread count. Five training steps with dropout, then a forecast, at 1 and 2 threads.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
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
  std::vector<float> out;
  ag::Graph g;
  for (int s = 0; s < 5; ++s) {
    g.reset();
    ag::GraphScope scope(g);
    params.zero_grad();
    const ag::Tensor loss =
        m.loss(ag::from_data({B, T}, w.data()), {}, model::ForwardOptions{true, uint64_t(s)});
    g.backward(loss);
    out.push_back(loss.item());
    opt.step(1e-3f);
  }
  const std::vector<float> f = m.forecast(w.data(), nullptr, B, T, 30);
  out.insert(out.end(), f.begin(), f.end());
  for (const auto& p : params.all()) out.insert(out.end(), p.tensor.data(), p.tensor.data() + 3);
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
