#include <cmath>

#include "attnfc/kernels/activation.hpp"

namespace attnfc::kernels {

namespace {
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;
}  // namespace

void gelu_forward_reference(const float* x, float* y, int64_t n, bool tanh_approx) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(
        tanh_approx ? 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)))
                    : 0.5 * v * (1.0 + std::erf(v * kInvSqrt2)));
  }
}

void gelu_backward_reference(const float* x, const float* dy, float* dx, int64_t n,
                             bool tanh_approx) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    double d;
    if (tanh_approx) {
      const double u = kSqrt2OverPi * (v + 0.044715 * v * v * v);
      const double t = std::tanh(u);
      d = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3 * 0.044715 * v * v);
    } else {
      d = 0.5 * (1.0 + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5 * v * v);
    }
    dx[i] += static_cast<float>(d * dy[i]);
  }
}

}  // namespace attnfc::kernels
