// Elementwise ops: broadcasting binary ops, unary maps, dropout.
#include <algorithm>
#include <cmath>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/activation.hpp"
#include "attnfc/kernels/random.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace {
using detail::Dims4;

// ---------------------------------------------------------------- binary, broadcasting
enum class BinOp : int { Add, Sub, Mul, Div };

Shape broadcast_shape(const Shape& a, const Shape& b, const char* op) {
  Shape s;
  s.ndim = std::max(a.ndim, b.ndim);
  for (int i = 0; i < s.ndim; ++i) {
    const int ia = a.ndim - s.ndim + i, ib = b.ndim - s.ndim + i;
    const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      op_error(op, "shapes " + a.str() + " and " + b.str() + " do not broadcast");
    }
    s.dims[i] = da == 1 ? db : da;
  }
  return s;
}

// Strides of t viewed as the broadcast shape `out` (left-padded to 4 dims).
Dims4 bstrides(const Tensor& t) {
  return detail::pad_strides(t.shape(), t.strides());
}

bool has_reduction(const Tensor& t, const Dims4& out_dims) {
  const Dims4 st = bstrides(t), td = detail::pad_dims(t.shape());
  for (int i = 0; i < 4; ++i) {
    if (out_dims[i] > 1 && (st[i] == 0 || td[i] == 1)) return true;
  }
  return false;
}

// grad_t[bcast(i)] += dy[i] * coef(i). Broadcast operands receive sums over the
// broadcast dims, accumulated serially in index order (fixed order).
template <class Coef>
void accumulate_grad(const Tensor& t, const Tensor& out, Coef&& coef) {
  if (!t.requires_grad()) return;
  const Dims4 d = detail::pad_dims(out.shape());
  const Dims4 ts = bstrides(t), os = detail::pad_strides(out.shape(), out.strides());
  float* g = t.grad();
  const float* dy = out.grad();
  auto body = [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    const int64_t o = detail::offset4(os, a, b, c, e);
    g[detail::offset4(ts, a, b, c, e)] += dy[o] * coef(a, b, c, e, o);
  };
  if (has_reduction(t, d)) {
    detail::loop4(d, body);
  } else {
    detail::loop4_parallel(d, body);
  }
}

void binary_backward(const TensorNode& n) {
  const Tensor &a = n.in[0], &b = n.in[1], &y = n.out;
  const Dims4 as = bstrides(a), bs = bstrides(b);
  const float *ad = a.data(), *bd = b.data(), *yd = y.data();
  switch (static_cast<BinOp>(n.iarg[0])) {
    case BinOp::Add:
      accumulate_grad(a, y, [](int64_t, int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
      accumulate_grad(b, y, [](int64_t, int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
      break;
    case BinOp::Sub:
      accumulate_grad(a, y, [](int64_t, int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
      accumulate_grad(b, y, [](int64_t, int64_t, int64_t, int64_t, int64_t) { return -1.0f; });
      break;
    case BinOp::Mul:
      accumulate_grad(a, y, [&](int64_t i, int64_t j, int64_t k, int64_t l, int64_t) {
        return bd[detail::offset4(bs, i, j, k, l)];
      });
      accumulate_grad(b, y, [&](int64_t i, int64_t j, int64_t k, int64_t l, int64_t) {
        return ad[detail::offset4(as, i, j, k, l)];
      });
      break;
    case BinOp::Div:
      // y = a / b:  da = dy / b,  db = -dy * y / b
      accumulate_grad(a, y, [&](int64_t i, int64_t j, int64_t k, int64_t l, int64_t) {
        return 1.0f / bd[detail::offset4(bs, i, j, k, l)];
      });
      accumulate_grad(b, y, [&](int64_t i, int64_t j, int64_t k, int64_t l, int64_t o) {
        return -yd[o] / bd[detail::offset4(bs, i, j, k, l)];
      });
      break;
  }
}

Tensor binary(const Tensor& a, const Tensor& b, BinOp op, const char* name) {
  const Shape s = broadcast_shape(a.shape(), b.shape(), name);
  TensorNode* node;
  Tensor y = make_output(s, name, binary_backward, {&a, &b}, &node);
  float* yd = y.data();
  const float *ad = a.data(), *bd = b.data();
  if (a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous()) {
    // The common case (residual adds): flat loops the compiler vectorises.
    const int64_t n = s.numel();
    switch (op) {
      case BinOp::Add:
        detail::flat_loop(n, [&](int64_t i) { yd[i] = ad[i] + bd[i]; });
        break;
      case BinOp::Sub:
        detail::flat_loop(n, [&](int64_t i) { yd[i] = ad[i] - bd[i]; });
        break;
      case BinOp::Mul:
        detail::flat_loop(n, [&](int64_t i) { yd[i] = ad[i] * bd[i]; });
        break;
      case BinOp::Div:
        detail::flat_loop(n, [&](int64_t i) { yd[i] = ad[i] / bd[i]; });
        break;
    }
  } else {
    const Dims4 d = detail::pad_dims(s), as = bstrides(a), bs = bstrides(b);
    const Dims4 ys = detail::pad_strides(s, y.strides());
    detail::loop4_parallel(d, [&](int64_t i, int64_t j, int64_t k, int64_t l) {
      const float u = ad[detail::offset4(as, i, j, k, l)], v = bd[detail::offset4(bs, i, j, k, l)];
      float r = 0.0f;
      switch (op) {
        case BinOp::Add:
          r = u + v;
          break;
        case BinOp::Sub:
          r = u - v;
          break;
        case BinOp::Mul:
          r = u * v;
          break;
        case BinOp::Div:
          r = u / v;
          break;
      }
      yd[detail::offset4(ys, i, j, k, l)] = r;
    });
  }
  if (node) {
    node->in[0] = a;
    node->in[1] = b;
    node->iarg[0] = static_cast<int64_t>(op);
  }
  return y;
}

// ---------------------------------------------------------------- unary maps
// y = f(x) on a contiguous copy of x; dx += dy * f'(x, y).
enum class UnOp : int { Scale, AddScalar, Relu, Tanh, Exp, Log, Sqrt, GeluTanh, GeluErf };

void unary_backward(const TensorNode& n) {
  const Tensor &x = n.in[0], &y = n.out;
  const int64_t cnt = y.numel();
  const float *xd = x.data(), *yd = y.data(), *dy = y.grad();
  float* dx = x.grad();
  const float s = n.farg[0];
  switch (static_cast<UnOp>(n.iarg[0])) {
    case UnOp::Scale:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += dy[i] * s; });
      break;
    case UnOp::AddScalar:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += dy[i]; });
      break;
    case UnOp::Relu:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += xd[i] > 0.0f ? dy[i] : 0.0f; });
      break;
    case UnOp::Tanh:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += dy[i] * (1.0f - yd[i] * yd[i]); });
      break;
    case UnOp::Exp:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += dy[i] * yd[i]; });
      break;
    case UnOp::Log:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += dy[i] / xd[i]; });
      break;
    case UnOp::Sqrt:
      detail::flat_loop(cnt, [&](int64_t i) { dx[i] += dy[i] * 0.5f / yd[i]; });
      break;
    case UnOp::GeluTanh:
      kernels::gelu_backward(xd, dy, dx, cnt, true);
      break;
    case UnOp::GeluErf:
      kernels::gelu_backward(xd, dy, dx, cnt, false);
      break;
  }
}

Tensor unary(const Tensor& x_in, UnOp op, float s, const char* name) {
  const Tensor x = x_in.contiguous();
  TensorNode* node;
  Tensor y = make_output(x.shape(), name, unary_backward, {&x}, &node);
  const int64_t cnt = x.numel();
  const float* xd = x.data();
  float* yd = y.data();
  switch (op) {
    case UnOp::Scale:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = xd[i] * s; });
      break;
    case UnOp::AddScalar:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = xd[i] + s; });
      break;
    case UnOp::Relu:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = xd[i] > 0.0f ? xd[i] : 0.0f; });
      break;
    case UnOp::Tanh:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = std::tanh(xd[i]); });
      break;
    case UnOp::Exp:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = std::exp(xd[i]); });
      break;
    case UnOp::Log:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = std::log(xd[i]); });
      break;
    case UnOp::Sqrt:
      detail::flat_loop(cnt, [&](int64_t i) { yd[i] = std::sqrt(xd[i]); });
      break;
    case UnOp::GeluTanh:
      kernels::gelu_forward(xd, yd, cnt, true);
      break;
    case UnOp::GeluErf:
      kernels::gelu_forward(xd, yd, cnt, false);
      break;
  }
  if (node) {
    node->in[0] = x;
    node->iarg[0] = static_cast<int64_t>(op);
    node->farg[0] = s;
  }
  return y;
}

// ---------------------------------------------------------------- dropout
// keep(i) = random_uniform(seed, i) >= p; y = x * keep / (1 - p). The mask is
// recomputed in the backward from (seed, i) instead of being stored.
// iarg[0]: seed (bit pattern); farg[0]: p.
void dropout_backward(const TensorNode& n) {
  const uint64_t seed = static_cast<uint64_t>(n.iarg[0]);
  const float p = n.farg[0], inv_keep = 1.0f / (1.0f - p);
  const float* dy = n.out.grad();
  float* dx = n.in[0].grad();
  detail::flat_loop(n.out.numel(), [&](int64_t i) {
    if (kernels::random_uniform(seed, static_cast<uint64_t>(i)) >= p) dx[i] += dy[i] * inv_keep;
  });
}
}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return binary(a, b, BinOp::Add, "add");
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return binary(a, b, BinOp::Sub, "sub");
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return binary(a, b, BinOp::Mul, "mul");
}
Tensor div(const Tensor& a, const Tensor& b) {
  return binary(a, b, BinOp::Div, "div");
}
Tensor scale(const Tensor& x, float s) {
  return unary(x, UnOp::Scale, s, "scale");
}
Tensor add_scalar(const Tensor& x, float s) {
  return unary(x, UnOp::AddScalar, s, "add_scalar");
}
Tensor relu(const Tensor& x) {
  return unary(x, UnOp::Relu, 0.0f, "relu");
}
Tensor gelu(const Tensor& x, bool tanh_approx) {
  return unary(x, tanh_approx ? UnOp::GeluTanh : UnOp::GeluErf, 0.0f, "gelu");
}
Tensor tanh(const Tensor& x) {
  return unary(x, UnOp::Tanh, 0.0f, "tanh");
}
Tensor exp(const Tensor& x) {
  return unary(x, UnOp::Exp, 0.0f, "exp");
}
Tensor log(const Tensor& x) {
  return unary(x, UnOp::Log, 0.0f, "log");
}
Tensor sqrt(const Tensor& x) {
  return unary(x, UnOp::Sqrt, 0.0f, "sqrt");
}

Tensor dropout(const Tensor& x_in, float p, uint64_t seed, bool training) {
  if (!(p >= 0.0f && p <= 1.0f)) {
    op_error("dropout", "probability must be in [0, 1], got " + std::to_string(p));
  }
  if (!training || p == 0.0f) return x_in;
  const Tensor x = x_in.contiguous();
  TensorNode* node;
  Tensor y = make_output(x.shape(), "dropout", dropout_backward, {&x}, &node);
  const float* xd = x.data();
  float* yd = y.data();
  if (p == 1.0f) {
    std::fill(yd, yd + y.numel(), 0.0f);  // everything dropped; the gradient is zero too
    if (node) node->backward = nullptr;
    return y;
  }
  const float inv_keep = 1.0f / (1.0f - p);
  detail::flat_loop(x.numel(), [&](int64_t i) {
    yd[i] = kernels::random_uniform(seed, static_cast<uint64_t>(i)) >= p ? xd[i] * inv_keep : 0.0f;
  });
  if (node) {
    node->in[0] = x;
    node->iarg[0] = static_cast<int64_t>(seed);
    node->farg[0] = p;
  }
  return y;
}

}  // namespace attnfc::ag
