#pragma once
// The cross-attention decoder (model.decoder "cross_attention", docs/MODEL.md section 4b):
// one query per horizon step reads the encoder's outputs. Its queries carry what is known
// about each future step (a learned step embedding, the step's known features, the
// series' static values); the keys and values are the history as the causal encoder
// summarised it, all N positions of which lie before the forecast origin.
//
// Shapes (B samples, N encoder positions, H horizon, d model width, K known features a
// step, S numeric and G categorical static values a sample):
//   encoded  [B, N, d]   the encoder output after its final LayerNorm
//   known    base/sample.hpp KnownInputs: [B, H, K], [B, S], [B, G]
//   result   [B, H, d]   decoder states before decoder.final_norm and the head
#include <cstdint>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/autograd/tensor.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/nn/attention.hpp"
#include "attnfc/nn/layers.hpp"

namespace attnfc::model::detail {

struct DecoderDropout {
  float p = 0.0f;
  bool training = false;
  uint64_t seed = 0;        // the step's dropout seed (ForwardOptions::dropout_seed)
  uint64_t first_site = 0;  // site of block 0's attention dropout; its feed-forward is +1
};

class CrossAttentionDecoder {
 public:
  CrossAttentionDecoder() = default;
  // Registers the "decoder." parameters of docs/MODEL.md section 4b, initialised from seed.
  CrossAttentionDecoder(const ModelConfig& config, ag::ParameterSet& params, uint64_t seed);

  // encoded [B, N, d] -> [B, H, d]. Throws InputError when `known` does not carry the
  // widths the model was built for.
  ag::Tensor forward(const ag::Tensor& encoded, const KnownInputs& known,
                     const DecoderDropout& dropout) const;

  nn::LayerNorm final_norm;  // "decoder.final_norm", fused into the head by the caller

 private:
  struct Block {
    nn::LayerNorm norm1, norm2;
    nn::MultiHeadAttention cross;
    nn::Linear ff_in, ff_out;
  };
  ag::Tensor queries(const KnownInputs& known, int64_t batch) const;  // [B, H, d]
  void check(const KnownInputs& known) const;

  int horizon_ = 0, d_model_ = 0, known_ = 0, numeric_ = 0;
  ag::Tensor step_embedding_;                // [H, d]
  nn::Linear known_proj_;                    // [d, K] + [d], when K > 0
  nn::Linear static_proj_;                   // [d, S] + [d], when S > 0
  std::vector<ag::Tensor> category_tables_;  // [V_g, d] per categorical static
  std::vector<Block> blocks_;
};

}  // namespace attnfc::model::detail
