// Plain dropout on random_uniform, one element at a time: what kernels::dropout_* must match.
#include "attnfc/kernels/dropout.hpp"
#include "attnfc/kernels/random.hpp"

namespace attnfc::kernels {

// The product is rounded before the add (the build has -ffp-contract=off), as in the kernel (and as
// in a separate dropout followed by an add).
void dropout_forward_reference(const float* x, const float* residual, float* y, int64_t n,
                               uint64_t seed, float p) {
  const float inv_keep = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = random_uniform(seed, static_cast<uint64_t>(i)) >= p;
    const float d = keep ? x[i] * inv_keep : 0.0f;
    y[i] = residual ? residual[i] + d : d;
  }
}

void dropout_backward_reference(const float* dy, float* dx, int64_t n, uint64_t seed, float p) {
  const float inv_keep = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < n; ++i) {
    if (random_uniform(seed, static_cast<uint64_t>(i)) >= p) dx[i] += dy[i] * inv_keep;
  }
}

}  // namespace attnfc::kernels
