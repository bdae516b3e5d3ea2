#pragma once
// Stride-1 sliding windows of context + horizon rows over one split part, or over one part
// of every series of a panel (several row ranges: a window never crosses from one to the next).
// The sampler keeps a pointer to the series (which must outlive it) and an
// order of window ids; fill_batch copies one batch into caller-provided buffers.
// No per-batch heap allocation, and no window is dropped (unless a scorer asks,
// keep_windows_with_context): the last batch may be short (fill_batch returns its size).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnfc/base/sample.hpp"
#include "attnfc/data/split.hpp"

namespace attnfc::data {

struct TimeSeries;

struct WindowRef {
  size_t start_row = 0;  // first context row
  size_t channel = 0;    // channel for kIndependent; 0 for kMixed
  size_t part = 0;       // which of the row ranges it lies in
};

class WindowSampler {
 public:
  // InputError if `rows` lies outside the series or context/horizon is 0.
  WindowSampler(const TimeSeries& series, RowRange rows, size_t context, size_t horizon,
                ChannelMode mode);
  // Windows over several row ranges (one per series of a panel), in range order; ranges
  // too short for a window contribute none. Same checks per range.
  WindowSampler(const TimeSeries& series, std::vector<RowRange> parts, size_t context,
                size_t horizon, ChannelMode mode);

  // Windows per channel = the sum over ranges of count_windows(range, context + horizon);
  // kIndependent multiplies by the number of channels.
  size_t num_windows() const { return order_.size(); }
  size_t num_batches(size_t batch_size) const {
    return batch_size == 0 ? 0 : (order_.size() + batch_size - 1) / batch_size;
  }
  size_t context() const { return context_; }
  size_t horizon() const { return horizon_; }
  ChannelMode mode() const { return mode_; }
  // Values per time step in a sample: 1 for kIndependent, channels for kMixed.
  size_t width() const { return width_; }

  // Restores chronological order (window id order: range, then start row, channel minor).
  void reset_order();
  // A Fisher-Yates permutation of the window ids drawn from `seed` alone (not
  // from any earlier order), so the same seed gives the same order on any
  // machine and thread count. Use e.g. seed = base_seed + epoch.
  void shuffle(uint64_t seed);

  // As many draws as there are windows, each a range (a series) picked uniformly among the
  // ranges that have windows, then a window (and a channel) uniformly within it, with
  // replacement, from `seed` alone: every series weighs the same in an epoch, however many
  // windows it has (train.series_weighting "series").
  void draw_by_series(uint64_t seed);

  WindowRef window(size_t position) const;

  // For scoring: keeps in the order only the windows with something to score: a target lane
  // (a target channel of a mixed window, a window's own channel otherwise; past covariates
  // do not count) with an observed value somewhere in its context, since no forecaster (a
  // baseline, the model) can forecast a target from nothing. The other target lanes of a
  // kept window are left out by uncount_unreadable_lanes. Returns how many windows it
  // removed. reset_order(), shuffle() and draw_by_series() bring every window back.
  size_t keep_windows_with_context();

  // Fills samples order[first, first + count) into `out` (the sample layout of
  // base/sample.hpp, out.width == width()), with batch_size = out.capacity and
  // count = min(batch_size, num_windows() - batch_index * batch_size); returns count.
  //   context_observed: 1 where observed (filled inputs are flagged 0, whatever the policy)
  //   target_observed:  1 where the target counts: observed, or any value unless the
  //                     series' missing policy is kMask; 0 for a past covariate (a channel at or
  //                     after series.target_channels, mixed samples)
  size_t fill_batch(size_t batch_index, SampleBuffers& out) const;
  // The same for order[first, first + min(max_count, num_windows() - first)), into samples
  // 0.. of `out` (max_count at most out.capacity): one micro-batch of a batch.
  size_t fill_samples(size_t first, size_t max_count, SampleBuffers& out) const;

 private:
  size_t all_windows() const;  // every window id, whatever the order holds now

  const TimeSeries* series_;
  std::vector<RowRange> parts_;
  std::vector<size_t> first_window_;  // per range: windows (per channel) before it
  size_t context_, horizon_, width_;
  ChannelMode mode_;
  size_t windows_per_channel_ = 0;
  std::vector<uint64_t> order_;
};

// For scoring, after fill_batch: in each of the first `count` samples, a lane with no
// observed context value has its targets not counted (target_observed 0), for every
// forecaster alike: none can forecast it (the model's forecaster returns NaN there when
// built with nan_for_unreadable, a baseline too). Returns how many lanes it left out.
size_t uncount_unreadable_lanes(SampleBuffers& s, size_t count);

}  // namespace attnfc::data
