#pragma once
// Fused scaled-dot-product attention, FlashAttention-2 style:
//   O = softmax(Q K^T * scale + mask) V
// computed in tiles with an online softmax; only the per-row logsumexp is
// saved for the backward, which recomputes P tile by tile. The L x L matrix is
// never materialised on this path.
//
// Shapes: Q [B, H, Lq, D], K and V [B, H, Lk, D], O [B, H, Lq, D], lse [B, H, Lq].
// Strides are given in floats so that Q/K/V can be read straight out of a packed
// [B, L, 3, H, D] projection without a permute copy.
// Causal (top-left aligned, as torch's is_causal): query i sees keys j <= i.
// Key padding: key_padding[b * Lk + j] != 0 removes key j for batch element b.
// A query row with no visible key gets O = 0 and lse = -inf; it never yields NaN.
#include <cstdint>

namespace attnfc::kernels {

struct AttnLayout {
  int64_t batch_stride = 0;  // floats between batch elements
  int64_t head_stride = 0;   // floats between heads
  int64_t row_stride = 0;    // floats between sequence positions
};

struct AttnParams {
  int batch = 1;
  int heads = 1;
  int Lq = 0;
  int Lk = 0;
  int head_dim = 0;  // D <= 256
  float scale = 0;   // usually 1/sqrt(D)
  bool causal = false;
  const uint8_t* key_padding = nullptr;  // [batch, Lk] or null
  AttnLayout q, k, v, o;                 // dQ/dK/dV/dO use the layouts of Q/K/V/O
};

// Contiguous [B, H, L, D] layout helper.
AttnLayout contiguous_layout(int heads, int L, int D);

// lse: [B, H, Lq] contiguous.
void attention_forward(const AttnParams& p, const float* Q, const float* K, const float* V,
                       float* O, float* lse);
// Accumulates: dQ += ..., dK += ..., dV += ...
void attention_backward(const AttnParams& p, const float* Q, const float* K, const float* V,
                        const float* O, const float* lse, const float* dO, float* dQ, float* dK,
                        float* dV);

// Materialising reference (builds the L x L matrix per head), for tests.
void attention_forward_reference(const AttnParams& p, const float* Q, const float* K,
                                 const float* V, float* O, float* lse);
void attention_backward_reference(const AttnParams& p, const float* Q, const float* K,
                                  const float* V, const float* O, const float* lse, const float* dO,
                                  float* dQ, float* dK, float* dV);
// The same reference in double precision throughout, for central-difference
// gradient checks (the backward needs no O / lse: it recomputes them).
void attention_forward_reference(const AttnParams& p, const double* Q, const double* K,
                                 const double* V, double* O, double* lse);
void attention_backward_reference(const AttnParams& p, const double* Q, const double* K,
                                  const double* V, const double* dO, double* dQ, double* dK,
                                  double* dV);

}  // namespace attnfc::kernels
