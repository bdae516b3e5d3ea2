#pragma once
// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// 2014): the one 64-bit mixer behind every random stream in attnfc (dropout masks and
// initialisation in kernels/random.hpp, the window shuffle in data/window.cpp).
#include <cstdint>

namespace attnfc {

// The finaliser: a bijection on 64 bits with full avalanche.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// The stream's increment (2^64 / golden ratio, odd).
inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;
// One step of the generator from state x: the next output.
inline uint64_t splitmix64(uint64_t x) {
  return mix64(x + kGoldenGamma);
}

}  // namespace attnfc
