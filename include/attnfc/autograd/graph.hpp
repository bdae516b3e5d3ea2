#pragma once
// Graph: one step's define-by-run tape plus the arena its activations live in.
// Ops append a node (inputs, output, what the backward needs) to the current
// graph; backward() replays the nodes in reverse order (no sort needed, since
// the tape is already a topological order). Gradients accumulate (+=), so a
// tensor used twice receives both contributions.
//
// Zero allocation in the steady state: reset() keeps the arena's blocks and the
// tape's capacity, so a training step with the same shapes as the previous one
// makes no heap allocation.
#include <cstddef>
#include <cstdint>

#include "attnfc/autograd/tensor.hpp"

namespace attnfc::ag {

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Forget the tape and recycle all activation memory (capacity is kept).
  void reset();
  // Seeds d(loss)/d(loss) = 1 (loss must have one element) and runs the tape backward,
  // accumulating into the parameters' grad(). Gradients of intermediate tensors exist
  // only while the backward needs them (engine.hpp) and are null afterwards.
  void backward(const Tensor& loss);
  // Memory currently reserved, in bytes (for benchmarks and tests): the activation
  // arena, the scratch region and the gradient region.
  size_t bytes_reserved() const;
  size_t nodes() const;

  struct Impl;
  Impl* impl() { return impl_; }

 private:
  void plan_gradients(TensorNode* const* tape, int n, const Tensor& loss);
  void materialise(GradSlot* s);
  void open_input_slots(const TensorNode& node, int k);
  Impl* impl_;
};

// Makes g the graph that ops on this thread record into, for the scope's lifetime.
class GraphScope {
 public:
  explicit GraphScope(Graph& g);
  ~GraphScope();
  GraphScope(const GraphScope&) = delete;
  GraphScope& operator=(const GraphScope&) = delete;

 private:
  Graph* previous_;
};

// Inside a NoGradScope ops record nothing and outputs carry no gradient (inference).
class NoGradScope {
 public:
  NoGradScope();
  ~NoGradScope();
  NoGradScope(const NoGradScope&) = delete;
  NoGradScope& operator=(const NoGradScope&) = delete;

 private:
  bool previous_;
};

Graph& current_graph();  // throws if no GraphScope is active
bool grad_enabled();

// Tensors in the current graph's arena (no gradient; inputs, targets, masks).
Tensor empty(const Shape& s);
Tensor zeros(const Shape& s);
Tensor full(const Shape& s, float value);
Tensor from_data(const Shape& s, const float* values);  // copies numel() floats

}  // namespace attnfc::ag
