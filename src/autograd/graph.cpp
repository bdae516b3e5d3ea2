// Graph: the tape (a vector of node pointers, capacity kept across steps), the arena
// and scratch (64-byte aligned blocks, kept across steps) and the gradient region
// (planned in backward, see engine.hpp). reset() only rewinds cursors, so a step with
// the same shapes as the previous one allocates nothing.
#include "attnfc/autograd/graph.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "arena.hpp"
#include "attnfc/autograd/engine.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace {
using detail::Arena;
using detail::GradRegion;

thread_local Graph* t_graph = nullptr;
thread_local bool t_grad_enabled = true;

// A backward whose output gradient nobody wrote has nothing to propagate (it is zero).
bool active(const TensorNode& node) {
  const GradSlot* s = node.out.grad_slot();
  return !s || s->first_use >= 0;
}

template <class F>
void for_each_input(const TensorNode& node, F&& f) {
  for (const Tensor& t : node.in) f(t);
  for (int i = 0; i < node.num_parts; ++i) f(node.parts[i]);
}
}  // namespace

struct Graph::Impl {
  Arena arena;
  Arena scratch;
  GradRegion grads;
  float* grad_base = nullptr;
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
  impl_->scratch.reset();
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
  GraphScope scope(*this);  // backwards allocate scratch from this graph
  std::vector<TensorNode*>& tape = impl_->tape;
  const int n = static_cast<int>(tape.size());
  plan_gradients(tape.data(), n, loss);
  if (GradSlot* s = loss.grad_slot()) materialise(s);
  loss.grad()[0] = 1.0f;
  // The tape is in execution order, which is a topological order: replaying it in
  // reverse finishes every consumer of a tensor before that tensor's own backward.
  for (int k = n - 1; k >= 0; --k) {
    TensorNode& node = *tape[k];
    if (!node.backward || !active(node)) continue;
    open_input_slots(node, k);
    {
      ScratchScope scope;
      node.backward(node);
    }
    for (const Tensor& t : node.in) {
      if (GradSlot* s = t.grad_slot()) s->fresh = false;
    }
    if (node.out.grad_slot() == &node.grad) node.grad.data = nullptr;  // consumed
  }
}

// Liveness in replay order: a slot is live from the first backward that writes it
// (first_use) down to its own op's backward (produced). Intervals that overlap get
// disjoint ranges of the gradient region: greedy, largest first, lowest offset that fits.
void Graph::plan_gradients(TensorNode* const* tape, int n, const Tensor& loss) {
  for (int k = 0; k < n; ++k) {
    GradSlot& s = tape[k]->grad;
    s.data = nullptr;
    s.produced = k;
    s.first_use = -1;
  }
  if (GradSlot* s = loss.grad_slot()) s->first_use = n;
  for (int k = n - 1; k >= 0; --k) {
    const TensorNode& node = *tape[k];
    if (!node.backward || !active(node)) continue;
    for_each_input(node, [&](const Tensor& t) {
      GradSlot* s = t.grad_slot();
      if (s && s->first_use < 0) s->first_use = k;
    });
  }
  Arena& scratch = impl_->scratch;
  const Arena::Mark mark = scratch.mark();
  auto* live = static_cast<GradSlot**>(scratch.alloc(sizeof(GradSlot*) * (n + 1)));
  auto* placed = static_cast<GradSlot**>(scratch.alloc(sizeof(GradSlot*) * (n + 1)));
  int count = 0;
  for (int k = 0; k < n; ++k) {
    GradSlot& s = tape[k]->grad;
    if (s.first_use >= 0 && s.numel > 0) live[count++] = &s;
  }
  const auto floats = [](const GradSlot* s) { return (s->numel + 15) / 16 * 16; };
  std::sort(live, live + count, [&](const GradSlot* a, const GradSlot* b) {
    return floats(a) != floats(b) ? floats(a) > floats(b) : a->produced < b->produced;
  });
  int64_t total = 0;
  int num_placed = 0;  // kept sorted by offset
  for (int i = 0; i < count; ++i) {
    GradSlot* s = live[i];
    int64_t offset = 0;
    for (int j = 0; j < num_placed; ++j) {
      const GradSlot* o = placed[j];
      const bool overlap = o->produced <= s->first_use && s->produced <= o->first_use;
      if (!overlap) continue;
      if (o->offset - offset >= floats(s)) break;  // fits in the gap before o
      offset = std::max(offset, o->offset + floats(o));
    }
    s->offset = offset;
    total = std::max(total, offset + floats(s));
    int j = num_placed++;
    for (; j > 0 && placed[j - 1]->offset > offset; --j) placed[j] = placed[j - 1];
    placed[j] = s;
  }
  scratch.rewind(mark);
  impl_->grad_base = impl_->grads.reserve(static_cast<size_t>(total));
}

// Gives node k's inputs whose gradient it writes first their storage: zeroed, or left
// as it is for an input the node assigns whole (TensorNode::assigns) and no other input
// of the node shares.
void Graph::open_input_slots(const TensorNode& node, int k) {
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = node.in[i];
    GradSlot* s = t.grad_slot();
    if (!s || s->first_use != k || s->data) continue;
    bool whole = (node.assigns >> i & 1) && t.grad_offset() == 0 && t.numel() == s->numel &&
                 t.is_contiguous();
    for (int j = 0; j < 3; ++j) whole = whole && (j == i || node.in[j].grad_slot() != s);
    for (int j = 0; j < node.num_parts; ++j) whole = whole && node.parts[j].grad_slot() != s;
    if (whole) {
      s->data = impl_->grad_base + s->offset;
      s->fresh = true;
    } else {
      materialise(s);
    }
  }
  for (int j = 0; j < node.num_parts; ++j) {
    GradSlot* s = node.parts[j].grad_slot();
    if (s && s->first_use == k && !s->data) materialise(s);
  }
}

void Graph::materialise(GradSlot* s) {
  s->data = impl_->grad_base + s->offset;
  detail::zero_floats(s->data, s->numel);
}

size_t Graph::bytes_reserved() const {
  return impl_->arena.reserved() + impl_->scratch.reserved() + impl_->grads.bytes();
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
float* scratch_floats(int64_t n) {
  return static_cast<float*>(
      current_graph().impl()->scratch.alloc(static_cast<size_t>(n) * sizeof(float)));
}
float* scratch_zeros(int64_t n) {
  float* p = scratch_floats(n);
  std::memset(p, 0, static_cast<size_t>(n) * sizeof(float));
  return p;
}
ScratchScope::ScratchScope() {
  const auto m = current_graph().impl()->scratch.mark();
  mark_[0] = m.current;
  mark_[1] = m.offset;
  mark_[2] = m.used;
}
ScratchScope::~ScratchScope() {
  if (t_graph) t_graph->impl()->scratch.rewind(Arena::Mark{mark_[0], mark_[1], mark_[2]});
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
  if (!should_record(inputs)) return Tensor(s, contiguous_strides(s), data, nullptr, nullptr);
  *node = record_node(op, backward);
  (*node)->grad.numel = n;
  Tensor out(s, contiguous_strides(s), data, &(*node)->grad, 0, *node);
  (*node)->out = out;
  return out;
}

int normalize_dim(int d, int ndim, const char* op) {
  const int r = d < 0 ? d + ndim : d;
  if (r < 0 || r >= ndim) {
    op_error(op, "dim " + std::to_string(d) + " out of range for a " + std::to_string(ndim) +
                     "-d tensor");
  }
  return r;
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
