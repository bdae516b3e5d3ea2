#include <cmath>

#include "attnfc/kernels/layernorm.hpp"

namespace attnfc::kernels {

void layernorm_forward_reference(const float* x, const float* gamma, const float* beta, float* y,
                                 float* mean, float* rstd, int rows, int C, float eps) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<long>(r) * C;
    double m = 0.0;
    for (int c = 0; c < C; ++c) m += xr[c];
    m /= C;
    double var = 0.0;
    for (int c = 0; c < C; ++c) var += (xr[c] - m) * (xr[c] - m);
    var /= C;
    const double s = 1.0 / std::sqrt(var + eps);
    for (int c = 0; c < C; ++c) {
      const double v = (xr[c] - m) * s * gamma[c] + (beta ? beta[c] : 0.0f);
      y[static_cast<long>(r) * C + c] = static_cast<float>(v);
    }
    mean[r] = static_cast<float>(m);
    rstd[r] = static_cast<float>(s);
  }
}

void layernorm_backward_reference(const float* dy, const float* x, const float* gamma,
                                  const float* mean, const float* rstd, float* dx, float* dgamma,
                                  float* dbeta, int rows, int C) {
  for (int r = 0; r < rows; ++r) {
    const long o = static_cast<long>(r) * C;
    double sum_g = 0.0, sum_gx = 0.0;
    for (int c = 0; c < C; ++c) {
      const double xhat = (x[o + c] - mean[r]) * static_cast<double>(rstd[r]);
      const double g = static_cast<double>(dy[o + c]) * gamma[c];
      sum_g += g;
      sum_gx += g * xhat;
      if (dgamma) dgamma[c] += static_cast<float>(dy[o + c] * xhat);
      if (dbeta) dbeta[c] += dy[o + c];
    }
    for (int c = 0; c < C; ++c) {
      const double xhat = (x[o + c] - mean[r]) * static_cast<double>(rstd[r]);
      const double g = static_cast<double>(dy[o + c]) * gamma[c];
      dx[o + c] += static_cast<float>(rstd[r] * (g - sum_g / C - xhat * sum_gx / C));
    }
  }
}

}  // namespace attnfc::kernels
