// The graph of this thread's no-grad forward passes, kept between calls.
#pragma once

#include <memory>

#include "attnfc/autograd/graph.hpp"

namespace attnfc::model::detail {

// Validation, evaluate, backtests and the quantile start run one forward pass per batch;
// a fresh graph grew its arena from 1 MB and handed it back each time, so every batch
// page-faulted its whole arena anew (ETTh1 M, evaluate of 2785 windows at batch 64:
// 26.8 s, against 3.6 s at batch 16; M4's quantile start of 16384 windows at context 504:
// 29 s against 5 s at one thread; AMD EPYC, Zen 5 class). Kept, the arena settles at the
// largest batch's peak and is reused. A pass nested inside another (none today) gets a
// graph of its own.
class InferenceGraph {
 public:
  InferenceGraph() : fresh_(in_use_ ? std::make_unique<ag::Graph>() : nullptr) {
    if (!fresh_) in_use_ = true;
  }
  ~InferenceGraph() {
    if (!fresh_) in_use_ = false;
  }
  InferenceGraph(const InferenceGraph&) = delete;
  InferenceGraph& operator=(const InferenceGraph&) = delete;
  ag::Graph& get() { return fresh_ ? *fresh_ : kept(); }

 private:
  static ag::Graph& kept() {
    thread_local ag::Graph graph;
    return graph;
  }
  static inline thread_local bool in_use_ = false;
  std::unique_ptr<ag::Graph> fresh_;
};

}  // namespace attnfc::model::detail
