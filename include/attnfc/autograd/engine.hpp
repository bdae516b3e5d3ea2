#pragma once
// Engine internals for writing ops (the ops in src/autograd and custom ops in
// higher layers or tests): the tape node, arena allocation and recording.
//
// A TensorNode is plain data (trivially destructible, no std::function, no heap):
// it lives in the graph's arena and is forgotten wholesale by Graph::reset().
// Its backward is a plain function pointer that reads what it needs from the
// node and accumulates (+=) into the inputs' grad() buffers.
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
  const Tensor* parts = nullptr;  // concat: arena copy of the inputs
  int num_parts = 0;
  float* saved[2] = {nullptr, nullptr};  // arena buffers (mean/rstd, logsumexp, pre-activation)
  const void* aux = nullptr;             // arena copy of a byte mask (key padding)
  int64_t iarg[4] = {};
  float farg[4] = {};
};
static_assert(std::is_trivially_destructible_v<TensorNode>);

// 64-byte aligned memory from the current graph's arena; valid until reset().
void* arena_alloc(size_t bytes);
float* arena_floats(int64_t n);  // uninitialised
float* arena_zeros(int64_t n);

// True inside a GraphScope (views of parameters work without one; they just are not taped).
bool graph_active();

// True when ops record: grad mode is on and some input requires a gradient.
bool should_record(std::initializer_list<const Tensor*> inputs);

// Appends a node to the current graph's tape (the node is zero-initialised).
TensorNode* record_node(const char* op, BackwardFn backward);

// A fresh contiguous output in the arena. When should_record(inputs), it gets a
// zeroed grad and a tape node (returned in *node, else *node = nullptr).
Tensor make_output(const Shape& s, const char* op, BackwardFn backward,
                   std::initializer_list<const Tensor*> inputs, TensorNode** node);

// Throws std::invalid_argument with "<op>: <what>" (shape errors are programming errors).
[[noreturn]] void op_error(const char* op, const std::string& what);

}  // namespace attnfc::ag
