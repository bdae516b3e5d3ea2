#pragma once
// Elementwise GELU (tanh approximation or exact erf form), forward and backward.
#include <cstdint>

namespace attnfc::kernels {

void gelu_forward(const float* x, float* y, int64_t n, bool tanh_approx);
// dx += gelu'(x) * dy
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n, bool tanh_approx);

void gelu_forward_reference(const float* x, float* y, int64_t n, bool tanh_approx);
void gelu_backward_reference(const float* x, const float* dy, float* dx, int64_t n,
                             bool tanh_approx);

}  // namespace attnfc::kernels
