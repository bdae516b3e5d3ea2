// INTERIM: forwards to the reference until the vectorised kernel lands (issue 4).
#include "attnfc/kernels/adamw.hpp"

namespace attnfc::kernels {
void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n,
                  const AdamWStep& s) {
  adamw_update_reference(param, grad, m, v, n, s);
}
}  // namespace attnfc::kernels
