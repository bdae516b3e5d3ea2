// INTERIM: forwards to the reference until the vectorised kernel lands (issue 4).
#include "attnfc/kernels/activation.hpp"

namespace attnfc::kernels {
void gelu_forward(const float* x, float* y, int64_t n, bool tanh_approx) {
  gelu_forward_reference(x, y, n, tanh_approx);
}
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n, bool tanh_approx) {
  gelu_backward_reference(x, dy, dx, n, tanh_approx);
}
}  // namespace attnfc::kernels
