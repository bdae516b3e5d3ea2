#pragma once
// The AdamW update (Loshchilov & Hutter: decoupled weight decay), in place.
#include <cstdint>

namespace attnfc::kernels {

struct AdamWStep {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // 0 gives plain Adam
  int64_t step = 1;           // 1-based, for bias correction
};

// param -= lr * (mhat / (sqrt(vhat) + eps) + weight_decay * param)
void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n,
                  const AdamWStep& s);
void adamw_update_reference(float* param, const float* grad, float* m, float* v, int64_t n,
                            const AdamWStep& s);

}  // namespace attnfc::kernels
