#pragma once
// Shared helpers for the model tests: micro configurations, deterministic data,
// and parameter randomisation (the real init zeroes the head, which would hide
// every upstream gradient from a gradient check).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/model/config.hpp"

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

}  // namespace model_test
