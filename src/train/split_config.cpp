// The split a run config asks for, of each series of its data (run_config.hpp).
#include <filesystem>

#include "attnfc/base/error.hpp"
#include "attnfc/data/time.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

data::Split segment_split(const DataConfig& d, const data::TimeSeries& series,
                          const data::SeriesSegment& seg, size_t context, size_t horizon) {
  const size_t n = seg.rows();
  if (d.split_protocol == "rows")
    return data::split_by_rows(n, d.train_rows, d.val_rows, d.test_rows, context);
  if (d.split_protocol == "from_end")
    return data::split_from_end(n, static_cast<size_t>(d.val_rows),
                                static_cast<size_t>(d.test_rows), static_cast<size_t>(d.end_offset),
                                context);
  if (d.split_protocol == "fractions")
    return data::split_by_fractions(n, d.train_frac, d.test_frac, context);
  if (d.split_protocol == "last_horizon") return data::split_last_horizons(n, horizon, context);
  if (d.split_protocol == "dates") {
    data::TimeSeries times;  // the segment's time axis alone
    times.source = series.source;
    times.time_style = series.time_style;
    times.timestamps.assign(series.timestamps.begin() + static_cast<ptrdiff_t>(seg.begin),
                            series.timestamps.begin() + static_cast<ptrdiff_t>(seg.end));
    return data::split_by_dates(
        times,
        data::parse_timestamp_or_throw(d.val_start, "data.split.val_start", d.csv.date_format),
        data::parse_timestamp_or_throw(d.test_start, "data.split.test_start", d.csv.date_format),
        context);
  }
  if (d.split_protocol == "auto")  // "ETTh1.csv" -> etth, anything else -> custom
    return data::standard_split(std::filesystem::path(d.csv.path).filename().string(), n, context);
  return data::standard_split(d.split_protocol, n, context);
}

data::Split make_split(const DataConfig& d, const data::TimeSeries& series, size_t context,
                       size_t horizon) {
  if (series.num_series() != 1)
    throw InputError(series.source + ": " + std::to_string(series.num_series()) +
                     " series (data.id_column '" + series.id_column +
                     "'); expected one series here");
  return segment_split(d, series, series.series_segments().front(), context, horizon);
}

data::PanelSplit make_panel_split(const DataConfig& d, const data::TimeSeries& series,
                                  size_t context, size_t horizon) {
  const std::vector<data::SeriesSegment> segments = series.series_segments();
  data::PanelSplit out;
  for (size_t k = 0; k < segments.size(); ++k) {
    const data::SeriesSegment& seg = segments[k];
    try {
      data::Split sp = segment_split(d, series, seg, context, horizon);
      data::validate_split(sp, context, horizon, series.source);
      out.splits.push_back(data::shifted(sp, seg.begin));
      out.series.push_back(k);
    } catch (const InputError& e) {
      // One series is the whole run: its problem is the run's error, as it always was.
      if (segments.size() == 1) throw;
      out.skipped.push_back("series '" + seg.id + "' (" + std::to_string(seg.rows()) +
                            " rows): " + e.what());
    }
  }
  if (out.splits.empty())
    throw InputError(series.source + ": none of the " + std::to_string(segments.size()) +
                     " series is long enough for a window in every split part; the first: " +
                     out.skipped.front());
  return out;
}

}  // namespace attnfc::train
