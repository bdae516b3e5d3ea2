#pragma once
// Helpers for the kernel tests: seeded inputs, thread-count guards, tolerant and
// bit-exact comparisons, and a central-difference gradient check.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attnfc/kernels/threading.hpp"

namespace attnfc::test {

inline std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

inline std::vector<uint8_t> random_mask(size_t n, uint32_t seed, double p_masked) {
  std::mt19937 gen(seed);
  std::bernoulli_distribution dist(p_masked);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = dist(gen) ? 1 : 0;
  return v;
}

// Runs the kernels at n threads for the guard's lifetime, then restores the default.
struct ThreadCount {
  explicit ThreadCount(int n) { kernels::set_threads(n); }
  ~ThreadCount() { kernels::set_threads(0); }
};

inline bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// |got - want| <= atol + rtol * |want| everywhere; infinities must match exactly,
// NaN is never accepted. Reports the worst element through doctest.
inline bool all_close(const float* got, const float* want, size_t n, double atol, double rtol,
                      const std::string& what) {
  size_t bad = n;
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g) || std::isnan(w) || (std::isinf(g) || std::isinf(w) ? g != w : false)) {
      bad = i;
      worst = INFINITY;
      break;
    }
    if (std::isinf(g)) continue;
    const double excess = std::fabs(g - w) - (atol + rtol * std::fabs(w));
    if (excess > worst) worst = excess, bad = i;
  }
  if (bad != n) {
    INFO(what << ": element " << bad << " got " << got[bad] << " want " << want[bad]);
    CHECK(false);
    return false;
  }
  return true;
}
inline bool all_close(const std::vector<float>& got, const std::vector<float>& want, double atol,
                      double rtol, const std::string& what) {
  REQUIRE(got.size() == want.size());
  return all_close(got.data(), want.data(), got.size(), atol, rtol, what);
}

// Largest |numeric - analytic| / (1 + |numeric|) over all elements of x, where
// numeric is the central difference of loss() with step h, evaluated in double
// from the float inputs (the step actually taken is measured after rounding).
inline double gradient_error(std::vector<float>& x, const std::function<double()>& loss,
                             const std::vector<float>& analytic, float h) {
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float x0 = x[i];
    x[i] = x0 + h;
    const double up = loss();
    const double hu = static_cast<double>(x[i]) - x0;
    x[i] = x0 - h;
    const double down = loss();
    const double hd = static_cast<double>(x0) - x[i];
    x[i] = x0;
    const double numeric = (up - down) / (hu + hd);
    worst = std::max(worst, std::fabs(numeric - analytic[i]) / (1.0 + std::fabs(numeric)));
  }
  return worst;
}

inline double weighted_sum(const std::vector<float>& y, const std::vector<float>& w) {
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * w[i];
  return s;
}

}  // namespace attnfc::test
