// Elementwise ops: broadcasting binary ops, unary maps, dropout.
#include <algorithm>
#include <cmath>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/activation.hpp"
#include "attnfc/kernels/dropout.hpp"
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

// Strides of t viewed as the broadcast shape (left-padded to 4 dims, 0 where broadcast).
Dims4 bstrides(const Tensor& t) {
  return detail::pad_strides(t.shape(), t.strides());
}

// The loops below walk rows (padded dims 0..2) and run a tight inner loop over dim 3,
// specialised for unit and zero (broadcast) strides so the compiler vectorises them.
using detail::for_rows;

// y[i] = f(a[i * sa], b[i * sb]) for i < n.
template <class F>
inline void map_row(float* y, const float* a, int64_t sa, const float* b, int64_t sb, int64_t n,
                    F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const float v = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], v);
  } else if (sa == 0 && sb == 1) {
    const float u = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = f(u, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
  }
}

// g[i * sg] += f(dy[i], o[i * so], y[i]) for i < n; with sg == 0 the row's terms are
// summed in index order first (a fixed order). kFresh: g is an unzeroed slot written
// here once per element (ag::grad_store).
template <bool kFresh, class F>
inline void grad_row(float* g, int64_t sg, const float* dy, const float* o, int64_t so,
                     const float* y, int64_t n, F f) {
  if (sg == 0) {
    float acc = 0.0f;
    for (int64_t i = 0; i < n; ++i) acc += f(dy[i], o[i * so], y[i]);
    grad_store<kFresh>(*g, acc);
  } else if (sg == 1 && so == 1) {
    for (int64_t i = 0; i < n; ++i) grad_store<kFresh>(g[i], f(dy[i], o[i], y[i]));
  } else if (sg == 1 && so == 0) {
    const float ov = *o;
    for (int64_t i = 0; i < n; ++i) grad_store<kFresh>(g[i], f(dy[i], ov, y[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) grad_store<kFresh>(g[i * sg], f(dy[i], o[i * so], y[i]));
  }
}

// True when t (strides st) receives several output rows (broadcast along dims 0..2):
// those rows must then be accumulated serially, in order.
bool rows_reduce(const Dims4& st, const Dims4& out_dims) {
  for (int i = 0; i < 3; ++i) {
    if (out_dims[i] > 1 && st[i] == 0) return true;
  }
  return false;
}

// dt += f(dy, other, y) over the broadcast, for one operand t (the other is o).
template <class F>
void binary_grad(const Tensor& t, const Tensor& o, const Tensor& y, F f) {
  if (!t.requires_grad()) return;
  const detail::RowLoop loop =
      detail::coalesce_rows({detail::pad_dims(y.shape()), bstrides(t), bstrides(o)});
  const Dims4 &d = loop.d, &ts = loop.s0, &os = loop.s1;
  float* g = t.grad();
  const float *od = o.data(), *yd = y.data(), *dy = y.grad();
  // Fresh only for an operand of y's shape (binary's assigns): no row is reduced.
  const bool fresh = grad_is_fresh(t);
  for_rows(d, !rows_reduce(ts, d), [&](int64_t a, int64_t b, int64_t c) {
    const int64_t yo = ((a * d[1] + b) * d[2] + c) * d[3];
    float* gr = g + detail::offset4(ts, a, b, c, 0);
    const float* orow = od + detail::offset4(os, a, b, c, 0);
    if (fresh)
      grad_row<true>(gr, ts[3], dy + yo, orow, os[3], yd + yo, d[3], f);
    else
      grad_row<false>(gr, ts[3], dy + yo, orow, os[3], yd + yo, d[3], f);
  });
}

void binary_backward(const TensorNode& n) {
  const Tensor &a = n.in[0], &b = n.in[1], &y = n.out;
  switch (static_cast<BinOp>(n.iarg[0])) {
    case BinOp::Add:
      binary_grad(a, b, y, [](float dy, float, float) { return dy; });
      binary_grad(b, a, y, [](float dy, float, float) { return dy; });
      break;
    case BinOp::Sub:
      binary_grad(a, b, y, [](float dy, float, float) { return dy; });
      binary_grad(b, a, y, [](float dy, float, float) { return -dy; });
      break;
    case BinOp::Mul:
      binary_grad(a, b, y, [](float dy, float bv, float) { return dy * bv; });
      binary_grad(b, a, y, [](float dy, float av, float) { return dy * av; });
      break;
    case BinOp::Div:
      // y = a / b:  da = dy / b,  db = -dy * y / b
      binary_grad(a, b, y, [](float dy, float bv, float) { return dy / bv; });
      binary_grad(b, b, y, [](float dy, float bv, float yv) { return -dy * yv / bv; });
      break;
  }
}

template <class F>
void binary_forward(const Tensor& a, const Tensor& b, const Tensor& y, F f) {
  if (a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous()) {
    // The common case (residual adds): one flat, vectorised loop.
    const float *ad = a.data(), *bd = b.data();
    float* yd = y.data();
    detail::flat_loop(y.numel(), [&](int64_t i) { yd[i] = f(ad[i], bd[i]); });
    return;
  }
  const detail::RowLoop loop =
      detail::coalesce_rows({detail::pad_dims(y.shape()), bstrides(a), bstrides(b)});
  const Dims4 &d = loop.d, &as = loop.s0, &bs = loop.s1;
  for_rows(d, true, [&](int64_t i, int64_t j, int64_t k) {
    map_row(y.data() + ((i * d[1] + j) * d[2] + k) * d[3],
            a.data() + detail::offset4(as, i, j, k, 0), as[3],
            b.data() + detail::offset4(bs, i, j, k, 0), bs[3], d[3], f);
  });
}

Tensor binary(const Tensor& a, const Tensor& b, BinOp op, const char* name) {
  const Shape s = broadcast_shape(a.shape(), b.shape(), name);
  TensorNode* node;
  Tensor y = make_output(s, name, binary_backward, {&a, &b}, &node);
  switch (op) {
    case BinOp::Add:
      binary_forward(a, b, y, [](float u, float v) { return u + v; });
      break;
    case BinOp::Sub:
      binary_forward(a, b, y, [](float u, float v) { return u - v; });
      break;
    case BinOp::Mul:
      binary_forward(a, b, y, [](float u, float v) { return u * v; });
      break;
    case BinOp::Div:
      binary_forward(a, b, y, [](float u, float v) { return u / v; });
      break;
  }
  if (node) {
    node->in[0] = a;
    node->in[1] = b;
    node->iarg[0] = static_cast<int64_t>(op);
    // An operand of the output's shape gets every gradient element once (binary_grad).
    node->assigns = static_cast<uint8_t>((a.shape() == s ? 1 : 0) | (b.shape() == s ? 2 : 0));
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
// keep(i) = random_uniform(seed, i) >= p; y = [r +] x * keep / (1 - p). The mask is
// recomputed in the backward from (seed, i) (kernels/dropout.hpp) instead of being
// stored. iarg[0]: seed (bit pattern); farg[0]: p; in[1]: the residual r of add_dropout.
void dropout_backward(const TensorNode& n) {
  const float* dy = n.out.grad();
  if (n.in[0].requires_grad()) {
    kernels::dropout_backward(dy, n.in[0].grad(), n.out.numel(), static_cast<uint64_t>(n.iarg[0]),
                              n.farg[0]);
  }
  if (n.in[1].defined() && n.in[1].requires_grad()) {
    float* dr = n.in[1].grad();
    detail::flat_loop(n.out.numel(), [&](int64_t i) { dr[i] += dy[i]; });
  }
}

void check_p(float p, const char* name) {
  if (!(p >= 0.0f && p <= 1.0f)) {
    op_error(name, "probability must be in [0, 1], got " + std::to_string(p));
  }
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
  check_p(p, "dropout");
  if (!training || p == 0.0f) return x_in;
  const Tensor x = x_in.contiguous();
  TensorNode* node;
  Tensor y = make_output(x.shape(), "dropout", dropout_backward, {&x}, &node);
  float* yd = y.data();
  if (p == 1.0f) {
    std::fill(yd, yd + y.numel(), 0.0f);  // everything dropped; the gradient is zero too
    if (node) node->backward = nullptr;
    return y;
  }
  kernels::dropout_forward(x.data(), nullptr, yd, x.numel(), seed, p);
  if (node) {
    node->in[0] = x;
    node->iarg[0] = static_cast<int64_t>(seed);
    node->farg[0] = p;
  }
  return y;
}

Tensor add_dropout(const Tensor& r_in, const Tensor& x_in, float p, uint64_t seed, bool training) {
  check_p(p, "add_dropout");
  if (!(r_in.shape() == x_in.shape())) {
    op_error("add_dropout",
             "residual " + r_in.shape().str() + " and input " + x_in.shape().str() + " differ");
  }
  if (!training || p == 0.0f || p == 1.0f) return add(r_in, dropout(x_in, p, seed, training));
  const Tensor r = r_in.contiguous(), x = x_in.contiguous();
  TensorNode* node;
  Tensor y = make_output(x.shape(), "add_dropout", dropout_backward, {&x, &r}, &node);
  kernels::dropout_forward(x.data(), r.data(), y.data(), x.numel(), seed, p);
  if (node) {
    node->in[0] = x;
    node->in[1] = r;
    node->iarg[0] = static_cast<int64_t>(seed);
    node->farg[0] = p;
  }
  return y;
}

}  // namespace attnfc::ag
