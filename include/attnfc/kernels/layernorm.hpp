#pragma once
// LayerNorm over the last axis: y = (x - mean) * rstd * gamma + beta.
// Forward saves only mean and rstd (per row) for the backward.

namespace attnfc::kernels {

// x, y: [rows, C]; gamma, beta: [C] (beta may be null); mean, rstd: [rows].
void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* rstd, int rows, int C, float eps);
// Accumulates: dx += ..., dgamma += ..., dbeta += ... (dgamma / dbeta may be null).
// dgamma/dbeta reduce over rows in a fixed order (independent of thread count).
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int rows, int C);

void layernorm_forward_reference(const float* x, const float* gamma, const float* beta, float* y,
                                 float* mean, float* rstd, int rows, int C, float eps);
void layernorm_backward_reference(const float* dy, const float* x, const float* gamma,
                                  const float* mean, const float* rstd, float* dx, float* dgamma,
                                  float* dbeta, int rows, int C);

}  // namespace attnfc::kernels
