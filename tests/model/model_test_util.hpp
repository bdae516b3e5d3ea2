#pragma once
// Shared helpers for the model tests: micro configurations, deterministic data,
// and parameter randomisation (the real init zeroes the head, which would hide
// every upstream gradient from a gradient check).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
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

}  // namespace model_test
