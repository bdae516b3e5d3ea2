// The time axis of a series: finding the time column(s), parsing them, and
// requiring strictly increasing timestamps.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "internal.hpp"

namespace attnfc::data::detail {

namespace {
int precision_rank(TimeFormat f) {
  switch (f) {
    case TimeFormat::kYear:
      return 0;
    case TimeFormat::kYearMonth:
      return 1;
    case TimeFormat::kDate:
      return 2;
    case TimeFormat::kDateTimeMinutes:
      return 3;
    case TimeFormat::kDateTimeSeconds:
      return 4;
    case TimeFormat::kUnixSeconds:
      return 5;
  }
  return 0;
}
// A header names a time column `want` (ASCII any case; the Cyrillic "дата" also as
// "Дата" and "ДАТА").
bool time_name_is(std::string_view header, std::string_view want) {
  const std::string name = lower(detail::trim_blanks(header));
  if (name == want) return true;
  return want == "дата" && (name == "Дата" || name == "ДАТА");
}

// Reads the time column with a strftime-style format (given, or found for a/b/yyyy dates).
void read_formatted_time(const CsvTable& table, size_t col, const std::string& format,
                         const CsvOptions& opt, TimeSeries& s) {
  for (size_t r = 0; r < table.num_rows(); ++r) {
    const std::optional<int64_t> t = parse_timestamp_as(table.cell(r, col), format);
    if (!t) {
      throw InputError(table.locate_cell(
          r, col,
          "found '" + quote_token(table.cell(r, col)) + "', expected a time in the format \"" +
              format + "\" (" +
              (opt.date_format.empty() ? "read from the column's dates; set " : "") +
              opt.date_format_setting + ")"));
    }
    s.timestamps[r] = *t;
  }
  s.time_style.format = TimeFormat::kDateTimeSeconds;
  s.time_style.pattern = format;
}

}  // namespace

std::vector<size_t> resolve_time_columns(const CsvTable& table, const CsvOptions& opt,
                                         size_t id_col) {
  if (!opt.time_column.empty() && !opt.time_columns.empty()) {
    throw InputError(locate(table.source(), 0, 0,
                            "both a time column and composite time columns were given; "
                            "expected one or the other"));
  }
  if (!opt.time_column.empty()) return {table.column_index(opt.time_column)};
  if (!opt.time_columns.empty()) {
    if (opt.time_columns.size() > 5) {
      throw InputError(locate(table.source(), 0, 0,
                              "found " + std::to_string(opt.time_columns.size()) +
                                  " composite time columns; expected at most 5 "
                                  "(year, month, day, hour, minute)"));
    }
    std::vector<size_t> cols;
    for (const std::string& name : opt.time_columns) cols.push_back(table.column_index(name));
    return cols;
  }
  const auto& header = table.header();
  // Composite columns first: a "month" column next to "year" is a part, not a date.
  static const char* kParts[] = {"year", "month", "day", "hour", "minute"};
  std::vector<size_t> parts;
  for (const char* want : kParts) {
    size_t found = header.size();
    for (size_t c = 0; c < header.size(); ++c) {
      if (lower(detail::trim_blanks(header[c])) == want) found = c;
    }
    if (found == header.size()) break;
    parts.push_back(found);
  }
  if (parts.size() >= 2) return parts;
  // Common names in several languages, in this order; "data" (Portuguese, Italian) also
  // means data, so it counts only when its first cell reads as a time.
  static const char* kNames[] = {
      "date",        "datetime", "time", "timestamp",  "month", "ds",   "datum", "zeit",
      "zeitstempel", "fecha",    "hora", "date_heure", "tijd",  "czas", "дата",  "data"};
  for (const char* want : kNames) {
    for (size_t c = 0; c < header.size(); ++c) {
      if (!time_name_is(header[c], want)) continue;
      if (std::string_view(want) != "data" || cell_is_time(table.cell(0, c), opt, false))
        return {c};
    }
  }
  // Else the first column whose first cells read as dates, else the first column if its
  // first cell is Unix seconds (a panel's integer ids in the first column would read as
  // Unix seconds: then the next one).
  for (size_t c = 0; c < header.size(); ++c) {
    bool all = c != id_col;
    for (size_t r = 0; r < table.num_rows() && r < 3 && all; ++r) {
      all = cell_is_time(table.cell(r, c), opt, false);
    }
    if (all) return {c};
  }
  const size_t first = id_col == 0 && header.size() > 1 ? 1 : 0;
  if (first != id_col && parse_timestamp(table.cell(0, first))) return {first};
  throw InputError(locate(table.source(), 1, 0,
                          "found no time column among: " + join(header) +
                              "; expected a column named date/time/timestamp/month, "
                              "year,month,day[,hour] columns, or --time-column NAME"));
}

// Ranks calendar formats so a column mixing "2016-07-01" and
// "2016-07-01 13:00" is printed with the finer one.
void read_single_time_column(const CsvTable& table, size_t col, const CsvOptions& opt,
                             TimeSeries& s) {
  const size_t n = table.num_rows();
  s.timestamps.resize(n);
  const std::string format = time_column_format(table, col, opt);
  if (!format.empty()) return read_formatted_time(table, col, format, opt, s);
  TimeStyle style;
  bool have_style = false;
  for (size_t r = 0; r < n; ++r) {
    const std::string_view cell = table.cell(r, col);
    TimeStyle st;
    const std::optional<int64_t> t = parse_timestamp(cell, &st);
    if (!t) {
      const std::string found = is_missing_token(cell)
                                    ? "a missing time '" + quote_token(cell) + "'"
                                    : "'" + quote_token(cell) + "'";
      throw InputError(table.locate_cell(
          r, col,
          "found " + found +
              ", expected a timestamp like 2016-07-01, 2016-07-01 13:00:00, 2016-07 or Unix "
              "seconds"));
    }
    const bool unix_now = st.format == TimeFormat::kUnixSeconds;
    if (have_style && unix_now != (style.format == TimeFormat::kUnixSeconds)) {
      throw InputError(table.locate_cell(
          r, col,
          "found '" + quote_token(cell) + "', expected the same kind of timestamp as line " +
              std::to_string(table.line_of(0)) + " ('" + quote_token(table.cell(0, col)) + "')"));
    }
    if (!have_style || precision_rank(st.format) > precision_rank(style.format)) style = st;
    have_style = true;
    s.timestamps[r] = *t;
  }
  s.time_style = style;
}

void read_composite_time(const CsvTable& table, const std::vector<size_t>& cols, TimeSeries& s) {
  static const char* kPart[] = {"year", "month", "day", "hour", "minute"};
  static const unsigned kMin[] = {0, 1, 1, 0, 0};
  static const unsigned kMax[] = {9999, 12, 31, 23, 59};
  const size_t n = table.num_rows();
  s.timestamps.resize(n);
  for (size_t r = 0; r < n; ++r) {
    unsigned v[5] = {1970, 1, 1, 0, 0};
    for (size_t k = 0; k < cols.size(); ++k) {
      const std::string_view cell = detail::trim_blanks(table.cell(r, cols[k]));
      double x;
      if (!parse_number(cell, x) || x != std::floor(x) || x < kMin[k] || x > kMax[k]) {
        throw InputError(table.locate_cell(
            r, cols[k],
            "found '" + quote_token(cell) + "', expected the " + kPart[k] + " as an integer in [" +
                std::to_string(kMin[k]) + ", " + std::to_string(kMax[k]) + "]"));
      }
      v[k] = static_cast<unsigned>(x);
    }
    if (!is_valid_date(v[0], v[1], v[2])) {
      throw InputError(table.locate_cell(r, cols[2],
                                         "found day " + std::to_string(v[2]) + " of " +
                                             std::to_string(v[0]) + "-" + std::to_string(v[1]) +
                                             ", expected a valid calendar date"));
    }
    s.timestamps[r] = to_unix_seconds(v[0], v[1], v[2], v[3], v[4]);
  }
  static const TimeFormat kStyles[] = {TimeFormat::kYear, TimeFormat::kYearMonth, TimeFormat::kDate,
                                       TimeFormat::kDateTimeMinutes, TimeFormat::kDateTimeMinutes};
  s.time_style.format = kStyles[cols.size() - 1];
}

void check_increasing(const CsvTable& table, size_t time_col, const TimeSeries& s) {
  for (size_t r = 1; r < s.timestamps.size(); ++r) {
    const int64_t prev = s.timestamps[r - 1], cur = s.timestamps[r];
    if (cur > prev) continue;
    const std::string shown = format_timestamp(cur, s.time_style);
    const std::string prev_line = std::to_string(table.line_of(r - 1));
    if (cur == prev) {
      throw InputError(table.locate_cell(r, time_col,
                                         "found duplicate time " + shown + " (also on line " +
                                             prev_line + "), expected strictly increasing times"));
    }
    throw InputError(
        table.locate_cell(r, time_col,
                          "found time " + shown + " earlier than " +
                              format_timestamp(prev, s.time_style) + " on line " + prev_line +
                              ", expected strictly increasing times (sort the file by time)"));
  }
}

// Value columns in output order; `explicit_names` says whether the user chose them.

}  // namespace attnfc::data::detail
