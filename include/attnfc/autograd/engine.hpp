#pragma once
// Engine internals for writing ops (the ops in src/autograd and custom ops in
// higher layers or tests): the tape node, arena allocation and recording.
//
// A TensorNode is plain data (trivially destructible, no std::function, no heap):
// it lives in the graph's arena and is forgotten wholesale by Graph::reset().
// Its backward is a plain function pointer that reads what it needs from the
// node and accumulates (+=) into the inputs' grad() buffers.
//
// Gradients of op outputs are lazy (GradSlot, tensor.hpp): none exists during the
// forward. Graph::backward first finds, for every output, the replay interval in which
// its gradient is live (from the first backward that writes it to its own op's
// backward), packs those intervals into one recycled gradient region (a slot is zeroed
// when it becomes live), and skips a backward whose output gradient nobody wrote (it
// is zero). A backward may rely on: its output's grad() and every input's grad() (when
// the input requires one) are valid while it runs. Temporary memory for a forward or a
// backward comes from scratch_floats() and is recycled when the op returns.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/tensor.hpp"

namespace attnfc::ag {

using BackwardFn = void (*)(const TensorNode& node);

struct TensorNode {
  BackwardFn backward = nullptr;  // null for views: their grad aliases the base's grad
  const char* op = "";
  Tensor out;
  Tensor in[3];
  const Tensor* parts = nullptr;  // inputs beyond in[] (concat, fused ops): an arena copy
  int num_parts = 0;
  float* saved[2] = {nullptr, nullptr};  // arena buffers (mean/rstd, logsumexp, pre-activation)
  const void* aux = nullptr;             // arena copy of a byte mask (key padding)
  int64_t iarg[4] = {};
  float farg[4] = {};
  GradSlot grad;  // the gradient storage of `out` (unused by views)
  // Bit k: this backward writes every element of in[k]'s gradient exactly once, so when
  // it is that gradient's first writer the slot may come unzeroed (GradSlot::fresh; the
  // backward then stores with grad_store). Only whole, contiguous slots qualify.
  uint8_t assigns = 0;
};
static_assert(std::is_trivially_destructible_v<TensorNode>);

// True when t's gradient slot came unzeroed to this backward (see TensorNode::assigns).
inline bool grad_is_fresh(const Tensor& t) {
  return t.grad_slot() != nullptr && t.grad_slot()->fresh;
}
// g += v, or into a fresh slot g = 0.0f + v: the same bits (+0 for a -0 value included).
template <bool kFresh>
inline void grad_store(float& g, float v) {
  if constexpr (kFresh) {
    g = 0.0f + v;
  } else {
    g += v;
  }
}

// 64-byte aligned memory from the current graph's arena; valid until reset().
void* arena_alloc(size_t bytes);
float* arena_floats(int64_t n);  // uninitialised
float* arena_zeros(int64_t n);

// Temporary memory from the current graph's scratch region, recycled when the innermost
// ScratchScope ends (Graph::backward runs every backward inside one). Ops use it for
// what neither the tape nor the next op needs (a GELU output recomputed in a backward,
// the dZ of a linear backward).
float* scratch_floats(int64_t n);  // uninitialised
float* scratch_zeros(int64_t n);
class ScratchScope {
 public:
  ScratchScope();
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

 private:
  size_t mark_[3];
};

// True inside a GraphScope (views of parameters work without one; they just are not taped).
bool graph_active();

// True when ops record: grad mode is on and some input requires a gradient.
bool should_record(std::initializer_list<const Tensor*> inputs);

// Appends a node to the current graph's tape (the node is zero-initialised).
TensorNode* record_node(const char* op, BackwardFn backward);

// A fresh contiguous output in the arena. When should_record(inputs), it gets a tape
// node (returned in *node, else *node = nullptr) and a lazy gradient in that node.
Tensor make_output(const Shape& s, const char* op, BackwardFn backward,
                   std::initializer_list<const Tensor*> inputs, TensorNode** node);

// Throws std::invalid_argument with "<op>: <what>" (shape errors are programming errors).
[[noreturn]] void op_error(const char* op, const std::string& what);
// Dimension d of an ndim-d tensor, counting from the back when negative (-1 = last);
// op_error when out of range.
int normalize_dim(int d, int ndim, const char* op);

}  // namespace attnfc::ag
