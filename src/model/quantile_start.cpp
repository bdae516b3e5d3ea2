// The model's side of the quantile start (train/quantile_start.hpp): the median's errors in
// the head's units, and a head bias that spaces the levels by given gaps.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "inference_graph.hpp"
#include "inputs.hpp"

namespace attnfc::model {

std::vector<float> PatchTransformer::median_errors(const SampleBatch& batch) const {
  const int64_t H = config_.horizon, C = config_.token_channels();
  const int64_t Q = config_.levels(), m = config_.median_level();
  ag::NoGradScope no_grad;
  detail::InferenceGraph inference;  // reused across the batches: no arena to fault in anew
  ag::Graph& graph = inference.get();
  graph.reset();
  ag::GraphScope scope(graph);
  const detail::SeriesView view = detail::view_of(batch, config_, true);
  ag::Tensor targets, mask;  // [B, 1, H, C]
  detail::prepare_targets(config_, view, true, &targets, &mask);
  const detail::Prepared in = detail::prepare_inputs(config_, view, true);
  const ag::Tensor pred = forward_prepared(in, ForwardOptions{}, true, nullptr);  // [B,1,QH,C]
  const float *p = pred.data(), *y = targets.data(), *w = mask.data(), *sigma = in.scale.data();
  const detail::LevelMajor at{Q, H, C};
  std::vector<float> errors(static_cast<size_t>(batch.count * H * C));
  for (int64_t b = 0; b < batch.count; ++b)
    for (int64_t k = 0; k < H; ++k)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t i = (b * H + k) * C + c;
        const double e = (static_cast<double>(y[i]) - p[at.at(b, m, k) + c]) /
                         static_cast<double>(sigma[b * C + c]);  // scale [B, 1, 1, C]
        errors[static_cast<size_t>(i)] = w[i] != 0.0f ? static_cast<float>(e) : NAN;
      }
  return errors;
}

void PatchTransformer::set_level_gaps(const std::vector<double>& gaps) {
  const int64_t Q = config_.levels(), C = config_.token_channels(), m = config_.median_level();
  const int64_t steps = config_.cross_attention() ? 1 : config_.horizon;
  if (Q < 2 || static_cast<int64_t>(gaps.size()) != steps * Q * C)
    throw std::invalid_argument("set_level_gaps: expected " + std::to_string(steps * Q * C) +
                                " gaps for " + std::to_string(Q) + " levels, got " +
                                std::to_string(gaps.size()));
  // The gaps come step-major, index (k Q + j) C + c; the linear head's output is
  // level-major, (j H + k) C + c (docs/MODEL.md 4c), the decoder's head j C + c.
  float* bias = head_.bias.data();
  for (int64_t i = 0; i < steps * Q * C; ++i) {
    const int64_t c = i % C, j = (i / C) % Q, k = i / (C * Q);
    const double g = gaps[static_cast<size_t>(i)];
    if (j != m && !(g > 0 && std::isfinite(g)))
      throw std::invalid_argument("set_level_gaps: gap " + std::to_string(i) + " is " +
                                  std::to_string(g) + ", expected positive and finite");
    // gap(x) = (x + sqrt(x^2 + 1)) / 2 = g has the one solution x = g - 1 / (4 g).
    bias[(j * steps + k) * C + c] = j == m ? 0.0f : static_cast<float>(g - 0.25 / g);
  }
}

}  // namespace attnfc::model
