// Stride-1 windows over one split part, filled into caller buffers.
#include "attnfc/data/window.hpp"

#include <numeric>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"

namespace attnfc::data {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
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
    : series_(&series), rows_(rows), context_(context), horizon_(horizon), mode_(mode) {
  if (context == 0 || horizon == 0) {
    throw InputError("windows: found context " + std::to_string(context) + " and horizon " +
                     std::to_string(horizon) + "; expected both to be at least 1");
  }
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
  windows_per_channel_ = count_windows(rows, context + horizon);
  const size_t per_window = mode == ChannelMode::kMixed ? 1 : series.num_channels();
  order_.resize(windows_per_channel_ * per_window);
  reset_order();
}

void WindowSampler::reset_order() {
  std::iota(order_.begin(), order_.end(), uint64_t{0});
}

void WindowSampler::shuffle(uint64_t seed) {
  reset_order();
  uint64_t counter = 0;
  for (size_t i = order_.size(); i > 1; --i) {
    const uint64_t j = bounded(seed, counter, i);
    std::swap(order_[i - 1], order_[j]);
  }
}

WindowRef WindowSampler::window(size_t position) const {
  const uint64_t id = order_[position];
  if (mode_ == ChannelMode::kMixed) return {rows_.begin + static_cast<size_t>(id), 0};
  const size_t nc = series_->num_channels();
  return {rows_.begin + static_cast<size_t>(id / nc), static_cast<size_t>(id % nc)};
}

size_t WindowSampler::fill_batch(size_t batch_index, size_t batch_size, float* context_out,
                                 float* target_out, float* target_mask, float* context_mask) const {
  const size_t first = batch_index * batch_size;
  if (batch_size == 0 || first >= order_.size()) return 0;
  const size_t count = std::min(batch_size, order_.size() - first);
  const size_t nc = series_->num_channels();
  const float* values = series_->values.data();
  const uint8_t* observed = series_->observed.data();
  const bool mask_targets = series_->missing_policy == MissingPolicy::kMask;
  const size_t ctx_stride = context_ * width_, tgt_stride = horizon_ * width_;
  for (size_t b = 0; b < count; ++b) {
    const WindowRef w = window(first + b);
    float* ctx = context_out + b * ctx_stride;
    float* tgt = target_out + b * tgt_stride;
    if (mode_ == ChannelMode::kMixed) {
      // Rows are contiguous in the row-major series: one copy per part.
      const float* src = values + w.start_row * nc;
      std::copy(src, src + ctx_stride, ctx);
      std::copy(src + ctx_stride, src + ctx_stride + tgt_stride, tgt);
      const uint8_t* obs = observed + w.start_row * nc;
      if (context_mask) {
        for (size_t i = 0; i < ctx_stride; ++i) context_mask[b * ctx_stride + i] = obs[i];
      }
      if (target_mask) {
        for (size_t i = 0; i < tgt_stride; ++i) {
          target_mask[b * tgt_stride + i] = mask_targets ? obs[ctx_stride + i] : 1.0f;
        }
      }
    } else {
      const float* src = values + w.start_row * nc + w.channel;
      const uint8_t* obs = observed + w.start_row * nc + w.channel;
      for (size_t t = 0; t < context_; ++t) ctx[t] = src[t * nc];
      for (size_t t = 0; t < horizon_; ++t) tgt[t] = src[(context_ + t) * nc];
      if (context_mask) {
        for (size_t t = 0; t < context_; ++t) context_mask[b * context_ + t] = obs[t * nc];
      }
      if (target_mask) {
        for (size_t t = 0; t < horizon_; ++t) {
          target_mask[b * horizon_ + t] = mask_targets ? obs[(context_ + t) * nc] : 1.0f;
        }
      }
    }
  }
  return count;
}

}  // namespace attnfc::data
