// The quantile start: level gaps from the starting model's errors on training windows
// (quantile_start.hpp says why).
#include "attnfc/train/quantile_start.hpp"

#include <algorithm>
#include <cmath>

#include "attnfc/kernels/random.hpp"

namespace attnfc::train {

double empirical_quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::nan("");
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = at - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

std::vector<double> level_gaps(const std::vector<double>& sorted, const std::vector<float>& levels,
                               int m) {
  const auto Q = static_cast<int>(levels.size());
  std::vector<double> gaps(levels.size(), 0.5);
  gaps[static_cast<size_t>(m)] = 0;
  if (sorted.empty()) return gaps;
  std::vector<double> at(levels.size());
  for (int j = 0; j < Q; ++j) at[static_cast<size_t>(j)] = empirical_quantile(sorted, levels[j]);
  for (int j = 0; j < Q; ++j) {
    if (j == m) continue;
    const auto k = static_cast<size_t>(j);
    const double gap = j > m ? at[k] - at[k - 1] : at[k + 1] - at[k];
    gaps[k] = std::max(gap, kMinLevelGap);
  }
  return gaps;
}

namespace {

// A stream of its own, so the draw differs from every epoch's shuffle.
constexpr uint64_t kQuantileStartStream = 0x2545f4914fULL;

// The errors of the first `count` windows of the sampler's order, [window, H, C] (NaN where
// a target does not count), one batch of `buffers` at a time.
std::vector<float> read_errors(const model::PatchTransformer& net,
                               const data::WindowSampler& windows, SampleBuffers& buffers,
                               int64_t count) {
  std::vector<float> errors;
  for (int64_t first = 0; first < count;) {
    const auto n = static_cast<int64_t>(windows.fill_samples(
        static_cast<size_t>(first), static_cast<size_t>(std::min(buffers.capacity, count - first)),
        buffers));
    const std::vector<float> e = net.median_errors(buffers.view(n));
    errors.insert(errors.end(), e.begin(), e.end());
    first += n;
  }
  return errors;
}

}  // namespace

QuantileStart init_quantile_levels(model::PatchTransformer& net, data::WindowSampler& windows,
                                   SampleBuffers& buffers, uint64_t seed, int64_t max_windows) {
  const model::ModelConfig& cfg = net.config();
  const int64_t H = cfg.horizon, C = cfg.token_channels(), Q = cfg.levels();
  const int m = cfg.median_level();
  const int64_t steps = cfg.cross_attention() ? 1 : H;  // the head's steps
  windows.shuffle(kernels::random_bits(seed ^ kQuantileStartStream, 0));
  const int64_t count = std::min(static_cast<int64_t>(windows.num_windows()), max_windows);
  const std::vector<float> errors = read_errors(net, windows, buffers, count);
  std::vector<double> gaps(static_cast<size_t>(steps * Q * C));
  std::vector<double> sorted;
  QuantileStart start;
  start.windows = count;
  for (int64_t s = 0; s < steps; ++s)
    for (int64_t c = 0; c < C; ++c) {
      sorted.clear();  // step s's errors, or every step's for a shared head
      for (int64_t w = 0; w < count; ++w)
        for (int64_t k = (steps == 1 ? 0 : s); k < (steps == 1 ? H : s + 1); ++k) {
          const float e = errors[static_cast<size_t>((w * H + k) * C + c)];
          if (!std::isnan(e)) sorted.push_back(e);
        }
      std::sort(sorted.begin(), sorted.end());
      const std::vector<double> g = level_gaps(sorted, cfg.quantiles, m);
      for (int64_t j = 0; j < Q; ++j) gaps[static_cast<size_t>((s * Q + j) * C + c)] = g[j];
      double width = 0;
      for (int64_t j = 0; j < Q; ++j) width += g[j];
      if (c == 0 && s == 0) start.first_width = width;
      if (c == 0 && s == steps - 1) start.last_width = width;
    }
  net.set_level_gaps(gaps);
  return start;
}

}  // namespace attnfc::train
