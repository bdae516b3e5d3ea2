// Linear and LayerNorm on the autograd ops, initialised as PyTorch initialises them.
#include "attnfc/nn/layers.hpp"

#include <cmath>
#include <string>

#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/kernels/random.hpp"

namespace attnfc::nn {

Linear::Linear(ag::ParameterSet& params, const std::string& name, int in, int out, bool bias,
               uint64_t seed) {
  if (in < 1 || out < 1)
    throw InputError("linear layer '" + name + "': expected positive sizes, got in = " +
                     std::to_string(in) + ", out = " + std::to_string(out));
  weight = params.create(name + ".weight", {out, in});
  // torch.nn.Linear: kaiming_uniform_(a = sqrt(5)) gives bound sqrt(6 / ((1 + 5) in)) = 1/sqrt(in),
  // and the bias is uniform(+-1/sqrt(in)) as well.
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  // Independent streams for weight and bias, derived from the one seed.
  ag::init_uniform(weight, bound, kernels::random_bits(seed, 0));
  if (bias) {
    this->bias = params.create(name + ".bias", {out});
    ag::init_uniform(this->bias, bound, kernels::random_bits(seed, 1));
  }
}

ag::Tensor Linear::forward(const ag::Tensor& x, kernels::Activation act) const {
  return ag::linear(x, weight, bias, act);
}

ag::Tensor feed_forward(const Linear& first, const Linear& second, const ag::Tensor& x,
                        kernels::Activation act) {
  return ag::feed_forward(x, first.weight, first.bias, second.weight, second.bias, act);
}

ag::Tensor feed_forward(const Linear& first, const Linear& second, const ag::Tensor& x,
                        kernels::Activation act, const ag::PreNorm& norm,
                        const ag::ResidualDropout& res) {
  return ag::feed_forward(x, norm, first.weight, first.bias, second.weight, second.bias, act, res);
}

LayerNorm::LayerNorm(ag::ParameterSet& params, const std::string& name, int dim, float eps)
    : eps(eps) {
  if (dim < 1)
    throw InputError("layer norm '" + name + "': expected a positive dimension, got " +
                     std::to_string(dim));
  if (!(eps > 0.0f))
    throw InputError("layer norm '" + name + "': eps must be > 0, got " + std::to_string(eps));
  weight = params.create(name + ".weight", {dim});
  bias = params.create(name + ".bias", {dim});
  ag::init_constant(weight, 1.0f);
  ag::init_constant(bias, 0.0f);
}

ag::Tensor LayerNorm::forward(const ag::Tensor& x) const {
  return ag::layernorm(x, weight, bias, eps);
}

}  // namespace attnfc::nn
