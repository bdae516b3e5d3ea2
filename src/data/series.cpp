// load_series: CSV table -> time axis -> value columns -> missing-value policy.
#include "attnfc/data/series.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "attnfc/base/error.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::check_increasing;
using detail::fill_missing;
using detail::join;
using detail::lower;
using detail::quote_token;
using detail::read_composite_time;
using detail::read_single_time_column;
using detail::resolve_time_columns;

namespace {

std::vector<size_t> candidate_value_columns(const CsvTable& table, const CsvOptions& opt,
                                            const std::vector<size_t>& time_cols) {
  std::vector<size_t> cols;
  const auto is_time = [&](size_t c) {
    return std::find(time_cols.begin(), time_cols.end(), c) != time_cols.end();
  };
  if (!opt.value_columns.empty()) {
    for (const std::string& name : opt.value_columns) {
      const size_t c = table.column_index(name);
      if (is_time(c)) {
        throw InputError(locate(table.source(), 1, static_cast<long>(c + 1),
                                "column '" + quote_token(name) +
                                    "' is the time column; expected it not to be a value column"));
      }
      if (std::find(cols.begin(), cols.end(), c) != cols.end()) {
        throw InputError(locate(table.source(), 1, static_cast<long>(c + 1),
                                "column '" + quote_token(name) +
                                    "' is listed twice; expected each value "
                                    "column once"));
      }
      cols.push_back(c);
    }
    return cols;
  }
  for (size_t c = 0; c < table.num_columns(); ++c) {
    if (!is_time(c)) cols.push_back(c);
  }
  return cols;
}

struct ColumnState {
  size_t col;
  bool seen_number = false;
  bool dropped = false;  // auto-selected column that turned out to be text
  std::vector<float> values;
  std::vector<uint8_t> observed;
  size_t missing = 0;
};

[[noreturn]] void throw_missing_error(const CsvTable& table, const std::vector<ColumnState>& cols,
                                      size_t total) {
  // The first few (row, column) pairs in file order.
  std::vector<std::pair<size_t, size_t>> first;
  std::vector<size_t> next(cols.size(), 0);
  while (first.size() < 5) {
    size_t best = cols.size(), best_row = std::numeric_limits<size_t>::max();
    for (size_t k = 0; k < cols.size(); ++k) {
      while (next[k] < cols[k].observed.size() && cols[k].observed[next[k]]) ++next[k];
      if (next[k] < cols[k].observed.size() && next[k] < best_row) best = k, best_row = next[k];
    }
    if (best == cols.size()) break;
    first.emplace_back(best_row, best);
    ++next[best];
  }
  std::string per_column;
  size_t ncols_missing = 0;
  for (const ColumnState& c : cols) {
    if (c.missing == 0) continue;
    per_column += std::string(ncols_missing++ ? ", " : "") + quote_token(table.header()[c.col]) +
                  " (" + std::to_string(c.missing) + ")";
  }
  std::string where;
  for (size_t i = 0; i < first.size(); ++i) {
    where += std::string(i ? ", " : "") + "line " + std::to_string(table.line_of(first[i].first)) +
             " column " + quote_token(table.header()[cols[first[i].second].col]);
  }
  const auto [row, k] = first.front();
  throw InputError(table.locate_cell(
      row, cols[k].col,
      "found missing value '" + quote_token(table.cell(row, cols[k].col)) +
          "', expected a number (" + std::to_string(total) + " missing in " + per_column +
          "; first at " + where + "); choose a missing-value policy: ffill, interpolate or mask"));
}

// The time axis into s.timestamps (and its column names); returns the time columns.
std::vector<size_t> read_time_axis(const CsvTable& table, const CsvOptions& opt, TimeSeries& s) {
  std::vector<size_t> time_cols = resolve_time_columns(table, opt);
  if (time_cols.size() == 1 && lower(table.header()[time_cols[0]]) == "year") {
    read_composite_time(table, time_cols, s);  // a lone "year" column holds years, not seconds
  } else if (time_cols.size() == 1) {
    read_single_time_column(table, time_cols[0], s);
  } else {
    read_composite_time(table, time_cols, s);
  }
  for (size_t c : time_cols) s.time_columns.push_back(table.header()[c]);
  check_increasing(table, time_cols.back(), s);
  return time_cols;
}

// Parses every candidate value column row by row (the table is row-major); a column of
// text is dropped when the columns were not chosen explicitly.
void parse_value_cells(const CsvTable& table, bool explicit_columns,
                       std::vector<ColumnState>& cols) {
  const size_t n = table.num_rows();
  for (size_t r = 0; r < n; ++r) {
    for (ColumnState& st : cols) {
      if (st.dropped) continue;
      const std::string_view cell = table.cell(r, st.col);
      double x;
      if (parse_number(cell, x)) {
        const float f = static_cast<float>(x);
        if (!std::isfinite(f)) {
          throw InputError(
              table.locate_cell(r, st.col,
                                "found '" + quote_token(cell) +
                                    "', expected a number within float range (|x| < 3.4e38)"));
        }
        st.values[r] = f;
        st.observed[r] = 1;
        st.seen_number = true;
        continue;
      }
      if (is_missing_token(cell)) {
        ++st.missing;
        continue;
      }
      if (!st.seen_number && !explicit_columns) {
        st.dropped = true;  // a text column (like pollution's cbwd): not a value column
        continue;
      }
      if (!st.seen_number) {
        throw InputError(table.locate_cell(
            r, st.col,
            "found text '" + quote_token(cell) +
                "', expected a numeric column (a text column cannot be a value column)"));
      }
      throw InputError(
          table.locate_cell(r, st.col, "found '" + quote_token(cell) + "', expected a number"));
    }
  }
}

// Keeps the value columns: without an explicit choice, text columns and a running row
// number are dropped. InputError when none is left.
void select_value_columns(const CsvTable& table, const CsvOptions& opt,
                          const std::vector<size_t>& time_cols, bool explicit_columns,
                          std::vector<ColumnState>& cols) {
  const size_t n = table.num_rows();
  // Left to choose, a running row number named like an index (pollution's
  // "No", a saved pandas index) is not a series: skip it like a text column.
  const auto is_row_counter = [&](const ColumnState& st) {
    static const char* kIndexNames[] = {"", "no", "index", "id", "#", "row", "unnamed: 0"};
    const std::string name = lower(detail::trim_blanks(table.header()[st.col]));
    if (std::none_of(std::begin(kIndexNames), std::end(kIndexNames),
                     [&](const char* k) { return name == k; })) {
      return false;
    }
    if (st.missing || n < 3) return false;
    const float offset = st.values[0];
    if (offset != 0.0f && offset != 1.0f) return false;
    for (size_t r = 0; r < n; ++r) {
      if (st.values[r] != static_cast<float>(r) + offset) return false;
    }
    return true;
  };
  std::erase_if(cols, [&](const ColumnState& st) {
    return !explicit_columns && (st.dropped || !st.seen_number || is_row_counter(st));
  });
  if (cols.empty()) {
    // Name a text column that may have been meant as numbers (e.g. decimal commas).
    std::string hint;
    for (size_t c : candidate_value_columns(table, opt, time_cols)) {
      for (size_t r = 0; r < n && hint.empty(); ++r) {
        const std::string_view cell = table.cell(r, c);
        if (!is_missing_token(cell)) {
          hint = " (column '" + quote_token(table.header()[c]) + "' holds text such as '" +
                 quote_token(cell) + "' on line " + std::to_string(table.line_of(r)) + ")";
        }
      }
      if (!hint.empty()) break;
    }
    throw InputError(locate(table.source(), 1, 0,
                            "found no numeric value columns among: " + join(table.header()) + hint +
                                "; expected at least one column of numbers besides the time"));
  }
  // Two value columns of one name would be one channel name for two series: a model
  // trained on them could not find its columns again.
  for (size_t k = 0; k < cols.size(); ++k)
    for (size_t m = k + 1; m < cols.size(); ++m)
      if (table.header()[cols[k].col] == table.header()[cols[m].col])
        throw InputError(locate(table.source(), 1, static_cast<long>(cols[m].col + 1),
                                "column '" + quote_token(table.header()[cols[m].col]) +
                                    "' has the name of column " + std::to_string(cols[k].col + 1) +
                                    "; expected every value column to have its own name"));
}

// Applies the missing-value policy (InputError under "error").
void handle_missing(const CsvTable& table, const CsvOptions& opt, std::vector<ColumnState>& cols) {
  size_t total_missing = 0;
  for (const ColumnState& st : cols) {
    if (!st.seen_number) {
      throw InputError(locate(table.source(), 1, static_cast<long>(st.col + 1),
                              "column '" + quote_token(table.header()[st.col]) +
                                  "': found no values at all, expected numbers"));
    }
    total_missing += st.missing;
  }
  if (total_missing > 0) {
    if (opt.missing == MissingPolicy::kError) throw_missing_error(table, cols, total_missing);
    for (ColumnState& st : cols) {
      if (st.missing) fill_missing(st.values, st.observed, opt.missing);
    }
  }
}

// Row-major [rows x channels] values and masks, with the channel names.
void assemble_values(const CsvTable& table, const std::vector<ColumnState>& cols, TimeSeries& s) {
  const size_t n = table.num_rows();
  const size_t nc = cols.size();
  s.values.resize(n * nc);
  s.observed.resize(n * nc);
  for (size_t k = 0; k < nc; ++k) {
    s.channels.push_back(table.header()[cols[k].col]);
    s.missing_per_channel.push_back(cols[k].missing);
    for (size_t r = 0; r < n; ++r) {
      s.values[r * nc + k] = cols[k].values[r];
      s.observed[r * nc + k] = cols[k].observed[r];
    }
  }
}

// The frequency (given or inferred) and the gaps it implies; InputError for gaps when the
// series must be regular.
void frequency_and_gaps(const CsvTable& table, const CsvOptions& opt,
                        const std::vector<size_t>& time_cols, TimeSeries& s) {
  if (!opt.frequency.empty()) {
    try {
      s.frequency = Frequency::parse(opt.frequency);
    } catch (const InputError& e) {
      throw InputError(locate(table.source(), 0, 0, e.what()));
    }
    s.frequency_inferred = false;
  } else {
    s.frequency = infer_frequency(s.timestamps);
  }
  s.gaps = find_gaps(s.timestamps, s.frequency);
  for (const Gap& g : s.gaps) {
    if (g.missing_periods < 0) {
      ++s.off_grid_steps;
    } else {
      s.total_missing_periods += g.missing_periods;
    }
  }
  if (opt.regular && !s.gaps.empty()) {
    std::string first;
    for (size_t i = 0; i < s.gaps.size() && i < 3; ++i) {
      const Gap& g = s.gaps[i];
      first += std::string(i ? "; " : "") + "line " + std::to_string(table.line_of(g.row)) + ": " +
               s.format_time(g.before) + " -> " + s.format_time(g.after) +
               (g.missing_periods < 0 ? " (off the grid)"
                                      : " (" + std::to_string(g.missing_periods) + " missing)");
    }
    throw InputError(table.locate_cell(
        s.gaps[0].row, time_cols.back(),
        "found " + std::to_string(s.gaps.size()) + " gap(s) at frequency " + s.frequency.name() +
            " (first: " + first + "), expected a regular series (regular: true)"));
  }
}

}  // namespace

TimeSeries load_series(const CsvOptions& options) {
  return load_series(CsvTable::read_file(options.path, options.delimiter), options);
}

TimeSeries load_series(const CsvTable& table, const CsvOptions& opt) {
  TimeSeries s;
  s.source = table.source();
  s.missing_policy = opt.missing;
  const size_t n = table.num_rows();
  const std::vector<size_t> time_cols = read_time_axis(table, opt, s);
  const bool explicit_columns = !opt.value_columns.empty();
  std::vector<ColumnState> cols;
  for (size_t c : candidate_value_columns(table, opt, time_cols)) {
    ColumnState st;
    st.col = c;
    st.values.resize(n);
    st.observed.resize(n);
    cols.push_back(std::move(st));
  }
  parse_value_cells(table, explicit_columns, cols);
  select_value_columns(table, opt, time_cols, explicit_columns, cols);
  handle_missing(table, opt, cols);
  assemble_values(table, cols, s);
  frequency_and_gaps(table, opt, time_cols, s);
  return s;
}

size_t TimeSeries::total_missing() const {
  size_t t = 0;
  for (size_t m : missing_per_channel) t += m;
  return t;
}

std::vector<SeriesSegment> TimeSeries::series_segments() const {
  if (!segments.empty()) return segments;
  return {SeriesSegment{"", 0, rows()}};
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
  std::string d = std::to_string(rows()) + " rows x " + std::to_string(num_channels()) +
                  (num_channels() == 1 ? " channel" : " channels");
  if (!timestamps.empty()) {
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
