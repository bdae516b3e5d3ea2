#pragma once
// Basic modules on the autograd engine. A module registers its parameters in a
// ParameterSet under a dotted name prefix and holds the Tensor handles.
// Initialisation follows PyTorch's defaults (so a torch reference can be rebuilt):
// Linear: kaiming-uniform weight, bias uniform(+-1/sqrt(in)); LayerNorm: gamma 1, beta 0.
#include <cstdint>
#include <string>

#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/autograd/tensor.hpp"
#include "attnfc/kernels/gemm.hpp"

namespace attnfc::nn {

class Linear {
 public:
  Linear() = default;
  // Registers "<name>.weight" [out, in] and, with bias, "<name>.bias" [out].
  Linear(ag::ParameterSet& params, const std::string& name, int in, int out, bool bias,
         uint64_t seed);
  // x [..., in] -> [..., out]
  ag::Tensor forward(const ag::Tensor& x,
                     kernels::Activation act = kernels::Activation::None) const;
  ag::Tensor weight, bias;
};

// second.forward(first.forward(x, act)) with the same values, as one fused op that keeps
// only first's pre-activation (ag::feed_forward): a Transformer feed-forward block.
ag::Tensor feed_forward(const Linear& first, const Linear& second, const ag::Tensor& x,
                        kernels::Activation act);
// res.residual + dropout(feed_forward(first, second, layernorm(x, norm), act)), fused
// (ag::feed_forward with a PreNorm and a ResidualDropout): a pre-norm block's second half.
ag::Tensor feed_forward(const Linear& first, const Linear& second, const ag::Tensor& x,
                        kernels::Activation act, const ag::PreNorm& norm,
                        const ag::ResidualDropout& res);

class LayerNorm {
 public:
  LayerNorm() = default;
  // Registers "<name>.weight" and "<name>.bias" [dim].
  LayerNorm(ag::ParameterSet& params, const std::string& name, int dim, float eps = 1e-5f);
  ag::Tensor forward(const ag::Tensor& x) const;
  // This LayerNorm for fusing into the op that follows it (ag::PreNorm).
  ag::PreNorm as_prenorm() const { return ag::PreNorm{weight, bias, eps}; }
  ag::Tensor weight, bias;
  float eps = 1e-5f;
};

}  // namespace attnfc::nn
