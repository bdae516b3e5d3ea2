// Times in other formats than ISO: a strftime-style data.date_format read with Howard
// Hinnant's date library, and a/b/yyyy or a.b.yyyy dates whose order (day first or
// month first) is told from the cells.
// GCC 12 at -O3 reports false positives inside <chrono> as inlined into date.h's parse and
// format (stringop-overflow, maybe-uninitialized); this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <date/date.h>

#include <algorithm>
#include <chrono>
#include <locale>
#include <sstream>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/time.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::kMaxTime;  // years 0000 .. 9999, as parse_timestamp (time.cpp)
using detail::kMinTime;

namespace {

std::optional<int64_t> parse_with(std::string_view s, const std::string& format) {
  std::istringstream in{std::string(s)};
  in.imbue(std::locale::classic());
  date::sys_seconds tp{};
  in >> date::parse(format, tp);
  if (in.fail() || in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  const int64_t t = tp.time_since_epoch().count();
  if (t < kMinTime || t > kMaxTime) return std::nullopt;
  return t;
}

}  // namespace

std::optional<int64_t> parse_timestamp_as(std::string_view cell, const std::string& format) {
  const std::string_view s = detail::trim_blanks(cell);
  if (s.empty()) return std::nullopt;
  if (std::optional<int64_t> t = parse_with(s, format)) return t;
  // date::parse's %z reads +0200; ISO 8601 writes +02:00, which its %Ez reads, and a
  // trailing Z for UTC, which neither reads.
  const size_t z = format.find("%z");
  if (z == std::string::npos) return std::nullopt;
  std::string iso = format;
  iso.replace(z, 2, "%Ez");
  if (std::optional<int64_t> t = parse_with(s, iso)) return t;
  if (s.back() != 'Z' && s.back() != 'z') return std::nullopt;
  return parse_with(std::string(s.substr(0, s.size() - 1)) + "+0000", format);
}

int64_t parse_timestamp_or_throw(std::string_view cell, const std::string& what,
                                 const std::string& date_format) {
  if (date_format.empty()) return parse_timestamp_or_throw(cell, what);
  if (std::optional<int64_t> t = parse_timestamp(cell)) return *t;
  if (std::optional<int64_t> t = parse_timestamp_as(cell, date_format)) return *t;
  throw InputError(what + ": found '" + detail::quote_token(cell) + "', expected a date in " +
                   "data.date_format '" + date_format + "' or ISO like 2016-07-01 13:00");
}

std::string format_timestamp_as(int64_t t, const std::string& format) {
  return date::format(std::locale::classic(), format, date::sys_seconds{std::chrono::seconds{t}});
}

namespace detail {

namespace {

// A cell shaped a/b/yyyy or a.b.yyyy (one or two digits each), maybe followed by a time.
struct NumericDate {
  unsigned first = 0, second = 0;
  char separator = 0;
  std::string_view rest;  // what follows the year: "", " 13:00", "T13:00:00", ...
};

bool read_field(std::string_view s, size_t& i, size_t min, size_t max, unsigned& v) {
  size_t k = 0;
  v = 0;
  for (; i < s.size() && k < max && static_cast<unsigned>(s[i] - '0') < 10; ++i, ++k) {
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return k >= min;
}

std::optional<NumericDate> numeric_date(std::string_view cell) {
  const std::string_view s = trim_blanks(cell);
  NumericDate d;
  size_t i = 0;
  unsigned year = 0;
  if (!read_field(s, i, 1, 2, d.first) || i >= s.size() || (s[i] != '/' && s[i] != '.')) {
    return std::nullopt;
  }
  d.separator = s[i++];
  if (!read_field(s, i, 1, 2, d.second) || i >= s.size() || s[i] != d.separator) {
    return std::nullopt;
  }
  ++i;
  if (!read_field(s, i, 4, 4, year)) return std::nullopt;
  if (i < s.size() && s[i] != ' ' && s[i] != 'T') return std::nullopt;
  d.rest = s.substr(i);
  return d;
}

// The time part's format from the first cell's text after the date.
std::string time_suffix(std::string_view rest) {
  if (rest.empty()) return "";
  const std::string sep(1, rest[0]);
  const size_t colons = static_cast<size_t>(std::count(rest.begin(), rest.end(), ':'));
  return sep + (colons >= 2 ? "%H:%M:%S" : "%H:%M");
}

}  // namespace

bool cell_is_time(std::string_view cell, const CsvOptions& opt, bool allow_unix) {
  if (!opt.date_format.empty()) return parse_timestamp_as(cell, opt.date_format).has_value();
  TimeStyle style;
  if (parse_timestamp(cell, &style)) return allow_unix || style.format != TimeFormat::kUnixSeconds;
  return numeric_date(cell).has_value();
}

std::string time_column_format(const CsvTable& table, size_t col, const CsvOptions& opt) {
  if (!opt.date_format.empty()) return opt.date_format;
  const std::optional<NumericDate> head = numeric_date(table.cell(0, col));
  if (!head) return "";
  const std::string sep(1, head->separator);
  const std::string day_first = "%d" + sep + "%m" + sep + "%Y" + time_suffix(head->rest);
  const std::string month_first = "%m" + sep + "%d" + sep + "%Y" + time_suffix(head->rest);
  // Dotted dates are day-first by convention (German, Russian, ...).
  if (head->separator == '.') return day_first;
  size_t day_row = table.num_rows(), month_row = table.num_rows();
  for (size_t r = 0; r < table.num_rows(); ++r) {
    const std::optional<NumericDate> d = numeric_date(table.cell(r, col));
    if (!d || d->separator != head->separator) continue;
    if (d->first > 12 && day_row == table.num_rows()) day_row = r;
    if (d->second > 12 && month_row == table.num_rows()) month_row = r;
  }
  const auto example = [&](size_t r) {
    return "'" + quote_token(table.cell(r, col)) + "' on line " + std::to_string(table.line_of(r));
  };
  if (day_row < table.num_rows() && month_row < table.num_rows()) {
    throw InputError(table.locate_cell(std::min(day_row, month_row), col,
                                       "found day-first dates (" + example(day_row) +
                                           ") and month-first dates (" + example(month_row) +
                                           "); expected one order throughout the column"));
  }
  if (day_row < table.num_rows()) return day_first;
  if (month_row < table.num_rows()) return month_first;
  throw InputError(table.locate_cell(
      0, col,
      "found dates like '" + quote_token(table.cell(0, col)) +
          "' whose first two fields are 12 or less on every line, so the day and the month "
          "cannot be told apart; expected " +
          opt.date_format_setting + " set to \"" + day_first + "\" (day first) or \"" +
          month_first + "\" (month first)"));
}

}  // namespace detail

}  // namespace attnfc::data
