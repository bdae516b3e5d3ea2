#pragma once
// Shared helpers for the model tests: micro configurations, deterministic data,
// and parameter randomisation (the real init zeroes the head, which would hide
// every upstream gradient from a gradient check).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/model/patch_transformer.hpp"

namespace model_test {

inline attnfc::model::ModelConfig micro_config() {
  attnfc::model::ModelConfig c;
  c.context_length = 8;
  c.patch_len = 2;
  c.horizon = 3;
  c.d_model = 8;
  c.n_heads = 2;
  c.n_layers = 2;
  c.ff_mult = 2;
  c.dropout = 0.0f;
  return c;
}

// A smooth series with noise: a random walk plus a sine, so normalisation matters.
inline std::vector<float> make_series(int64_t rows, int64_t channels, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(rows * channels));
  for (int64_t c = 0; c < channels; ++c) {
    float level = 3.0f * static_cast<float>(c + 1);
    for (int64_t t = 0; t < rows; ++t) {
      level += 0.3f * attnfc::kernels::random_normal(seed + 17 * c, static_cast<uint64_t>(t));
      v[t * channels + c] = level + 2.0f * static_cast<float>(std::sin(0.7 * t + c));
    }
  }
  return v;
}

// Uniform weights in [-a, a]; LayerNorm gains 1 + U(-a, a) (names ending in "norm*.weight").
inline void randomize(attnfc::ag::ParameterSet& params, uint64_t seed, float a = 0.4f) {
  uint64_t k = 0;
  for (const auto& p : params.all()) {
    float* d = p.tensor.data();
    const bool gain = p.name.find("norm") != std::string::npos && p.name.size() >= 6 &&
                      p.name.compare(p.name.size() - 6, 6, "weight") == 0;
    for (int64_t i = 0; i < p.tensor.numel(); ++i) {
      const float u = (2.0f * attnfc::kernels::random_uniform(seed, k++) - 1.0f) * a;
      d[i] = gain ? 1.0f + u : u;
    }
  }
}

// Samples (base/sample.hpp) cut from whole windows [B, L + H, C], each a context followed
// by its target, with an optional 0/1 mask of the same shape (nullptr = all observed).
// H = 0 gives contexts only (for forward).
inline attnfc::SampleBuffers samples_from_windows(const std::vector<float>& windows, int64_t B,
                                                  int64_t L, int64_t H, int64_t C,
                                                  const std::vector<float>* observed = nullptr) {
  attnfc::SampleBuffers s(B, L, H, C);
  const int64_t T = L + H;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        const size_t src = static_cast<size_t>((b * T + t) * C + c);
        const uint8_t obs = observed ? (*observed)[src] != 0.0f : 1;
        const size_t dst =
            static_cast<size_t>(t < L ? (b * L + t) * C + c : (b * H + (t - L)) * C + c);
        (t < L ? s.context_values : s.target_values)[dst] = windows[src];
        (t < L ? s.context_observed : s.target_observed)[dst] = obs;
      }
  return s;
}

// Every position's forecasts [B, N, Q H C] of B contexts [B, L, C] (observed: 0/1 marks of
// the same shape, nullptr = all observed), through forward() without gradients.
inline std::vector<float> forward_positions(const attnfc::model::PatchTransformer& m,
                                            const std::vector<float>& contexts, int64_t B,
                                            const attnfc::model::ForwardOptions& options = {},
                                            const std::vector<float>* observed = nullptr) {
  attnfc::ag::NoGradScope no_grad;
  attnfc::ag::Graph g;
  attnfc::ag::GraphScope scope(g);
  const attnfc::model::ModelConfig& c = m.config();
  const attnfc::SampleBuffers s =
      samples_from_windows(contexts, B, c.context_length, 0, c.token_channels(), observed);
  const attnfc::ag::Tensor out = m.forward(s.view(B), options);
  return std::vector<float>(out.data(), out.data() + out.numel());
}

// Fills the KnownInputs the cross-attention decoder of `cfg` reads (none for the linear
// decoder): known features U(-1, 1), numeric statics N(0, 1), category codes cycling through
// every row of each table (0, the unseen slot, included).
inline void add_known(attnfc::SampleBuffers& s, const attnfc::model::ModelConfig& cfg,
                      uint64_t seed) {
  const auto G = static_cast<int64_t>(cfg.static_categories.size());
  s.reserve_known(cfg.known_features, cfg.static_numeric, G);
  for (size_t i = 0; i < s.known.size(); ++i)
    s.known[i] = 2.0f * attnfc::kernels::random_uniform(seed, i) - 1.0f;
  for (size_t i = 0; i < s.static_numeric.size(); ++i)
    s.static_numeric[i] = attnfc::kernels::random_normal(seed + 1, i);
  for (int64_t b = 0; b < s.capacity; ++b)
    for (int64_t g = 0; g < G; ++g)
      s.static_codes[static_cast<size_t>(b * G + g)] =
          static_cast<int32_t>((b + g) % cfg.static_categories[static_cast<size_t>(g)]);
}

// The micro model with the cross-attention decoder reading K = 3 known features a step,
// 2 numeric statics and two categorical ones (3 and 2 categories, with the unseen slot).
inline attnfc::model::ModelConfig micro_cross_config() {
  attnfc::model::ModelConfig c = micro_config();
  c.decoder = attnfc::model::Decoder::kCrossAttention;
  c.loss_positions = attnfc::model::LossPositions::kLast;
  c.known_features = 3;
  c.static_numeric = 2;
  c.static_categories = {4, 3};
  return c;
}

}  // namespace model_test
