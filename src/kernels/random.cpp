// Counter-based random numbers: every value is a pure function of (seed, counter),
// so results never depend on thread count, work split or call order.
#include "attnfc/kernels/random.hpp"

#include <cmath>

namespace attnfc::kernels {

namespace {
// The splitmix64 finaliser: a bijection on 64 bits with full avalanche.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
}  // namespace

uint64_t random_bits(uint64_t seed, uint64_t counter) {
  // Element `counter` of the splitmix64 stream that starts at state mix64(seed):
  // nearby seeds start at unrelated states, and consecutive counters are decorrelated
  // by the finaliser.
  return mix64(mix64(seed ^ kGolden) + (counter + 1) * kGolden);
}

float random_uniform(uint64_t seed, uint64_t counter) {
  // Top 24 bits: exactly representable in a float, so the result is in [0, 1).
  return static_cast<float>(random_bits(seed, counter) >> 40) * (1.0f / 16777216.0f);
}

float random_normal(uint64_t seed, uint64_t counter) {
  const double u1 = static_cast<double>(random_bits(seed, 2 * counter) >> 11) * 0x1.0p-53;
  const double u2 = static_cast<double>(random_bits(seed, 2 * counter + 1) >> 11) * 0x1.0p-53;
  // 1 - u1 lies in (0, 1], so the log is finite.
  const double r = std::sqrt(-2.0 * std::log(1.0 - u1));
  return static_cast<float>(r * std::cos(6.283185307179586 * u2));
}

}  // namespace attnfc::kernels
