// AdamW update, vectorised and parallel over fixed-size chunks (elementwise:
// every element's result is independent of the thread count).
#include "isa.hpp"

#include "attnfc/kernels/adamw.hpp"

#include <cmath>

#include "parallel.hpp"
#include "simd_math.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n,
                  const AdamWStep& s) {
  using namespace simd;
  if (n <= 0) return;
  const double step = static_cast<double>(s.step < 1 ? 1 : s.step);
  const float inv_bc1 = static_cast<float>(1.0 / (1.0 - std::pow(double{s.beta1}, step)));
  const float inv_bc2 = static_cast<float>(1.0 / (1.0 - std::pow(double{s.beta2}, step)));
  detail::parallel_chunks(n, 1 << 14, 16, [&](int64_t b, int64_t e) {
    const VF b1 = set1(s.beta1), c1 = set1(1.0f - s.beta1);
    const VF b2 = set1(s.beta2), c2 = set1(1.0f - s.beta2);
    const VF ib1 = set1(inv_bc1), ib2 = set1(inv_bc2), eps = set1(s.eps);
    const VF lr = set1(s.lr), wd = set1(s.weight_decay);
    for (int64_t i = b; i < e; i += kLanes) {
      const Mask t = tail_mask(static_cast<int>(std::min<int64_t>(kLanes, e - i)));
      const VF g = load(grad + i, t);
      const VF mi = fmadd(b1, load(m + i, t), mul(c1, g));
      const VF vi = fmadd(b2, load(v + i, t), mul(mul(c2, g), g));
      store(m + i, mi, t);
      store(v + i, vi, t);
      const VF p = load(param + i, t);
      const VF upd = fmadd(wd, p, div(mul(mi, ib1), add(sqrt(mul(vi, ib2)), eps)));
      store(param + i, fnmadd(lr, upd, p), t);
    }
  });
}

}  // namespace attnfc::kernels::ATTNFC_ISA
