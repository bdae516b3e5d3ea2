// The TimeSeries members: lookups, the time axis forward and the one-line description.
#include <algorithm>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::join;
using detail::quote_token;

namespace {

// 373372 -> "373,372".
std::string grouped(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

size_t TimeSeries::total_missing() const {
  size_t t = 0;
  for (size_t m : missing_per_channel) t += m;
  return t;
}

bool TimeSeries::observed_in(size_t channel, size_t first, size_t count) const {
  for (size_t r = first; r < first + count; ++r)
    if (is_observed(r, channel)) return true;
  return false;
}

long TimeSeries::unobserved_target(size_t first, size_t count) const {
  for (size_t c = 0; c < num_targets(); ++c)
    if (!observed_in(c, first, count)) return static_cast<long>(c);
  return -1;
}

std::vector<SeriesSegment> TimeSeries::series_segments() const {
  if (!segments.empty()) return segments;
  return {SeriesSegment{"", 0, rows()}};
}

size_t TimeSeries::segment_index(size_t row) const {
  if (segments.empty()) return 0;
  // Segments are in row order: the last one that begins at or before `row`.
  const auto it = std::upper_bound(segments.begin(), segments.end(), row,
                                   [](size_t r, const SeriesSegment& g) { return r < g.begin; });
  return static_cast<size_t>(it - segments.begin()) - 1;
}

size_t TimeSeries::channel_index(std::string_view name) const {
  for (size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] == name) return i;
  }
  throw InputError(
      locate(source, 0, 0,
             "no channel named '" + quote_token(name) + "'; expected one of: " + join(channels)));
}

std::vector<int64_t> TimeSeries::future_timestamps(size_t n) const {
  if (!frequency.known() || timestamps.empty()) {
    throw InputError(locate(source, 0, 0,
                            "cannot step the time axis forward: the frequency is unknown; "
                            "expected at least two rows or a given frequency"));
  }
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = frequency.advance(timestamps.back(), static_cast<int64_t>(i + 1));
  }
  return out;
}

std::string TimeSeries::describe() const {
  const bool panel = segments.size() > 1;
  // Panels run to hundreds of thousands of rows: group the digits there (wide lines stay
  // as they always were).
  std::string d = panel ? std::to_string(segments.size()) + " series, " + grouped(rows())
                        : std::to_string(rows());
  d += " rows x " + std::to_string(num_channels()) +
       (num_channels() == 1 ? " channel" : " channels");
  if (!timestamps.empty() && panel) {
    // Timestamps restart with every series: the span is the earliest to the latest.
    const auto [lo, hi] = std::minmax_element(timestamps.begin(), timestamps.end());
    d += ", " + format_time(*lo) + " .. " + format_time(*hi);
  } else if (!timestamps.empty()) {
    d += ", " + format_time(timestamps.front()) + " .. " + format_time(timestamps.back());
  }
  d += ", " + frequency.name();
  if (gaps.empty()) {
    d += ", no gaps";
  } else {
    d += ", " + std::to_string(gaps.size()) + " gaps (" + std::to_string(total_missing_periods) +
         " missing periods" +
         (off_grid_steps ? ", " + std::to_string(off_grid_steps) + " off-grid steps" : "") + ")";
  }
  const size_t miss = total_missing();
  if (miss)
    d += ", " + std::to_string(miss) + " missing values (" + enum_name(missing_policy) + ")";
  return d;
}

}  // namespace attnfc::data
