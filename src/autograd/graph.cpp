// Graph: the tape (a vector of node pointers, capacity kept across steps) and the
// arena (a list of 64-byte aligned blocks, kept across steps). reset() only rewinds
// cursors, so a step with the same shapes as the previous one allocates nothing.
#include "attnfc/autograd/graph.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/autograd/engine.hpp"

namespace attnfc::ag {

namespace {
constexpr size_t kAlign = 64;
constexpr size_t kMinBlock = size_t{1} << 20;

class Arena {
 public:
  ~Arena() {
    for (const Block& b : blocks_) ::operator delete(b.ptr, std::align_val_t(kAlign));
  }
  void* alloc(size_t bytes) {
    bytes = std::max<size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    // Same request sequence as the previous step -> the same blocks, in order.
    while (current_ < blocks_.size()) {
      Block& b = blocks_[current_];
      if (offset_ + bytes <= b.capacity) {
        void* p = b.ptr + offset_;
        offset_ += bytes;
        return p;
      }
      ++current_;
      offset_ = 0;
    }
    const size_t last = blocks_.empty() ? 0 : blocks_.back().capacity;
    const size_t capacity = std::max({bytes, kMinBlock, 2 * last});
    auto* ptr = static_cast<std::byte*>(::operator new(capacity, std::align_val_t(kAlign)));
    blocks_.push_back(Block{ptr, capacity});
    current_ = blocks_.size() - 1;
    offset_ = bytes;
    return ptr;
  }
  void reset() {
    current_ = 0;
    offset_ = 0;
  }
  size_t reserved() const {
    size_t total = 0;
    for (const Block& b : blocks_) total += b.capacity;
    return total;
  }

 private:
  struct Block {
    std::byte* ptr;
    size_t capacity;
  };
  std::vector<Block> blocks_;
  size_t current_ = 0;
  size_t offset_ = 0;
};

thread_local Graph* t_graph = nullptr;
thread_local bool t_grad_enabled = true;
}  // namespace

struct Graph::Impl {
  Arena arena;
  std::vector<TensorNode*> tape;
  bool backward_done = false;
};

Graph::Graph() : impl_(new Impl) {
  impl_->tape.reserve(256);
}
Graph::~Graph() {
  delete impl_;
}

void Graph::reset() {
  impl_->tape.clear();  // keeps capacity
  impl_->arena.reset();
  impl_->backward_done = false;
}

void Graph::backward(const Tensor& loss) {
  if (!loss.defined() || loss.numel() != 1) {
    throw std::invalid_argument("Graph::backward: the loss must have exactly one element, got " +
                                loss.shape().str());
  }
  if (!loss.requires_grad()) {
    throw std::invalid_argument(
        "Graph::backward: the loss does not require a gradient (no parameter reached it, or "
        "it was computed inside a NoGradScope)");
  }
  if (impl_->backward_done) {
    // A second replay would push the already accumulated intermediate gradients
    // through the tape again and silently double-count.
    throw std::logic_error(
        "Graph::backward: this tape was already replayed; call reset() and run the forward "
        "again before the next backward");
  }
  impl_->backward_done = true;
  loss.grad()[0] = 1.0f;
  // The tape is in execution order, which is a topological order: replaying it in
  // reverse finishes every consumer of a tensor before that tensor's own backward.
  for (auto it = impl_->tape.rbegin(); it != impl_->tape.rend(); ++it) {
    const TensorNode& n = **it;
    if (n.backward) n.backward(n);
  }
}

size_t Graph::bytes_reserved() const {
  return impl_->arena.reserved();
}
size_t Graph::nodes() const {
  return impl_->tape.size();
}

GraphScope::GraphScope(Graph& g) : previous_(t_graph) {
  t_graph = &g;
}
GraphScope::~GraphScope() {
  t_graph = previous_;
}

NoGradScope::NoGradScope() : previous_(t_grad_enabled) {
  t_grad_enabled = false;
}
NoGradScope::~NoGradScope() {
  t_grad_enabled = previous_;
}

Graph& current_graph() {
  if (!t_graph) {
    throw std::logic_error(
        "attnfc::ag: no active graph; create an ag::Graph and an ag::GraphScope before "
        "running ops");
  }
  return *t_graph;
}
bool grad_enabled() {
  return t_grad_enabled;
}
bool graph_active() {
  return t_graph != nullptr;
}

// --- engine.hpp ---

void* arena_alloc(size_t bytes) {
  return current_graph().impl()->arena.alloc(bytes);
}
float* arena_floats(int64_t n) {
  return static_cast<float*>(arena_alloc(static_cast<size_t>(n) * sizeof(float)));
}
float* arena_zeros(int64_t n) {
  float* p = arena_floats(n);
  std::memset(p, 0, static_cast<size_t>(n) * sizeof(float));
  return p;
}

bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor* t : inputs) {
    if (t && t->requires_grad()) return true;
  }
  return false;
}

TensorNode* record_node(const char* op, BackwardFn backward) {
  Graph::Impl* g = current_graph().impl();
  auto* node = new (g->arena.alloc(sizeof(TensorNode))) TensorNode{};
  node->op = op;
  node->backward = backward;
  g->tape.push_back(node);
  return node;
}

Tensor make_output(const Shape& s, const char* op, BackwardFn backward,
                   std::initializer_list<const Tensor*> inputs, TensorNode** node) {
  const int64_t n = s.numel();
  float* data = arena_floats(n);
  *node = nullptr;
  float* grad = nullptr;
  if (should_record(inputs)) {
    grad = arena_zeros(n);
    *node = record_node(op, backward);
  }
  Tensor out(s, contiguous_strides(s), data, grad, *node);
  if (*node) (*node)->out = out;
  return out;
}

void op_error(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

// --- graph.hpp factories ---

Tensor empty(const Shape& s) {
  return Tensor(s, contiguous_strides(s), arena_floats(s.numel()), nullptr, nullptr);
}
Tensor zeros(const Shape& s) {
  return Tensor(s, contiguous_strides(s), arena_zeros(s.numel()), nullptr, nullptr);
}
Tensor full(const Shape& s, float value) {
  Tensor t = empty(s);
  std::fill(t.data(), t.data() + s.numel(), value);
  return t;
}
Tensor from_data(const Shape& s, const float* values) {
  Tensor t = empty(s);
  std::memcpy(t.data(), values, static_cast<size_t>(s.numel()) * sizeof(float));
  return t;
}

}  // namespace attnfc::ag
