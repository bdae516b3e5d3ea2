// Counter-based RNG: pure function of (seed, counter), in range, well distributed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>

#include "attnfc/kernels/random.hpp"

using namespace attnfc::kernels;

TEST_CASE("random: a pure function of (seed, counter)") {
  CHECK(random_bits(1, 2) == random_bits(1, 2));
  CHECK(random_bits(1, 2) != random_bits(2, 1));
  CHECK(random_bits(0, 0) != 0u);
  // Order of evaluation does not matter (no hidden state).
  const float late = random_uniform(7, 1000);
  for (uint64_t i = 0; i < 10; ++i) (void)random_uniform(7, i);
  CHECK(random_uniform(7, 1000) == late);
  // No collisions across a range of counters and neighbouring seeds.
  std::set<uint64_t> seen;
  for (uint64_t s = 0; s < 4; ++s) {
    for (uint64_t c = 0; c < 5000; ++c) seen.insert(random_bits(s, c));
  }
  CHECK(seen.size() == 20000u);
}

TEST_CASE("random_uniform: [0, 1), mean 1/2, variance 1/12, uniform deciles") {
  const int n = 200000;
  double sum = 0, sq = 0;
  int deciles[10] = {};
  float lo = 1, hi = 0;
  for (int i = 0; i < n; ++i) {
    const float u = random_uniform(42, static_cast<uint64_t>(i));
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
    sum += u;
    sq += static_cast<double>(u) * u;
    ++deciles[static_cast<int>(u * 10)];
  }
  CHECK(lo >= 0.0f);
  CHECK(hi < 1.0f);
  const double mean = sum / n, var = sq / n - mean * mean;
  // Standard errors: mean 0.00065, variance ~0.0002; allow ~5 sigma.
  CHECK(std::fabs(mean - 0.5) < 0.004);
  CHECK(std::fabs(var - 1.0 / 12) < 0.001);
  for (int d = 0; d < 10; ++d) {
    CAPTURE(d);
    CHECK(std::abs(deciles[d] - n / 10) < 700);  // sd ~134
  }
}

TEST_CASE("random_normal: mean 0, variance 1, symmetric tails, finite") {
  const int n = 200000;
  double sum = 0, sq = 0;
  int beyond2 = 0, non_finite = 0;
  for (int i = 0; i < n; ++i) {
    const float z = random_normal(3, static_cast<uint64_t>(i));
    non_finite += !std::isfinite(z);
    sum += z;
    sq += static_cast<double>(z) * z;
    beyond2 += std::fabs(z) > 2.0f;
  }
  CHECK(non_finite == 0);
  const double mean = sum / n, var = sq / n - mean * mean;
  CHECK(std::fabs(mean) < 0.012);
  CHECK(std::fabs(var - 1.0) < 0.015);
  // P(|z| > 2) = 0.0455
  CHECK(std::fabs(static_cast<double>(beyond2) / n - 0.0455) < 0.003);
  // Counter c uses bits at 2c and 2c+1; successive normals are not equal.
  CHECK(random_normal(3, 0) != random_normal(3, 1));
}
