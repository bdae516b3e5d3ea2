#pragma once
// The gradient of one optimiser step as a sum over train.micro_batches fixed parts of the
// batch, in part order, whichever process computed each part (docs/SCALING.md):
//
//   g = ((g_0 + g_1) + g_2) + ... + g_{K-1}      (float adds, element by element)
//
// Part k of a step of n samples holds samples [offset_k, offset_k + size_k) of the step's
// shuffled order (micro_batch_range), its loss weighted by size_k / n, so g is the
// gradient of the batch's mean loss. Rank r of N processes computes parts
// [r K / N, (r + 1) K / N) (parts_of_rank): a rule fixed by the config and N alone.
//
// The sum travels along the rank chain: rank r > 0 receives the sum of the parts before
// its own from rank r - 1, adds its parts in order and sends it on; the last rank
// broadcasts the result. One process runs the same loop without messages, so 1, 2 or 3
// processes, at any thread count, give the same bits. Per step each rank sends at most
// one gradient (4 bytes a parameter) and the last rank broadcasts one; nothing is
// allocated after construction.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/dist/comm.hpp"

namespace attnfc::train {

// (offset, size) of part k of K of a step of n samples: the first n % K parts hold one
// sample more. Parts at the end are empty when n < K.
std::pair<int64_t, int64_t> micro_batch_range(int64_t n, int k, int K);
// [first, end) of the parts that rank `rank` of `ranks` computes.
std::pair<int, int> parts_of_rank(int rank, int ranks, int K);

class GradientSum {
 public:
  // For `params` (their gradient sizes are fixed from here on) and this run's processes,
  // with K parts a step.
  GradientSum(const ag::ParameterSet& params, const dist::Comm& comm, int K);

  // A new step: no part added yet.
  void begin();
  // This rank's next part, in part order: the gradients now in `params` and its loss
  // (already weighted).
  void add(const ag::ParameterSet& params, double loss);
  // The same for a part's gradients packed in parameter order (floats() floats).
  void add(const float* packed, double loss);
  // The step's sum, on every rank, written into the gradients of `params`; returns the
  // summed loss. Every rank must call it once per step, also with no part of its own.
  double finish(ag::ParameterSet& params);

  size_t floats() const { return sum_.size(); }

 private:
  void accumulate(const float* g, double loss);
  float* next_pending();  // rank > 0: where its next part goes

  const dist::Comm& comm_;
  std::vector<float> sum_;      // the running sum
  std::vector<float> pending_;  // rank > 0: its parts' gradients until the prefix arrives
  std::vector<double> pending_loss_;
  double loss_ = 0;
  int pending_count_ = 0;
  bool has_sum_ = false;  // sum_ holds at least one part
};

}  // namespace attnfc::train
