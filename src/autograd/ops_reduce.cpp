// Reductions (sum / mean over an axis or everything) and concat.
#include <cstring>
#include <new>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace {
using detail::Dims4;

// x viewed as 4-d with the reduced axis at padded position `axis`; y's strides are
// x's padded dims with the reduced axis given stride 0 (so x index -> y element).
struct ReduceView {
  Dims4 dims, xs, ys;
};

ReduceView reduce_view(const Tensor& x, int dim) {
  ReduceView v;
  v.dims = detail::pad_dims(x.shape());
  v.xs = detail::pad_strides(x.shape(), x.strides());
  const int axis = 4 - x.ndim() + dim;
  // y is contiguous over x's dims with the axis removed.
  int64_t acc = 1;
  for (int i = 3; i >= 0; --i) {
    if (i == axis) {
      v.ys[i] = 0;
      continue;
    }
    v.ys[i] = v.dims[i] == 1 ? 0 : acc;
    acc *= v.dims[i];
  }
  return v;
}

// y = sum_axis(x) * farg[0]  ->  dx += dy (broadcast back) * farg[0]
void sum_backward(const TensorNode& n) {
  const Tensor& x = n.in[0];
  const ReduceView v = reduce_view(x, static_cast<int>(n.iarg[0]));
  const float s = n.farg[0];
  const float* dy = n.out.grad();
  float* dx = x.grad();
  detail::loop4_parallel(v.dims, [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    dx[detail::offset4(v.xs, a, b, c, e)] += s * dy[detail::offset4(v.ys, a, b, c, e)];
  });
}

Tensor reduce(const Tensor& x, int dim_in, bool keepdim, bool is_mean, const char* name) {
  if (x.ndim() == 0) op_error(name, "needs a tensor with at least one dimension");
  const int dim = normalize_dim(dim_in, x.ndim(), name);
  Shape s;
  for (int i = 0; i < x.ndim(); ++i) {
    if (i != dim) {
      s.dims[s.ndim++] = x.size(i);
    } else if (keepdim) {
      s.dims[s.ndim++] = 1;
    }
  }
  if (s.ndim == 0) s = Shape{1};
  const int64_t count = x.size(dim);
  const float factor = is_mean ? (count > 0 ? 1.0f / static_cast<float>(count) : 0.0f) : 1.0f;
  TensorNode* node;
  Tensor y = make_output(s, name, sum_backward, {&x}, &node);
  float* yd = y.data();
  std::memset(yd, 0, static_cast<size_t>(y.numel()) * sizeof(float));
  // Serial over x in index order: every output sums its inputs along the axis in
  // increasing index (a fixed order).
  const ReduceView v = reduce_view(x, dim);
  const float* xd = x.data();
  detail::loop4(v.dims, [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    yd[detail::offset4(v.ys, a, b, c, e)] += xd[detail::offset4(v.xs, a, b, c, e)];
  });
  if (is_mean) {
    for (int64_t i = 0; i < y.numel(); ++i) yd[i] *= factor;
  }
  if (node) {
    node->in[0] = x;
    node->iarg[0] = dim;
    node->farg[0] = factor;
  }
  return y;
}

// y[0] = farg[0] * sum(x)  ->  dx += farg[0] * dy[0]
void sum_all_backward(const TensorNode& n) {
  const Tensor& x = n.in[0];
  const float g = n.farg[0] * n.out.grad()[0];
  float* dx = x.grad();
  if (x.is_contiguous()) {
    detail::flat_loop(x.numel(), [&](int64_t i) { dx[i] += g; });
    return;
  }
  const Dims4 d = detail::pad_dims(x.shape()), xs = detail::pad_strides(x.shape(), x.strides());
  detail::loop4_parallel(d, [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    dx[detail::offset4(xs, a, b, c, e)] += g;
  });
}

Tensor reduce_all(const Tensor& x, bool is_mean, const char* name) {
  const int64_t count = x.numel();
  TensorNode* node;
  Tensor y = make_output(Shape{1}, name, sum_all_backward, {&x}, &node);
  // Double accumulation in a fixed order: accurate and thread-count independent.
  double acc = 0.0;
  const float* xd = x.data();
  if (x.is_contiguous()) {
    // Eight interleaved partial sums (vectorisable), combined in a fixed order.
    double part[8] = {};
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
      for (int j = 0; j < 8; ++j) part[j] += xd[i + j];
    }
    for (; i < count; ++i) part[0] += xd[i];
    acc = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  } else {
    const Dims4 d = detail::pad_dims(x.shape()), xs = detail::pad_strides(x.shape(), x.strides());
    detail::loop4(d, [&](int64_t a, int64_t b, int64_t c, int64_t e) {
      acc += xd[detail::offset4(xs, a, b, c, e)];
    });
  }
  const double factor = is_mean ? (count > 0 ? 1.0 / static_cast<double>(count) : 0.0) : 1.0;
  y.data()[0] = static_cast<float>(acc * factor);
  if (node) {
    node->in[0] = x;
    node->farg[0] = static_cast<float>(factor);
  }
  return y;
}

// y = concat(parts, dim)  ->  dparts[k] += dy[slice k]
void concat_backward(const TensorNode& n) {
  const int dim = static_cast<int>(n.iarg[0]);
  const Tensor& y = n.out;
  int64_t offset = 0;
  for (int k = 0; k < n.num_parts; ++k) {
    const Tensor& p = n.parts[k];
    if (p.requires_grad()) {
      detail::accumulate_strided(p.grad(), p.strides(), y.grad() + offset * y.stride(dim),
                                 y.strides(), p.shape(), 1.0f);
    }
    offset += p.size(dim);
  }
}
}  // namespace

Tensor sum(const Tensor& x, int dim, bool keepdim) {
  return reduce(x, dim, keepdim, false, "sum");
}
Tensor mean(const Tensor& x, int dim, bool keepdim) {
  return reduce(x, dim, keepdim, true, "mean");
}
Tensor sum_all(const Tensor& x) {
  return reduce_all(x, false, "sum_all");
}
Tensor mean_all(const Tensor& x) {
  return reduce_all(x, true, "mean_all");
}

Tensor concat(std::span<const Tensor> parts, int dim_in) {
  if (parts.empty()) op_error("concat", "needs at least one tensor");
  const Tensor& first = parts[0];
  const int dim = normalize_dim(dim_in, first.ndim(), "concat");
  Shape s = first.shape();
  s.dims[dim] = 0;
  for (const Tensor& p : parts) {
    bool same = p.ndim() == first.ndim();
    for (int i = 0; same && i < p.ndim(); ++i) same = i == dim || p.size(i) == first.size(i);
    if (!same) {
      op_error("concat", "part " + p.shape().str() + " does not match " + first.shape().str() +
                             " outside dim " + std::to_string(dim));
    }
    s.dims[dim] += p.size(dim);
  }
  bool record = false;
  for (const Tensor& p : parts) record = record || should_record({&p});
  TensorNode* node;
  // make_output decides recording from its inputs; pass the first part that needs it.
  const Tensor* trigger = &first;
  for (const Tensor& p : parts) {
    if (p.requires_grad()) trigger = &p;
  }
  Tensor y = make_output(s, "concat", concat_backward, {trigger}, &node);
  int64_t offset = 0;
  for (const Tensor& p : parts) {
    detail::copy_strided(y.data() + offset * y.stride(dim), y.strides(), p.data(), p.strides(),
                         p.shape());
    offset += p.size(dim);
  }
  if (node && record) {
    auto* copy = static_cast<Tensor*>(arena_alloc(sizeof(Tensor) * parts.size()));
    for (size_t k = 0; k < parts.size(); ++k) new (&copy[k]) Tensor(parts[k]);
    node->parts = copy;
    node->num_parts = static_cast<int>(parts.size());
    node->iarg[0] = dim;
  }
  return y;
}

}  // namespace attnfc::ag
