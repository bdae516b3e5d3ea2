#pragma once
// Dropout masks from the counter-based generator: element i is kept exactly when
// random_uniform(seed, i) >= p, so the mask is a pure function of (seed, i) and never
// depends on the thread count. Nothing is stored; the backward recomputes the mask.
#include <cstdint>

namespace attnfc::kernels {

// y[i] = (residual ? residual[i] : 0) + (keep(i) ? x[i] / (1 - p) : 0), for 0 <= p < 1.
void dropout_forward(const float* x, const float* residual, float* y, int64_t n, uint64_t seed,
                     float p);
// dx[i] += dy[i] / (1 - p) where element i is kept; dropped elements are left untouched.
void dropout_backward(const float* dy, float* dx, int64_t n, uint64_t seed, float p);

void dropout_forward_reference(const float* x, const float* residual, float* y, int64_t n,
                               uint64_t seed, float p);
void dropout_backward_reference(const float* dy, float* dx, int64_t n, uint64_t seed, float p);

}  // namespace attnfc::kernels
