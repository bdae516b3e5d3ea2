#pragma once
// Tensor: float32, row-major, up to 4 dimensions, with shape and strides.
// A Tensor is a small value handle (no heap allocation to copy it). Its memory
// lives either in the current Graph's arena (activations, recycled every step)
// or in a ParameterSet (weights, allocated once). Views share storage.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace attnfc::ag {

constexpr int kMaxDims = 4;

struct Shape {
  int ndim = 0;
  std::array<int64_t, kMaxDims> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  int64_t operator[](int i) const { return dims[i < 0 ? i + ndim : i]; }
  int64_t numel() const;
  bool operator==(const Shape& o) const;
  std::string str() const;  // "[2, 3, 4]"
};

struct TensorNode;  // tape bookkeeping, defined by the engine

namespace detail {
// A parameter's gradient address as this thread sees it: itself, or its place in the
// packed buffer of an active GradientRedirectScope (parameters.hpp).
float* parameter_grad(float* grad);
}  // namespace detail

// Gradient storage of one op output, materialised lazily: it lives in the output's tape
// node, and Graph::backward points `data` at planned memory just before the first
// backward that accumulates into it, then releases it (data = nullptr) once the op's
// own backward has consumed it. See engine.hpp.
struct GradSlot {
  float* data = nullptr;
  int64_t numel = 0;
  int64_t offset = 0;      // planned position in the graph's gradient region (floats)
  int32_t produced = -1;   // tape index of the owning op
  int32_t first_use = -1;  // tape index of the first backward (in replay order) writing it
  // Handed out unzeroed to its first writer, a backward that declared it writes every
  // element of that input's gradient (TensorNode::assigns): it stores 0.0f + value, the
  // bits zeroing and then adding would give, and saves the memset. Cleared after it ran.
  bool fresh = false;
};

class Tensor {
 public:
  Tensor() = default;
  bool defined() const { return data_ != nullptr || shape_.ndim > 0; }

  const Shape& shape() const { return shape_; }
  int ndim() const { return shape_.ndim; }
  int64_t size(int d) const { return shape_[d]; }  // negative d counts from the end
  int64_t stride(int d) const { return strides_[d < 0 ? d + shape_.ndim : d]; }
  int64_t numel() const { return shape_.numel(); }
  bool is_contiguous() const;

  float* data() const { return data_; }  // element [0, ..., 0]
  // Same strides as data(); null without a gradient. A parameter's gradient is always
  // there (inside a GradientRedirectScope, in that thread's buffer); an intermediate's
  // exists only while Graph::backward needs it.
  float* grad() const {
    if (!slot_) return grad_ ? detail::parameter_grad(grad_) : nullptr;
    return slot_->data ? slot_->data + grad_offset_ : nullptr;
  }
  bool requires_grad() const { return grad_ != nullptr || slot_ != nullptr; }
  float item() const;  // numel() == 1
  float at(std::initializer_list<int64_t> index) const;

  // Views: share storage; recorded on the tape so gradients flow through them.
  Tensor reshape(Shape s) const;  // contiguous tensors only (else throws)
  Tensor transpose(int a, int b) const;
  Tensor permute(std::initializer_list<int> order) const;
  Tensor slice(int dim, int64_t begin, int64_t end) const;  // [begin, end)
  Tensor contiguous() const;  // itself when already contiguous, else a copy (on the tape)

  // Engine internals (ops and the tape construct tensors through these).
  Tensor(const Shape& s, const std::array<int64_t, kMaxDims>& strides, float* data, float* grad,
         TensorNode* node);
  Tensor(const Shape& s, const std::array<int64_t, kMaxDims>& strides, float* data, GradSlot* slot,
         int64_t grad_offset, TensorNode* node);
  // Same storage (data and gradient) seen with another shape, strides and offset.
  Tensor restrided(const Shape& s, const std::array<int64_t, kMaxDims>& strides, int64_t offset,
                   TensorNode* node) const;
  const std::array<int64_t, kMaxDims>& strides() const { return strides_; }
  TensorNode* node() const { return node_; }
  GradSlot* grad_slot() const { return slot_; }
  int64_t grad_offset() const { return grad_offset_; }

 private:
  Shape shape_;
  std::array<int64_t, kMaxDims> strides_{};
  float* data_ = nullptr;
  float* grad_ = nullptr;     // fixed gradient storage (parameters)
  GradSlot* slot_ = nullptr;  // lazy gradient storage (op outputs) ...
  int64_t grad_offset_ = 0;   // ... and this view's offset into it
  TensorNode* node_ = nullptr;
};

std::array<int64_t, kMaxDims> contiguous_strides(const Shape& s);

}  // namespace attnfc::ag
