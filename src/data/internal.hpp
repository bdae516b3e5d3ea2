#pragma once
// Helpers shared by the data layer's .cpp files (not part of the public API).
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnfc/data/series.hpp"

namespace attnfc::data::detail {

// Shows a found token safely inside a one-line message: control bytes become
// \xNN (so a newline or escape sequence cannot break the line) and long tokens are cut.
inline std::string quote_token(std::string_view s, size_t limit = 40) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > limit) out += "...";
  return out;
}

inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// ASCII lower case (column names and option words).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Names for a message: "a, b, c" (cut after `limit` names).
inline std::string join(const std::vector<std::string>& names, size_t limit = 30) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) {
    out += (i ? ", " : "") + quote_token(names[i]);
  }
  if (names.size() > limit) out += ", ...";
  return out;
}

// The time column(s), found from the options or from the header.

// The time axis of load_series (series_time.cpp): which columns hold time, reading
// one timestamp column or composite year/month/day/hour columns into s, and the
// strictly-increasing check. Errors are InputErrors naming line and column.
// `id_col` (a panel's id column) is never taken for the time by the first-column rule.
std::vector<size_t> resolve_time_columns(const CsvTable& table, const CsvOptions& opt,
                                         size_t id_col = std::numeric_limits<size_t>::max());
void read_single_time_column(const CsvTable& table, size_t col, const CsvOptions& opt,
                             TimeSeries& s);
// The format the time column is read with (date_format.cpp): opt.date_format, else
// "%d/%m/%Y"-like for a/b/yyyy or a.b.yyyy cells (day or month first, from the cells;
// an InputError when both orders occur or the order cannot be told), else "" (ISO etc.).
std::string time_column_format(const CsvTable& table, size_t col, const CsvOptions& opt);
// Whether a cell reads as a time under opt (its date_format, else ISO or a/b/yyyy);
// Unix seconds count only with allow_unix.
bool cell_is_time(std::string_view cell, const CsvOptions& opt, bool allow_unix);
void read_composite_time(const CsvTable& table, const std::vector<size_t>& cols, TimeSeries& s);
void check_increasing(const CsvTable& table, size_t time_col, const TimeSeries& s);

// Fills the unobserved entries of v (obs[i] == 0) in place: ffill, or linear
// interpolation between observed neighbours; leading gaps take the first observed
// value, trailing gaps the last. v must have at least one observed entry.
void fill_missing(std::span<float> v, std::span<const uint8_t> obs, MissingPolicy policy);

// Gaps of ts[begin, end) relative to freq, appended to `gaps` (rows stay global).
void append_gaps(const std::vector<int64_t>& ts, size_t begin, size_t end, const Frequency& freq,
                 std::vector<Gap>& gaps);

// Long format (series_panel.cpp). s.timestamps holds one time per table row, in file order.
// Groups the rows by the id column (series in order of first appearance), sorts each
// series by time (stable) and sets s.segments, s.table_rows, s.id_column and s.timestamps
// in series order. An empty id or a time twice in one series is an InputError.
void group_series(const CsvTable& table, size_t id_col, size_t time_col, TimeSeries& s);
// One value column read in file order: reorders it into series order (s.table_rows) and,
// when some cells are missing, fills each series on its own (InputError for a series
// without any value in the column).
void panel_column(const CsvTable& table, size_t col, const TimeSeries& s, MissingPolicy policy,
                  bool has_missing, std::vector<float>& values, std::vector<uint8_t>& observed);
// The gaps of every series (rows global) into s.gaps; InputError for a series of 3 rows or
// more whose steps are mostly not one period of s.frequency.
void panel_gaps(const CsvTable& table, size_t time_col, TimeSeries& s);

// Seconds in a day, and integer division rounding toward -infinity (timestamps before 1970
// and week or month arithmetic on negative offsets must not round toward zero).
inline constexpr int64_t kDay = 86400;
inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Year 0000-01-01 .. 9999-12-31 23:59:59: keeps every sum and product of
// timestamps far from int64 overflow and printable as four-digit years.
inline constexpr int64_t kMinTime = -62167219200;
inline constexpr int64_t kMaxTime = 253402300799;

// Days in month m (1..12) of the proleptic Gregorian year y.
inline unsigned days_in_month(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace attnfc::data::detail
