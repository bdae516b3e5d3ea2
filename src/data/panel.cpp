// One series out of a panel (panel.hpp).
#include "attnfc/data/panel.hpp"

#include <stdexcept>

#include "attnfc/data/known_source.hpp"

namespace attnfc::data {

TimeSeries series_of(const TimeSeries& panel, size_t k) {
  // Indexed in place, not through series_segments(): predict takes every series of a
  // panel apart, and a copy of the segment list per call would make that quadratic.
  if (k >= panel.num_series())
    throw std::out_of_range("series_of: segment " + std::to_string(k) + " of " +
                            std::to_string(panel.num_series()));
  const SeriesSegment seg =
      panel.segments.empty() ? SeriesSegment{"", 0, panel.rows()} : panel.segments[k];
  const size_t nc = panel.num_channels();
  TimeSeries s;
  s.source = panel.source;
  s.channels = panel.channels;
  s.time_columns = panel.time_columns;
  s.time_style = panel.time_style;
  s.frequency = panel.frequency;
  s.frequency_inferred = panel.frequency_inferred;
  s.missing_policy = panel.missing_policy;
  s.target_channels = panel.target_channels;
  s.known = panel.known;
  if (panel.known) {  // this series' row of the encoded statics
    const size_t S = panel.known->numeric_width(), G = panel.known->category_width();
    s.static_numeric.assign(panel.static_numeric.begin() + static_cast<ptrdiff_t>(k * S),
                            panel.static_numeric.begin() + static_cast<ptrdiff_t>((k + 1) * S));
    s.static_codes.assign(panel.static_codes.begin() + static_cast<ptrdiff_t>(k * G),
                          panel.static_codes.begin() + static_cast<ptrdiff_t>((k + 1) * G));
  }
  const auto first = static_cast<ptrdiff_t>(seg.begin), last = static_cast<ptrdiff_t>(seg.end);
  s.timestamps.assign(panel.timestamps.begin() + first, panel.timestamps.begin() + last);
  const auto width = static_cast<ptrdiff_t>(nc);
  s.values.assign(panel.values.begin() + first * width, panel.values.begin() + last * width);
  s.observed.assign(panel.observed.begin() + first * width, panel.observed.begin() + last * width);
  if (!panel.table_rows.empty())
    s.table_rows.assign(panel.table_rows.begin() + first, panel.table_rows.begin() + last);
  s.missing_per_channel.assign(nc, 0);
  for (size_t i = 0; i < s.observed.size(); ++i)
    if (!s.observed[i]) ++s.missing_per_channel[i % nc];
  for (Gap g : panel.gaps) {
    if (g.row <= seg.begin || g.row >= seg.end) continue;  // a gap starts inside the series
    g.row -= seg.begin;
    s.total_missing_periods += g.missing_periods > 0 ? g.missing_periods : 0;
    if (g.missing_periods < 0) ++s.off_grid_steps;
    s.gaps.push_back(g);
  }
  return s;
}

}  // namespace attnfc::data
