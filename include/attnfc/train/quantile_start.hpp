#pragma once
// The quantile start (train.quantile_init "residuals", the default for quantile models).
//
// Why: a zero head puts the levels sigma / 2 apart whatever the data, so when no training
// epoch beats the starting point on validation (best epoch 0: the least-squares linear start,
// or the naive forecast), the kept model's intervals were that arbitrary width: on ETTh1 its
// 80% intervals covered 31-76%. Before training, the head's bias now spaces the levels by
// the starting point's own errors on training windows: level j sits Qe(q_j) - Qe(0.5) from
// the median, Qe the empirical quantile (linear interpolation between order statistics,
// "type 7") of the errors (y - median) / sigma of one horizon step and channel at the last
// position of each window (the one that forecasts). The median keeps bias 0, so the point
// forecast, and the linear start's point scores, are unchanged; training starts from these
// levels. Validation and test windows are never read.
#include <cstdint>
#include <vector>

#include "attnfc/base/sample.hpp"
#include "attnfc/data/window.hpp"
#include "attnfc/model/patch_transformer.hpp"

namespace attnfc::train {

// Neighbouring levels are kept at least this far apart (head units, i.e. sigma): the
// non-crossing head cannot represent equal levels, and a tie in the errors would ask for it.
inline constexpr double kMinLevelGap = 1e-3;

struct QuantileStart {
  int64_t windows = 0;  // training windows whose errors were read
  // Width of the outermost interval (level Q-1 minus level 0, in sigma) at the first and the
  // last horizon step, channel 0: for the log.
  double first_width = 0, last_width = 0;
};

// The errors of up to `max_windows` training windows of `windows` (drawn without
// replacement, from `seed` alone; the sampler's order is left shuffled), read into
// `buffers` batch by batch, set `net`'s level gaps (PatchTransformer::set_level_gaps). The
// cross-attention decoder's head is shared by the steps: its gaps pool every step's errors.
// A step and channel with no counted target (a past covariate) keeps the zero head's gaps.
QuantileStart init_quantile_levels(model::PatchTransformer& net, data::WindowSampler& windows,
                                   SampleBuffers& buffers, uint64_t seed, int64_t max_windows);

// Sorted errors -> their empirical q-quantile (type 7). NaN for none.
double empirical_quantile(const std::vector<double>& sorted, double q);

// The gaps of `levels` (median at index m) from the sorted errors of one step and channel:
// gap j (j > m) = Qe(q_j) - Qe(q_{j-1}), gap j (j < m) = Qe(q_{j+1}) - Qe(q_j), each at least
// kMinLevelGap; entry m is 0. Empty errors give the zero head's gaps, 1/2.
std::vector<double> level_gaps(const std::vector<double>& sorted, const std::vector<float>& levels,
                               int m);

}  // namespace attnfc::train
