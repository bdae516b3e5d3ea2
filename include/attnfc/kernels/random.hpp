#pragma once
// Counter-based random numbers: value = f(seed, counter). No hidden state, so a
// result never depends on thread count or on how work is split: dropout masks,
// initialisation and shuffles are reproducible bit for bit.
#include <cstdint>

namespace attnfc::kernels {

// A well-mixed 64-bit hash of (seed, counter) (e.g. splitmix64 of both).
uint64_t random_bits(uint64_t seed, uint64_t counter);
// Uniform in [0, 1) with 24 random bits.
float random_uniform(uint64_t seed, uint64_t counter);
// Standard normal (Box-Muller on two uniforms drawn at counters 2c and 2c+1).
float random_normal(uint64_t seed, uint64_t counter);

}  // namespace attnfc::kernels
