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

constexpr size_t kNoColumn = std::numeric_limits<size_t>::max();

std::vector<size_t> candidate_value_columns(const CsvTable& table, const CsvOptions& opt,
                                            const std::vector<size_t>& time_cols, size_t id_col) {
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
      if (c == id_col) {
        throw InputError(locate(table.source(), 1, static_cast<long>(c + 1),
                                "column '" + quote_token(name) +
                                    "' is the id column; expected it not to be a value column"));
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
    if (!is_time(c) && c != id_col) cols.push_back(c);
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
                                      size_t total, const std::string& setting) {
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
          "; first at " + where + "); choose " + setting + ": ffill, interpolate or mask"));
}

// The time axis into s.timestamps (and its column names); returns the time columns. A
// panel (id_col given) is grouped into its series and each sorted by time.
std::vector<size_t> read_time_axis(const CsvTable& table, const CsvOptions& opt, size_t id_col,
                                   TimeSeries& s) {
  std::vector<size_t> time_cols = resolve_time_columns(table, opt, id_col);
  if (std::find(time_cols.begin(), time_cols.end(), id_col) != time_cols.end()) {
    throw InputError(locate(table.source(), 1, static_cast<long>(id_col + 1),
                            "column '" + quote_token(opt.id_column) +
                                "' is both the id column and the time column; expected two "
                                "different columns"));
  }
  if (time_cols.size() == 1 && lower(table.header()[time_cols[0]]) == "year") {
    read_composite_time(table, time_cols, s);  // a lone "year" column holds years, not seconds
  } else if (time_cols.size() == 1) {
    read_single_time_column(table, time_cols[0], opt, s);
  } else {
    read_composite_time(table, time_cols, s);
  }
  for (size_t c : time_cols) s.time_columns.push_back(table.header()[c]);
  if (id_col == kNoColumn) {
    check_increasing(table, time_cols.back(), s);
  } else {
    detail::group_series(table, id_col, time_cols.back(), s);
  }
  return time_cols;
}

// Parses every candidate value column row by row (the table is row-major); a column of
// text is dropped when the columns were not chosen explicitly. `parse` is the default
// format's fast parse_number or, for data.decimal / data.thousands, the formatted one.
template <class Parse>
void parse_value_cells(const CsvTable& table, bool explicit_columns, const NumberFormat& format,
                       std::vector<ColumnState>& cols, Parse parse) {
  const size_t n = table.num_rows();
  for (size_t r = 0; r < n; ++r) {
    for (ColumnState& st : cols) {
      if (st.dropped) continue;
      const std::string_view cell = table.cell(r, st.col);
      double x;
      const NumberParse got = parse(cell, x);
      if (got == NumberParse::kBadGrouping) {
        throw InputError(table.locate_cell(
            r, st.col, "found '" + quote_token(cell) + "', " + grouping_expectation(format)));
      }
      if (got == NumberParse::kNumber) {
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
          table.locate_cell(r, st.col,
                            "found '" + quote_token(cell) + "', expected a number" +
                                (format.decimal == ',' ? " with the decimal mark ','" : "")));
    }
  }
}

// Keeps the value columns: without an explicit choice, text columns and a running row
// number are dropped. InputError when none is left.
void select_value_columns(const CsvTable& table, const CsvOptions& opt,
                          const std::vector<size_t>& time_cols, size_t id_col,
                          bool explicit_columns, std::vector<ColumnState>& cols) {
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
    for (size_t c : candidate_value_columns(table, opt, time_cols, id_col)) {
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

// The values a power transform cannot take (CsvOptions::domain), first in file order;
// checked before filling, whose values lie between observed ones.
void check_domain(const CsvTable& table, const CsvOptions& opt,
                  const std::vector<ColumnState>& cols) {
  if (!opt.domain.active()) return;
  const size_t n = std::min(opt.domain.channels, cols.size());
  for (size_t r = 0; r < table.num_rows(); ++r)
    for (size_t k = 0; k < n; ++k) {
      if (!cols[k].observed[r] || opt.domain.accepts(cols[k].values[r])) continue;
      throw InputError(table.locate_cell(
          r, cols[k].col,
          "found " + quote_token(std::string(table.cell(r, cols[k].col))) + ", expected a value " +
              opt.domain.domain() + " (" + opt.domain_setting + ")"));
    }
}

// Applies the missing-value policy (InputError under "error"); a panel's columns are put in
// series order first and filled series by series.
void handle_missing(const CsvTable& table, const CsvOptions& opt, const TimeSeries& s,
                    std::vector<ColumnState>& cols) {
  size_t total_missing = 0;
  for (const ColumnState& st : cols) {
    if (!st.seen_number) {
      throw InputError(locate(table.source(), 1, static_cast<long>(st.col + 1),
                              "column '" + quote_token(table.header()[st.col]) +
                                  "': found no values at all, expected numbers"));
    }
    total_missing += st.missing;
  }
  if (total_missing > 0 && opt.missing == MissingPolicy::kError) {
    throw_missing_error(table, cols, total_missing, opt.missing_setting);
  }
  if (!s.segments.empty()) {
    for (ColumnState& st : cols) {
      detail::panel_column(table, st.col, s, opt.missing, st.missing > 0, st.values, st.observed);
    }
  } else if (total_missing > 0) {
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

std::string series_id(const TimeSeries& s, size_t row) {
  return s.segments[s.segment_index(row)].id;
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
    s.frequency = s.segments.empty() ? infer_frequency(s.timestamps)
                                     : infer_frequency(s.timestamps, s.segments);
  }
  if (s.segments.empty()) {
    s.gaps = find_gaps(s.timestamps, s.frequency);
  } else {
    detail::panel_gaps(table, time_cols.back(), s);
  }
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
      first += std::string(i ? "; " : "") + "line " +
               std::to_string(table.line_of(s.table_row(g.row))) +
               (s.segments.empty() ? "" : " (series '" + quote_token(series_id(s, g.row)) + "')") +
               ": " + s.format_time(g.before) + " -> " + s.format_time(g.after) +
               (g.missing_periods < 0 ? " (off the grid)"
                                      : " (" + std::to_string(g.missing_periods) + " missing)");
    }
    throw InputError(table.locate_cell(
        s.table_row(s.gaps[0].row), time_cols.back(),
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
  // The id column by name, with the "no column named" error listing the header.
  const size_t id_col = opt.id_column.empty() ? kNoColumn : table.column_index(opt.id_column);
  const std::vector<size_t> time_cols = read_time_axis(table, opt, id_col, s);
  const bool explicit_columns = !opt.value_columns.empty();
  std::vector<ColumnState> cols;
  for (size_t c : candidate_value_columns(table, opt, time_cols, id_col)) {
    ColumnState st;
    st.col = c;
    st.values.resize(n);
    st.observed.resize(n);
    cols.push_back(std::move(st));
  }
  if (opt.number.is_default()) {
    parse_value_cells(
        table, explicit_columns, opt.number, cols, [](std::string_view cell, double& x) {
          return parse_number(cell, x) ? NumberParse::kNumber : NumberParse::kNotNumber;
        });
  } else {
    parse_value_cells(
        table, explicit_columns, opt.number, cols,
        [&](std::string_view cell, double& x) { return parse_number(cell, opt.number, x); });
  }
  select_value_columns(table, opt, time_cols, id_col, explicit_columns, cols);
  check_domain(table, opt, cols);
  handle_missing(table, opt, s, cols);
  assemble_values(table, cols, s);
  frequency_and_gaps(table, opt, time_cols, s);
  return s;
}

}  // namespace attnfc::data
