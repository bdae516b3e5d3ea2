#include <cmath>

#include "attnfc/kernels/adamw.hpp"

namespace attnfc::kernels {

void adamw_update_reference(float* param, const float* grad, float* m, float* v, int64_t n,
                            const AdamWStep& s) {
  const double bc1 = 1.0 - std::pow(static_cast<double>(s.beta1), static_cast<double>(s.step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(s.beta2), static_cast<double>(s.step));
  for (int64_t i = 0; i < n; ++i) {
    m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * grad[i];
    v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * grad[i] * grad[i];
    const double mhat = m[i] / bc1;
    const double vhat = v[i] / bc2;
    param[i] -= static_cast<float>(
        s.lr * (mhat / (std::sqrt(vhat) + s.eps) + s.weight_decay * static_cast<double>(param[i])));
  }
}

}  // namespace attnfc::kernels
