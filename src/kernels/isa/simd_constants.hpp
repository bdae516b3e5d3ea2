#pragma once
// Constants shared by every branch of simd::VF (simd_math.hpp): the exp and log
// argument ranges and polynomials, identical on every instruction set.
#include "isa.hpp"

#include <cstdint>
#include <limits>

namespace attnfc::kernels::ATTNFC_ISA::simd {

constexpr int kLanes = 16;
constexpr float kInf = std::numeric_limits<float>::infinity();

// exp(x) argument range: below kExpLo the result is flushed to exactly 0 (so a
// masked -inf score gives weight 0, not 1e-38); above kExpHi it saturates at a
// large finite value (exp(88) ~ 1.7e38) instead of overflowing to inf.
constexpr float kExpLo = -87.33654f;
constexpr float kExpHi = 88.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;     // ln 2 split in two so that n * kLn2Hi
constexpr float kLn2Lo = -2.12194440e-4f;  // is exact (Cody-Waite reduction)
// Degree-5 minimax polynomial for (exp(r) - 1 - r) / r^2 on [-ln2/2, ln2/2];
// relative error of the result is about 1 ulp.
constexpr float kExpP0 = 1.9875691500e-4f;
constexpr float kExpP1 = 1.3981999507e-3f;
constexpr float kExpP2 = 8.3334519073e-3f;
constexpr float kExpP3 = 4.1665795894e-2f;
constexpr float kExpP4 = 1.6666665459e-1f;
constexpr float kExpP5 = 5.0000001201e-1f;
// log(x) for finite x > 0: x = 2^e m with m in [0.75, 1.5), and
// log m = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.2, by its odd series to t^9
// (truncation < 4e-9 relative).
constexpr float kLn2 = 0.693147180559945309f;

}  // namespace attnfc::kernels::ATTNFC_ISA::simd
