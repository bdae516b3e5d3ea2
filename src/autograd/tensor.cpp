// Tensor handles and views. A view shares the data storage and, with the same
// strides and offset, the grad storage: whatever a consumer of the view
// accumulates into view.grad() lands in the right strided elements of the base's
// gradient, so a view needs no backward of its own. Views are still recorded on
// the tape (as nodes without a backward) so the tape shows the whole computation.
#include "attnfc/autograd/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "strided.hpp"

namespace attnfc::ag {

Shape::Shape(std::initializer_list<int64_t> d) {
  if (d.size() > static_cast<size_t>(kMaxDims)) {
    throw std::invalid_argument("Shape: at most 4 dimensions, got " + std::to_string(d.size()));
  }
  for (int64_t v : d) {
    if (v < 0) throw std::invalid_argument("Shape: negative dimension " + std::to_string(v));
    dims[ndim++] = v;
  }
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[i];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (ndim != o.ndim) return false;
  for (int i = 0; i < ndim; ++i) {
    if (dims[i] != o.dims[i]) return false;
  }
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::array<int64_t, kMaxDims> contiguous_strides(const Shape& s) {
  std::array<int64_t, kMaxDims> st{};
  int64_t acc = 1;
  for (int i = s.ndim - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s.dims[i];
  }
  return st;
}

Tensor::Tensor(const Shape& s, const std::array<int64_t, kMaxDims>& strides, float* data,
               float* grad, TensorNode* node)
    : shape_(s), strides_(strides), data_(data), grad_(grad), node_(node) {}

Tensor::Tensor(const Shape& s, const std::array<int64_t, kMaxDims>& strides, float* data,
               GradSlot* slot, int64_t grad_offset, TensorNode* node)
    : shape_(s),
      strides_(strides),
      data_(data),
      slot_(slot),
      grad_offset_(grad_offset),
      node_(node) {}

Tensor Tensor::restrided(const Shape& s, const std::array<int64_t, kMaxDims>& strides,
                         int64_t offset, TensorNode* node) const {
  Tensor v(s, strides, data_ + offset, grad_ ? grad_ + offset : nullptr, node);
  v.slot_ = slot_;
  v.grad_offset_ = slot_ ? grad_offset_ + offset : 0;
  return v;
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = shape_.ndim - 1; i >= 0; --i) {
    if (shape_.dims[i] == 1) continue;  // the stride of a size-1 dim is never used
    if (strides_[i] != expected) return false;
    expected *= shape_.dims[i];
  }
  return true;
}

float Tensor::item() const {
  if (numel() != 1) {
    throw std::invalid_argument("Tensor::item: needs one element, shape is " + shape_.str());
  }
  return data_[0];
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != shape_.ndim) {
    throw std::invalid_argument("Tensor::at: " + std::to_string(index.size()) +
                                " indices for shape " + shape_.str());
  }
  int64_t off = 0;
  int d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_.dims[d]) {
      throw std::out_of_range("Tensor::at: index " + std::to_string(i) + " out of range for dim " +
                              std::to_string(d) + " of shape " + shape_.str());
    }
    off += i * strides_[d++];
  }
  return data_[off];
}

namespace {
// A view of `base` with a new shape/strides/offset, recorded on the tape when it
// carries a gradient and a graph is recording.
Tensor make_view(const Tensor& base, const char* op, const Shape& s,
                 const std::array<int64_t, kMaxDims>& st, int64_t offset) {
  TensorNode* node = nullptr;
  if (base.requires_grad() && grad_enabled() && graph_active()) {
    node = record_node(op, nullptr);
    node->in[0] = base;
  }
  Tensor v = base.restrided(s, st, offset, node);
  if (node) node->out = v;
  return v;
}

void copy_backward(const TensorNode& n) {
  // x (any strides) += dy (contiguous, x's shape)
  detail::accumulate_strided(n.in[0].grad(), n.in[0].strides(), n.out.grad(), n.out.strides(),
                             n.out.shape(), 1.0f);
}
}  // namespace

Tensor Tensor::reshape(Shape s) const {
  const int64_t known = s.numel();
  if (known != numel()) {
    op_error("reshape", "cannot reshape " + shape_.str() + " (" + std::to_string(numel()) +
                            " elements) to " + s.str());
  }
  if (!is_contiguous()) {
    op_error("reshape",
             "tensor of shape " + shape_.str() + " is not contiguous; call contiguous() first");
  }
  return make_view(*this, "reshape", s, contiguous_strides(s), 0);
}

Tensor Tensor::transpose(int a, int b) const {
  a = normalize_dim(a, ndim(), "transpose");
  b = normalize_dim(b, ndim(), "transpose");
  Shape s = shape_;
  auto st = strides_;
  std::swap(s.dims[a], s.dims[b]);
  std::swap(st[a], st[b]);
  return make_view(*this, "transpose", s, st, 0);
}

Tensor Tensor::permute(std::initializer_list<int> order) const {
  if (static_cast<int>(order.size()) != ndim()) {
    op_error("permute",
             "order has " + std::to_string(order.size()) + " entries for shape " + shape_.str());
  }
  Shape s = shape_;
  std::array<int64_t, kMaxDims> st{};
  bool seen[kMaxDims] = {};
  int i = 0;
  for (int d : order) {
    d = normalize_dim(d, ndim(), "permute");
    if (seen[d]) op_error("permute", "dim " + std::to_string(d) + " appears twice");
    seen[d] = true;
    s.dims[i] = shape_.dims[d];
    st[i] = strides_[d];
    ++i;
  }
  return make_view(*this, "permute", s, st, 0);
}

Tensor Tensor::slice(int dim, int64_t begin, int64_t end) const {
  dim = normalize_dim(dim, ndim(), "slice");
  const int64_t n = shape_.dims[dim];
  if (begin < 0) begin += n;
  if (end < 0) end += n;
  if (begin < 0 || end > n || begin > end) {
    op_error("slice", "range [" + std::to_string(begin) + ", " + std::to_string(end) +
                          ") is invalid for dim " + std::to_string(dim) + " of shape " +
                          shape_.str());
  }
  Shape s = shape_;
  s.dims[dim] = end - begin;
  return make_view(*this, "slice", s, strides_, begin * strides_[dim]);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  TensorNode* node;
  Tensor out = make_output(shape_, "contiguous", copy_backward, {this}, &node);
  detail::copy_strided(out.data(), out.strides(), data_, strides_, shape_);
  if (node) node->in[0] = *this;
  return out;
}

}  // namespace attnfc::ag
