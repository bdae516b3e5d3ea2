// The members' forecasts of one batch, summed per sample (member_sums.hpp).
#include "member_sums.hpp"

#include <algorithm>
#include <cmath>

namespace attnfc::train::detail {

namespace {

// Samples whose last `steps` steps hold no observed value: a member reading only those
// steps cannot forecast them. Empty when every sample has one (or all are observed).
std::vector<int64_t> blind_samples(const uint8_t* observed, int64_t samples, int L, int width,
                                   int steps) {
  std::vector<int64_t> blind;
  if (!observed) return blind;
  const int64_t row = static_cast<int64_t>(L) * width;
  const int64_t tail = static_cast<int64_t>(std::min(steps, L)) * width;
  for (int64_t s = 0; s < samples; ++s) {
    const uint8_t* last = observed + s * row + (row - tail);
    if (std::none_of(last, last + tail, [](uint8_t o) { return o != 0; })) blind.push_back(s);
  }
  return blind;
}

}  // namespace

MemberSums sum_members(const Members& members, const float* values, const uint8_t* observed,
                       int64_t samples, int L, int width, int H, const KnownInputs& inputs,
                       bool want_levels, bool nan_for_unreadable) {
  MemberSums sums;
  sums.count.assign(static_cast<size_t>(samples), 0);
  std::vector<float> lv, patched_values;
  std::vector<uint8_t> patched_observed;
  for (const model::PatchTransformer* m : members) {
    const int steps = m->config().context_length;
    const std::vector<int64_t> blind = steps < L || nan_for_unreadable
                                           ? blind_samples(observed, samples, L, width, steps)
                                           : std::vector<int64_t>{};
    if (static_cast<int64_t>(blind.size()) == samples) continue;
    const float* v = values;
    const uint8_t* o = observed;
    if (!blind.empty()) {
      const int64_t row = static_cast<int64_t>(L) * width;
      patched_values.assign(values, values + samples * row);
      patched_observed.assign(observed, observed + samples * row);
      for (const int64_t s : blind) {
        std::fill_n(patched_values.begin() + (s + 1) * row - width, width, 0.0f);
        std::fill_n(patched_observed.begin() + (s + 1) * row - width, width, uint8_t{1});
      }
      v = patched_values.data(), o = patched_observed.data();
    }
    const std::vector<float> f =
        m->forecast(v, o, samples, L, H, inputs, want_levels ? &lv : nullptr);
    if (sums.point.empty()) sums.point.assign(f.size(), 0.0f);
    if (want_levels && sums.levels.empty()) sums.levels.assign(lv.size(), 0.0f);
    const int64_t pb = static_cast<int64_t>(f.size()) / samples;
    const int64_t lb = static_cast<int64_t>(lv.size()) / samples;
    size_t next_blind = 0;
    for (int64_t s = 0; s < samples; ++s) {
      if (next_blind < blind.size() && blind[next_blind] == s) {
        ++next_blind;
        continue;
      }
      // The point sum starts from the first member's values and the level sum from 0.0f,
      // as before members could abstain (the bits of -0.0f differ).
      const bool first = sums.count[static_cast<size_t>(s)]++ == 0;
      for (int64_t i = s * pb; i < (s + 1) * pb; ++i)
        sums.point[i] = first ? f[i] : sums.point[i] + f[i];
      if (!want_levels) continue;
      for (int64_t i = s * lb; i < (s + 1) * lb; ++i) sums.levels[i] += lv[i];
    }
  }
  if (sums.point.empty()) {  // no member read any sample: every one becomes NaN
    const int64_t per = static_cast<int64_t>(H) * width;
    sums.point.assign(static_cast<size_t>(samples * per), 0.0f);
    if (want_levels)
      sums.levels.assign(static_cast<size_t>(samples * per * members.front()->config().levels()),
                         0.0f);
  }
  return sums;
}

void divide_by_count(std::vector<float>& v, const std::vector<int>& count) {
  const int64_t block = static_cast<int64_t>(v.size()) / static_cast<int64_t>(count.size());
  for (size_t s = 0; s < count.size(); ++s) {
    if (count[s] == 0)
      std::fill_n(v.begin() + static_cast<int64_t>(s) * block, block, std::nanf(""));
    if (count[s] <= 1) continue;
    const auto k = static_cast<float>(count[s]);
    for (int64_t i = static_cast<int64_t>(s) * block; i < static_cast<int64_t>(s + 1) * block; ++i)
      v[i] /= k;
  }
}

void window_levels(const std::vector<float>& mean, int Q, int H, bool mixed, int64_t batch, int C,
                   std::vector<float>& out) {
  out.resize(mean.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int h = 0; h < H; ++h)
      for (int q = 0; q < Q; ++q)
        for (int c = 0; c < C; ++c) {
          const int64_t dst = ((b * H + h) * Q + q) * C + c;
          const int64_t src = mixed ? dst : ((b * C + c) * H + h) * Q + q;
          out[static_cast<size_t>(dst)] = mean[src];
        }
}

}  // namespace attnfc::train::detail
