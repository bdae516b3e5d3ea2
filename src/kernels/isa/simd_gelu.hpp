#pragma once
// GELU on 16-lane vectors: the one formula every GELU in attnfc evaluates (the
// elementwise kernel, its gradient, and the GEMM epilogue on every micro-kernel
// path), so a fused linear+GELU and the unfused chain give the same bits.
//   tanh form: gelu(x) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
//              (the same function as 0.5 x (1 + tanh u), without the 1 + tanh
//              cancellation for negative x)
//   erf form:  gelu(x) = x * Phi(x); Phi from the Abramowitz-Stegun 7.1.26 erfc
//              (|error| <= 1.5e-7), evaluated as erfc for both signs so the
//              negative tail keeps its relative accuracy.
#include "isa.hpp"

#include "simd_math.hpp"

namespace attnfc::kernels::ATTNFC_ISA::simd {

namespace gelu_constants {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
constexpr float kInvSqrt2 = 0.7071067811865476f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f;
// Abramowitz & Stegun 7.1.26.
constexpr float kAsP = 0.3275911f;
constexpr float kAs1 = 0.254829592f, kAs2 = -0.284496736f, kAs3 = 1.421413741f,
                kAs4 = -1.453152027f, kAs5 = 1.061405429f;
}  // namespace gelu_constants

// s = sigmoid(2u) and du/dx for the tanh form.
inline VF gelu_tanh_gate(VF x, VF* du_dx) {
  using namespace gelu_constants;
  const VF x2 = mul(x, x);
  const VF u = mul(set1(kSqrt2OverPi), fmadd(mul(set1(kCubic), x2), x, x));
  if (du_dx) *du_dx = mul(set1(kSqrt2OverPi), fmadd(set1(3.0f * kCubic), x2, set1(1.0f)));
  const VF e = exp(mul(set1(-2.0f), u));
  return div(set1(1.0f), add(set1(1.0f), e));
}

// Phi(x) and the Gaussian density phi(x) for the erf form.
inline VF normal_cdf(VF x, VF* pdf) {
  using namespace gelu_constants;
  const VF z = mul(max(x, sub(zero(), x)), set1(kInvSqrt2));  // |x| / sqrt 2
  const VF t = div(set1(1.0f), fmadd(set1(kAsP), z, set1(1.0f)));
  VF poly = set1(kAs5);
  poly = fmadd(poly, t, set1(kAs4));
  poly = fmadd(poly, t, set1(kAs3));
  poly = fmadd(poly, t, set1(kAs2));
  poly = fmadd(poly, t, set1(kAs1));
  poly = mul(poly, t);
  const VF g = exp(sub(zero(), mul(z, z)));  // exp(-x^2 / 2)
  if (pdf) *pdf = mul(set1(kInvSqrt2Pi), g);
  const VF tail = mul(set1(0.5f), mul(poly, g));  // 0.5 erfc(|x| / sqrt 2) = Phi(-|x|)
  return select(less(x, zero()), tail, sub(set1(1.0f), tail));
}

inline VF gelu(VF x, bool tanh_approx) {
  return mul(x, tanh_approx ? gelu_tanh_gate(x, nullptr) : normal_cdf(x, nullptr));
}

// d gelu / dx.
inline VF gelu_grad(VF x, bool tanh_approx) {
  if (tanh_approx) {
    VF du;
    const VF s = gelu_tanh_gate(x, &du);
    // s + x s (1 - s) 2 u'
    return fmadd(mul(mul(x, s), sub(set1(1.0f), s)), mul(set1(2.0f), du), s);
  }
  VF pdf;
  const VF cdf = normal_cdf(x, &pdf);
  return fmadd(x, pdf, cdf);
}

}  // namespace attnfc::kernels::ATTNFC_ISA::simd
