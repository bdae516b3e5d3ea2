// Reading a predict input for a model with future covariates: the history, and the rows
// after it that carry only the covariates (loaded_model.hpp read_history / read_future).
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/known_setup.hpp"
#include "attnfc/train/loaded_model.hpp"

namespace attnfc::train {

namespace {

// Rows [first, seg.end) of `all`: the series' last rows whose every target is empty.
size_t first_future_row(const data::TimeSeries& all, const data::SeriesSegment& seg,
                        size_t targets) {
  size_t first = seg.end;
  const auto all_empty = [&](size_t r) {
    for (size_t c = 0; c < targets; ++c)
      if (all.is_observed(r, c)) return false;
    return true;
  };
  while (first > seg.begin && all_empty(first - 1)) --first;
  return first;
}

// The future covariates (the last F channels) of rows [first, end) appended to `out`; a
// missing one is an InputError naming the line and column.
void take_future_rows(const data::TimeSeries& all, const data::CsvTable& table, size_t first,
                      size_t end, size_t F, data::TimeSeries& out, std::vector<uint8_t>& drop) {
  const size_t nc = all.num_channels();
  for (size_t r = first; r < end; ++r) {
    const size_t row = all.table_row(r);
    drop[row] = 1;
    out.timestamps.push_back(all.timestamps[r]);
    for (size_t c = nc - F; c < nc; ++c) {
      if (!all.is_observed(r, c))
        throw InputError(table.locate_cell(
            row, table.column_index(all.channels[c]),
            "a future covariate is empty on a row after the history (every target empty); "
            "expected its value at every forecast step"));
      out.values.push_back(all.value(r, c));
      out.observed.push_back(1);
    }
  }
}

}  // namespace

data::TimeSeries LoadedModel::read_history(const std::string& csv_path,
                                           data::TimeSeries* future_rows) const {
  const size_t F = known ? known->future_channels : 0;
  if (future_rows) *future_rows = data::TimeSeries();
  if (F == 0 || !future_rows) return read_series(csv_path);
  data::CsvOptions opt = run.data.csv;
  opt.path = csv_path;
  opt.value_columns = columns;
  opt.regular = false;
  const data::CsvTable table = data::CsvTable::read_file(csv_path, opt.delimiter);
  data::CsvOptions loose = opt;  // empty targets after the history must not stop the read
  loose.missing = data::MissingPolicy::kMask;
  const data::TimeSeries all = data::load_series(table, loose);
  data::TimeSeries& fut = *future_rows;
  fut.source = csv_path;
  fut.channels.assign(all.channels.end() - static_cast<ptrdiff_t>(F), all.channels.end());
  fut.id_column = all.id_column;
  fut.time_style = all.time_style;
  fut.frequency = all.frequency;
  std::vector<uint8_t> drop(table.num_rows(), 0);
  const auto targets = static_cast<size_t>(config().target_channels);
  for (const data::SeriesSegment& seg : all.series_segments()) {
    const size_t first = first_future_row(all, seg, targets), begin = fut.rows();
    take_future_rows(all, table, first, seg.end, F, fut, drop);
    if (fut.rows() > begin) fut.segments.push_back({seg.id, begin, fut.rows()});
  }
  if (fut.rows() == 0) {
    fut = data::TimeSeries();
    data::TimeSeries series = data::load_series(table, opt);
    series.target_channels = targets;
    attach_known(known, series, &table, opt.number);
    return series;
  }
  spdlog::info(
      "{}: {} row(s) after the history (every target empty) read as the future "
      "covariates of the forecast steps",
      csv_path, fut.rows());
  // The history under the training run's own missing policy, its lines as in the file.
  const data::CsvTable history = table.without_rows(drop);
  data::TimeSeries series = data::load_series(history, opt);
  series.target_channels = targets;
  attach_known(known, series, &history, opt.number);
  return series;
}

data::TimeSeries LoadedModel::read_future(const std::string& csv_path) const {
  const size_t F = known ? known->future_channels : 0;
  if (F == 0)
    throw InputError("--future: " + path +
                     " reads no future covariates (data.future_covariates); expected no --future");
  data::CsvOptions opt = run.data.csv;
  opt.path = csv_path;
  opt.value_columns.assign(columns.end() - static_cast<ptrdiff_t>(F), columns.end());
  opt.missing = data::MissingPolicy::kError;
  opt.regular = false;
  return data::load_series(opt);
}

}  // namespace attnfc::train
