// Masked regression losses: L = sum_i m_i f(pred_i - target_i) / sum_i m_i.
// Sums run in double, serially in index order (fixed order). When the mask
// selects nothing the loss is 0 with a zero gradient (never 0/0 = NaN).
#include <cmath>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace {
using detail::Dims4;

enum class Loss : int { Mse, Mae, Huber, Quantile };

// f(d) and f'(d) for d = pred - target. a = delta (Huber) or q (quantile).
inline double loss_value(Loss kind, double d, double a) {
  switch (kind) {
    case Loss::Mse:
      return d * d;
    case Loss::Mae:
      return std::fabs(d);
    case Loss::Huber:
      return std::fabs(d) <= a ? 0.5 * d * d : a * (std::fabs(d) - 0.5 * a);
    case Loss::Quantile:
      return d >= 0.0 ? (1.0 - a) * d : -a * d;  // pinball on -(y - pred)
  }
  return 0.0;
}

inline double loss_slope(Loss kind, double d, double a) {
  switch (kind) {
    case Loss::Mse:
      return 2.0 * d;
    case Loss::Mae:
      return d > 0.0 ? 1.0 : (d < 0.0 ? -1.0 : 0.0);
    case Loss::Huber:
      return std::fabs(d) <= a ? d : (d > 0.0 ? a : -a);
    case Loss::Quantile:
      return d > 0.0 ? 1.0 - a : (d < 0.0 ? -a : 0.0);
  }
  return 0.0;
}

struct LossView {
  Dims4 dims, ps, ts, ms;
};

LossView loss_view(const Tensor& pred, const Tensor& target, const Tensor& mask) {
  LossView v;
  v.dims = detail::pad_dims(pred.shape());
  v.ps = detail::pad_strides(pred.shape(), pred.strides());
  v.ts = detail::pad_strides(target.shape(), target.strides());
  v.ms = mask.defined() ? detail::pad_strides(mask.shape(), mask.strides()) : Dims4{};
  return v;
}

// f(pred offset, target offset, mask offset) for every element, in index order; a flat
// loop when all operands are contiguous (the usual case). `independent`: f writes only
// its own element, so the flat loop may be split over threads (the backward).
template <class F>
void for_each_element(const Tensor& pred, const Tensor& target, const Tensor& mask, F&& f,
                      bool independent = false) {
  if (pred.is_contiguous() && target.is_contiguous() && (!mask.defined() || mask.is_contiguous())) {
    const int64_t n = pred.numel();
    detail::index_loop(n, independent && n >= detail::kParallelMin, [&](int64_t i) { f(i, i, i); });
    return;
  }
  const LossView v = loss_view(pred, target, mask);
  detail::loop4(v.dims, [&](int64_t i, int64_t j, int64_t k, int64_t l) {
    f(detail::offset4(v.ps, i, j, k, l), detail::offset4(v.ts, i, j, k, l),
      detail::offset4(v.ms, i, j, k, l));
  });
}

// in: pred, target, mask; iarg[0]: kind; farg: 0 parameter, 1 1/sum(mask) (0 if empty).
void loss_backward(const TensorNode& n) {
  const Tensor &pred = n.in[0], &target = n.in[1], &mask = n.in[2];
  const auto kind = static_cast<Loss>(n.iarg[0]);
  const double a = n.farg[0];
  const double g = static_cast<double>(n.out.grad()[0]) * n.farg[1];
  const float *pd = pred.data(), *td = target.data(), *md = mask.defined() ? mask.data() : nullptr;
  float* dp = pred.requires_grad() ? pred.grad() : nullptr;
  float* dt = target.requires_grad() ? target.grad() : nullptr;
  for_each_element(
      pred, target, mask,
      [&](int64_t po, int64_t to, int64_t mo) {
        const double m = md ? md[mo] : 1.0;
        if (m == 0.0) return;
        const double d = static_cast<double>(pd[po]) - td[to];
        const float s = static_cast<float>(g * m * loss_slope(kind, d, a));
        if (dp) dp[po] += s;
        if (dt) dt[to] -= s;
      },
      dt == nullptr);  // pred and target may be views of one gradient: then in order
}

Tensor masked_loss(const Tensor& pred, const Tensor& target, const Tensor& mask, Loss kind,
                   double param, const char* name) {
  if (!(pred.shape() == target.shape())) {
    op_error(name, "pred " + pred.shape().str() + " and target " + target.shape().str() +
                       " must have the same shape");
  }
  if (mask.defined() && !(mask.shape() == pred.shape())) {
    op_error(name, "mask " + mask.shape().str() + " must have pred's shape " + pred.shape().str());
  }
  const float *pd = pred.data(), *td = target.data(), *md = mask.defined() ? mask.data() : nullptr;
  double total = 0.0, weight = 0.0;
  for_each_element(pred, target, mask, [&](int64_t po, int64_t to, int64_t mo) {
    const double m = md ? md[mo] : 1.0;
    if (m == 0.0) return;
    total += m * loss_value(kind, static_cast<double>(pd[po]) - td[to], param);
    weight += m;
  });
  const double inv = weight > 0.0 ? 1.0 / weight : 0.0;
  TensorNode* node;
  Tensor y = make_output(Shape{1}, name, loss_backward, {&pred, &target}, &node);
  y.data()[0] = static_cast<float>(total * inv);
  if (node) {
    node->in[0] = pred;
    node->in[1] = target;
    node->in[2] = mask;
    node->iarg[0] = static_cast<int64_t>(kind);
    node->farg[0] = static_cast<float>(param);
    node->farg[1] = static_cast<float>(inv);
  }
  return y;
}
}  // namespace

Tensor mse_loss(const Tensor& pred, const Tensor& target, const Tensor& mask) {
  return masked_loss(pred, target, mask, Loss::Mse, 0.0, "mse_loss");
}
Tensor mae_loss(const Tensor& pred, const Tensor& target, const Tensor& mask) {
  return masked_loss(pred, target, mask, Loss::Mae, 0.0, "mae_loss");
}
Tensor huber_loss(const Tensor& pred, const Tensor& target, float delta, const Tensor& mask) {
  if (!(delta > 0.0f)) op_error("huber_loss", "delta must be > 0, got " + std::to_string(delta));
  return masked_loss(pred, target, mask, Loss::Huber, delta, "huber_loss");
}
Tensor quantile_loss(const Tensor& pred, const Tensor& target, float q, const Tensor& mask) {
  if (!(q > 0.0f && q < 1.0f)) {
    op_error("quantile_loss", "quantile must be in (0, 1), got " + std::to_string(q));
  }
  return masked_loss(pred, target, mask, Loss::Quantile, q, "quantile_loss");
}

}  // namespace attnfc::ag
