#pragma once
// ParameterSet: named, persistent tensors with gradients (the model's weights).
// Storage is allocated once, when a parameter is created, and keeps its address
// for the set's lifetime. Names follow a dotted path ("blocks.0.attn.in_proj_weight").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnfc/autograd/tensor.hpp"

namespace attnfc::ag {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

class ParameterSet {
 public:
  // kNone: weights only, for a model that is loaded to forecast (no gradient storage:
  // half the memory, and the pages never touched). Its tensors do not require grad.
  enum class Gradients { kStored, kNone };
  explicit ParameterSet(Gradients gradients = Gradients::kStored);
  ~ParameterSet();
  ParameterSet(const ParameterSet&) = delete;
  ParameterSet& operator=(const ParameterSet&) = delete;

  // Zero-initialised, contiguous, requires_grad (with kStored). Throws on a duplicate name.
  Tensor create(const std::string& name, const Shape& shape);
  const std::vector<NamedTensor>& all() const { return params_; }
  Tensor find(const std::string& name) const;  // undefined Tensor when absent
  void zero_grad();                            // nothing with kNone
  int64_t numel() const;

 private:
  Gradients gradients_;
  std::vector<NamedTensor> params_;
  std::vector<std::unique_ptr<float[]>> storage_;
};

// Parameter gradients written elsewhere, for running several micro-batches of one step at
// once (train/part_workers.hpp): inside a GradientRedirectScope, every grad() of a
// parameter of the set (and of any view of one) on this thread points into `packed`, a
// buffer of floats() floats laid out as the parameters follow each other in the set
// (the layout GradientSum packs). Other threads still see the set's own gradients.
class GradientRedirect {
 public:
  explicit GradientRedirect(const ParameterSet& params);  // the set as it is now
  size_t floats() const { return floats_; }
  // Where `grad` (inside some parameter's gradient) lands in `packed`; throws
  // std::logic_error for a gradient that is not one of the set's.
  float* map(float* grad, float* packed) const;

 private:
  struct Range {
    const float* begin;
    const float* end;
    size_t offset;
  };
  std::vector<Range> ranges_;  // by begin
  size_t floats_ = 0;
};

class GradientRedirectScope {
 public:
  GradientRedirectScope(const GradientRedirect& redirect, float* packed);
  ~GradientRedirectScope();
  GradientRedirectScope(const GradientRedirectScope&) = delete;
  GradientRedirectScope& operator=(const GradientRedirectScope&) = delete;

 private:
  const GradientRedirect* previous_;
  float* previous_packed_;
};

// Fills a parameter in place (no tape): uniform in [-bound, bound] or normal(0, std).
void init_uniform(const Tensor& t, float bound, uint64_t seed);
void init_normal(const Tensor& t, float std, uint64_t seed);
void init_constant(const Tensor& t, float value);

}  // namespace attnfc::ag
