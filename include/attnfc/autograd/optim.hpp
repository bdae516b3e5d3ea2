#pragma once
// Optimisers over a ParameterSet. State (moments, step count) is exposed as
// named tensors so a checkpoint can save it and a resumed run continues exactly.
#include <cstdint>
#include <string>
#include <vector>

#include "attnfc/autograd/parameters.hpp"

namespace attnfc::ag {

struct StateTensor {
  std::string name;  // e.g. "adamw.m.blocks.0.attn.in_proj_weight"
  std::vector<float> values;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step(float lr) = 0;  // uses the gradients in the parameter set
  virtual std::vector<StateTensor> state() const = 0;
  virtual void load_state(const std::vector<StateTensor>& state) = 0;  // throws on mismatch
  virtual int64_t steps_taken() const = 0;
};

class SGD final : public Optimizer {
 public:
  SGD(ParameterSet& params, float momentum = 0.0f, float weight_decay = 0.0f);
  void step(float lr) override;
  std::vector<StateTensor> state() const override;
  void load_state(const std::vector<StateTensor>& state) override;
  int64_t steps_taken() const override { return steps_; }

 private:
  ParameterSet& params_;
  float momentum_, weight_decay_;
  std::vector<std::vector<float>> velocity_;
  int64_t steps_ = 0;
};

// Adam when weight_decay == 0 (or decoupled == false: L2 added to the gradient);
// AdamW (decoupled weight decay) otherwise.
class AdamW final : public Optimizer {
 public:
  AdamW(ParameterSet& params, float beta1 = 0.9f, float beta2 = 0.999f, float eps = 1e-8f,
        float weight_decay = 0.01f, bool decoupled = true);
  void step(float lr) override;
  std::vector<StateTensor> state() const override;
  void load_state(const std::vector<StateTensor>& state) override;
  int64_t steps_taken() const override { return steps_; }
  // Multiplies the learning rate (and so the decoupled decay) of every parameter whose
  // name starts with `name_prefix` by `scale` >= 0; 0 freezes them. Returns how many
  // parameters matched. Parameters created later keep scale 1.
  int set_lr_scale(const std::string& name_prefix, float scale);

 private:
  ParameterSet& params_;
  float beta1_, beta2_, eps_, weight_decay_;
  std::vector<float> lr_scale_;  // per parameter; empty = all 1
  bool decoupled_;
  std::vector<std::vector<float>> m_, v_;
  int64_t steps_ = 0;
  // Every parameter cut into pieces of at most kPieceSize elements, so that one
  // parallel region updates them all (most tensors are too small to split alone).
  struct Piece {
    size_t param;
    int64_t begin, end;
  };
  std::vector<Piece> pieces_;
  std::vector<const float*> grads_;  // each parameter's gradient, read on the calling thread
  void update_decoupled(float base_lr);
};

// Scales all gradients so their global L2 norm is at most max_norm; returns the
// norm before clipping (computed in a fixed order; NaN/inf is returned as is so
// the caller can stop training with a clear message).
float clip_grad_norm(ParameterSet& params, float max_norm);

}  // namespace attnfc::ag
