// Stride-1 windows over one split part, filled into caller buffers.
#include "attnfc/data/window.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "attnfc/base/error.hpp"
#include "attnfc/base/splitmix.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/data/series.hpp"

namespace attnfc::data {

namespace {
// Uniform in [0, bound) without modulo bias (Lemire's multiply-and-reject).
uint64_t bounded(uint64_t seed, uint64_t& counter, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const unsigned __int128 m =
        static_cast<unsigned __int128>(splitmix64(seed ^ splitmix64(counter++))) * bound;
    if (static_cast<uint64_t>(m) >= threshold) return static_cast<uint64_t>(m >> 64);
  }
}
}  // namespace

WindowSampler::WindowSampler(const TimeSeries& series, RowRange rows, size_t context,
                             size_t horizon, ChannelMode mode)
    : WindowSampler(series, std::vector<RowRange>{rows}, context, horizon, mode) {}

WindowSampler::WindowSampler(const TimeSeries& series, std::vector<RowRange> parts, size_t context,
                             size_t horizon, ChannelMode mode)
    : series_(&series),
      parts_(std::move(parts)),
      context_(context),
      horizon_(horizon),
      mode_(mode) {
  if (context == 0 || horizon == 0) {
    throw InputError("windows: found context " + std::to_string(context) + " and horizon " +
                     std::to_string(horizon) + "; expected both to be at least 1");
  }
  for (const RowRange& rows : parts_)
    if (rows.begin > rows.end || rows.end > series.rows()) {
      throw InputError(series.source + ": windows over rows [" + std::to_string(rows.begin) + ", " +
                       std::to_string(rows.end) + "): expected a range inside the " +
                       std::to_string(series.rows()) + " rows");
    }
  if (series.num_channels() == 0) {
    throw InputError(series.source +
                     ": windows: the series has no channels; expected at least one");
  }
  width_ = mode == ChannelMode::kMixed ? series.num_channels() : 1;
  first_window_.reserve(parts_.size());
  for (const RowRange& rows : parts_) {
    first_window_.push_back(windows_per_channel_);
    windows_per_channel_ += count_windows(rows, context + horizon);
  }
  reset_order();
}

void WindowSampler::reset_order() {
  order_.resize(all_windows());  // after keep_windows_with_context: every window again
  std::iota(order_.begin(), order_.end(), uint64_t{0});
}

size_t WindowSampler::all_windows() const {
  return windows_per_channel_ * (mode_ == ChannelMode::kMixed ? 1 : series_->num_channels());
}

void WindowSampler::shuffle(uint64_t seed) {
  reset_order();
  uint64_t counter = 0;
  for (size_t i = order_.size(); i > 1; --i) {
    const uint64_t j = bounded(seed, counter, i);
    std::swap(order_[i - 1], order_[j]);
  }
}

void WindowSampler::draw_by_series(uint64_t seed) {
  std::vector<size_t> with_windows;  // once per epoch, not per step
  for (size_t p = 0; p < parts_.size(); ++p)
    if (count_windows(parts_[p], context_ + horizon_) > 0) with_windows.push_back(p);
  if (with_windows.empty()) return;
  order_.resize(all_windows());
  const uint64_t per_window = mode_ == ChannelMode::kMixed ? 1 : series_->num_channels();
  uint64_t counter = 0;
  for (uint64_t& id : order_) {
    const size_t p = with_windows[bounded(seed, counter, with_windows.size())];
    const uint64_t w =
        first_window_[p] + bounded(seed, counter, count_windows(parts_[p], context_ + horizon_));
    id = w * per_window + bounded(seed, counter, per_window);
  }
}

WindowRef WindowSampler::window(size_t position) const {
  const uint64_t id = order_[position];
  const size_t per_window = mode_ == ChannelMode::kMixed ? 1 : series_->num_channels();
  const auto w = static_cast<size_t>(id / per_window);
  const auto channel = static_cast<size_t>(id % per_window);
  // The last range whose first window is at or before w (ranges without windows share
  // their successor's first window, and upper_bound skips past them).
  const size_t part = static_cast<size_t>(
      std::upper_bound(first_window_.begin(), first_window_.end(), w) - first_window_.begin() - 1);
  return {parts_[part].begin + (w - first_window_[part]), channel, part};
}

size_t WindowSampler::keep_windows_with_context() {
  if (std::all_of(series_->observed.begin(), series_->observed.end(),
                  [](uint8_t o) { return o != 0; }))
    return 0;
  // Target channels only: a past covariate with no value in the context is read as missing,
  // and neither the model nor a baseline needs it to forecast the targets.
  const auto has_context = [&](const WindowRef& w) {
    const size_t targets = series_->num_targets();
    if (mode_ != ChannelMode::kMixed)
      return w.channel >= targets || series_->observed_in(w.channel, w.start_row, context_);
    for (size_t c = 0; c < targets; ++c)
      if (series_->observed_in(c, w.start_row, context_)) return true;
    return false;
  };
  size_t kept = 0;
  for (size_t p = 0; p < order_.size(); ++p)
    if (has_context(window(p))) order_[kept++] = order_[p];
  const size_t removed = order_.size() - kept;
  order_.resize(kept);
  return removed;
}

size_t WindowSampler::fill_batch(size_t batch_index, SampleBuffers& out) const {
  const size_t batch_size = static_cast<size_t>(out.capacity);
  return fill_samples(batch_index * batch_size, batch_size, out);
}

size_t WindowSampler::fill_samples(size_t first, size_t max_count, SampleBuffers& out) const {
  if (max_count > static_cast<size_t>(out.capacity))
    throw std::invalid_argument("WindowSampler::fill_samples: more samples than the buffers hold");
  if (max_count == 0 || first >= order_.size()) return 0;
  if (static_cast<size_t>(out.context) != context_ ||
      static_cast<size_t>(out.horizon) != horizon_ || static_cast<size_t>(out.width) != width_)
    throw std::invalid_argument("WindowSampler::fill_batch: buffers of another sample shape");
  const size_t count = std::min(max_count, order_.size() - first);
  const size_t nc = series_->num_channels();
  const float* values = series_->values.data();
  const uint8_t* observed = series_->observed.data();
  const bool mask_targets = series_->missing_policy == MissingPolicy::kMask;
  // Lanes from `targets` on are past covariates (mixed samples only): never targets.
  const size_t targets = series_->target_channels > 0 && mode_ == ChannelMode::kMixed
                             ? series_->target_channels
                             : width_;
  // Row-major series: sample step t of window w, lane k is values[(w.start_row + t) * nc +
  // lane0 + k], with one lane from w.channel (independent) or all nc lanes (mixed).
  const size_t ctx_stride = context_ * width_, tgt_stride = horizon_ * width_;
  for (size_t b = 0; b < count; ++b) {
    const WindowRef w = window(first + b);
    const size_t base = w.start_row * nc + w.channel;
    float* ctx = out.context_values.data() + b * ctx_stride;
    float* tgt = out.target_values.data() + b * tgt_stride;
    uint8_t* ctx_obs = out.context_observed.data() + b * ctx_stride;
    uint8_t* tgt_obs = out.target_observed.data() + b * tgt_stride;
    for (size_t t = 0; t < context_; ++t)
      for (size_t k = 0; k < width_; ++k) {
        ctx[t * width_ + k] = values[base + t * nc + k];
        ctx_obs[t * width_ + k] = observed[base + t * nc + k];
      }
    for (size_t t = 0; t < horizon_; ++t)
      for (size_t k = 0; k < width_; ++k) {
        const size_t src = base + (context_ + t) * nc + k;
        tgt[t * width_ + k] = values[src];
        tgt_obs[t * width_ + k] = k < targets ? (mask_targets ? observed[src] : uint8_t{1}) : 0;
      }
    fill_known(*series_, w.start_row + context_, b, out);
  }
  return count;
}

size_t uncount_unreadable_lanes(SampleBuffers& s, size_t count) {
  const auto L = static_cast<size_t>(s.context), H = static_cast<size_t>(s.horizon);
  const auto W = static_cast<size_t>(s.width);
  size_t left_out = 0;
  for (size_t b = 0; b < count; ++b)
    for (size_t k = 0; k < W; ++k) {
      const uint8_t* obs = s.context_observed.data() + b * L * W + k;
      bool seen = false;
      for (size_t t = 0; t < L && !seen; ++t) seen = obs[t * W] != 0;
      if (seen) continue;
      uint8_t* tgt = s.target_observed.data() + b * H * W + k;
      for (size_t t = 0; t < H; ++t) tgt[t * W] = 0;
      ++left_out;
    }
  return left_out;
}

}  // namespace attnfc::data
