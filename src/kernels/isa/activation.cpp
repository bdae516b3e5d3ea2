// GELU, vectorised and parallel over fixed-size chunks (elementwise, so the
// result of every element is independent of the thread count). The formula
// lives in simd_gelu.hpp, shared with the GEMM epilogue.
#include "isa.hpp"

#include "attnfc/kernels/activation.hpp"

#include "parallel.hpp"
#include "simd_gelu.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

namespace {
using namespace simd;

constexpr int64_t kChunk = 1 << 14;
}  // namespace

void gelu_forward(const float* x, float* y, int64_t n, bool tanh_approx) {
  if (n <= 0) return;
  detail::parallel_chunks(n, kChunk, 30, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i += kLanes) {
      const Mask t = tail_mask(static_cast<int>(std::min<int64_t>(kLanes, e - i)));
      store(y + i, gelu(load(x + i, t), tanh_approx), t);
    }
  });
}

void gelu_backward(const float* x, const float* dy, float* dx, int64_t n, bool tanh_approx) {
  if (n <= 0) return;
  detail::parallel_chunks(n, kChunk, 40, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i += kLanes) {
      const Mask t = tail_mask(static_cast<int>(std::min<int64_t>(kLanes, e - i)));
      const VF g = gelu_grad(load(x + i, t), tanh_approx);
      store(dx + i, fmadd(g, load(dy + i, t), load(dx + i, t)), t);
    }
  });
}

}  // namespace attnfc::kernels::ATTNFC_ISA
