#pragma once
// Counter-based random numbers: value = f(seed, counter). No hidden state, so a
// result never depends on thread count or on how work is split: dropout masks,
// initialisation and shuffles are reproducible bit for bit.
#include <cstdint>

#include "attnfc/base/splitmix.hpp"

namespace attnfc::kernels {

// random_bits(seed, counter) == counter_bits(seed_state(seed), counter). Inline so hot
// loops (dropout) hoist the per-seed mixing and vectorise the per-element hash.
inline uint64_t seed_state(uint64_t seed) {
  return mix64(seed ^ kGoldenGamma);
}
inline uint64_t counter_bits(uint64_t state, uint64_t counter) {
  return mix64(state + (counter + 1) * kGoldenGamma);
}

// A well-mixed 64-bit hash of (seed, counter): element `counter` of the splitmix64
// stream that starts at state mix64(seed).
uint64_t random_bits(uint64_t seed, uint64_t counter);
// Uniform in [0, 1) with 24 random bits: (random_bits >> 40) * 2^-24.
float random_uniform(uint64_t seed, uint64_t counter);
// The 24 bits behind random_uniform, from a hoisted seed_state.
inline uint32_t uniform_bits24(uint64_t state, uint64_t counter) {
  return static_cast<uint32_t>(counter_bits(state, counter) >> 40);
}
// Smallest k with k * 2^-24 >= p, for p in [0, 1]: random_uniform(s, c) >= p exactly
// when uniform_bits24(seed_state(s), c) >= uniform_threshold24(p) (integer compare).
uint32_t uniform_threshold24(float p);
// Standard normal (Box-Muller on two uniforms drawn at counters 2c and 2c+1).
float random_normal(uint64_t seed, uint64_t counter);

}  // namespace attnfc::kernels
