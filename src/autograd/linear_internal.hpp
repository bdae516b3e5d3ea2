#pragma once
// Pieces of the linear backward and of the fused LayerNorm / residual-dropout wrappers,
// shared by linear (ops_linalg.cpp), the fused linear (ops_fused_linear.cpp) and the
// fused feed-forward (ops_ffn.cpp).
#include <cstdint>

#include "attnfc/autograd/ops.hpp"

namespace attnfc::ag::detail {

// db[j] += sum_r dZ[r, j] for a row-major dZ [M, out_f]: each column summed in row order
// (a fixed order at any thread count), threads taking disjoint column blocks.
void bias_grad(const float* dZ, int M, int out_f, float* db);

// What a fused op recorded about its PreNorm and ResidualDropout (iarg/farg of its node).
struct Fusion {
  bool norm = false, residual = false, drop = false;
  float eps = 0.0f, p = 0.0f;
  uint64_t seed = 0;
  int64_t flags() const { return (norm ? 1 : 0) | (residual ? 2 : 0) | (drop ? 4 : 0); }
  static Fusion decode(int64_t flags, uint64_t seed, float eps, float p) {
    return Fusion{(flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, eps, p, seed};
  }
};

// Whether the fused path applies (else the caller composes the unfused ops): a recording
// op, a PreNorm whose gamma/beta are plain [in] vectors, a residual of the output's shape
// and 0 <= p < 1. Throws for p outside [0, 1].
bool fusion_applies(const PreNorm& norm, const ResidualDropout& res, int64_t in_features,
                    const Shape& out_shape, const char* op);
Fusion fusion_of(const PreNorm& norm, const ResidualDropout& res);

// LayerNorm(x) [rows, C] into scratch (caller's ScratchScope); mean and rstd into
// stats[0, rows) and stats[rows, 2 rows). x contiguous. Called again in the backward
// (stats then into scratch), it gives the same bits.
float* prenorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                       float* stats);
// dx += LayerNorm backward of dxn (and dgamma, dbeta), with the stats saved by the forward.
void prenorm_backward(const float* dxn, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                      const float* stats);

// y = residual + dropout(y) in place (the same bits as add_dropout / add).
void residual_forward(float* y, const Tensor& residual, const Fusion& f, int64_t n);
// residual.grad += dy; returns the branch's gradient: dy itself without dropout, else
// the masked and scaled dy in scratch.
const float* residual_backward(const float* dy, const Tensor& residual, const Fusion& f, int64_t n);

}  // namespace attnfc::ag::detail
