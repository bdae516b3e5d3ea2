#pragma once
// Pieces of the linear backward shared with the fused feed-forward op.
namespace attnfc::ag::detail {

// db[j] += sum_r dZ[r, j] for a row-major dZ [M, out_f]: each column summed in row order
// (a fixed order at any thread count), threads taking disjoint column blocks.
void bias_grad(const float* dZ, int M, int out_f, float* db);

}  // namespace attnfc::ag::detail
