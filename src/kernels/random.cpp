// Counter-based random numbers: every value is a pure function of (seed, counter),
// so results never depend on thread count, work split or call order.
#include "attnfc/kernels/random.hpp"

#include <cmath>

namespace attnfc::kernels {

uint64_t random_bits(uint64_t seed, uint64_t counter) {
  // Element `counter` of the splitmix64 stream that starts at state mix64(seed):
  // nearby seeds start at unrelated states, and consecutive counters are decorrelated
  // by the finaliser.
  return counter_bits(seed_state(seed), counter);
}

uint32_t uniform_threshold24(float p) {
  // p * 2^24 is exact in double; k * 2^-24 >= p  <=>  k >= p * 2^24.
  return static_cast<uint32_t>(std::ceil(static_cast<double>(p) * 16777216.0));
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
