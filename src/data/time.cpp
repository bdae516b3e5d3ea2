// Civil-calendar arithmetic on int64 seconds, timestamp parsing/printing, and
// frequencies (fixed seconds, calendar months, business days).
#include "attnfc/data/time.hpp"

#include <charconv>
#include <cstdio>

#include "attnfc/base/error.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::days_in_month;
using detail::floor_div;
using detail::kDay;
using detail::kMaxTime;
using detail::kMinTime;

namespace {

// Reads 1..max_digits decimal digits at s[i]; advances i.
bool read_uint(std::string_view s, size_t& i, size_t min_digits, size_t max_digits, unsigned& out) {
  size_t k = 0;
  unsigned v = 0;
  while (i + k < s.size() && k < max_digits && s[i + k] >= '0' && s[i + k] <= '9') {
    v = v * 10 + static_cast<unsigned>(s[i + k] - '0');
    ++k;
  }
  if (k < min_digits) return false;
  i += k;
  out = v;
  return true;
}

// "YYYY-MM[-DD[( |T)HH:MM[:SS[.000]]][Z|+HH:MM|-HH:MM|+HHMM]]" and the same with '/'.
std::optional<int64_t> parse_calendar(std::string_view s, TimeStyle& style) {
  size_t i = 0;
  unsigned year, month, day = 1, hour = 0, minute = 0, second = 0;
  if (!read_uint(s, i, 4, 4, year)) return std::nullopt;
  if (i >= s.size() || (s[i] != '-' && s[i] != '/')) return std::nullopt;
  const char dsep = s[i++];
  if (!read_uint(s, i, 1, 2, month) || month < 1 || month > 12) return std::nullopt;
  style.date_separator = dsep;
  if (i == s.size()) {
    style.format = TimeFormat::kYearMonth;
    return to_unix_seconds(year, month, 1);
  }
  if (s[i++] != dsep || !read_uint(s, i, 1, 2, day)) return std::nullopt;
  if (!is_valid_date(year, month, day)) return std::nullopt;
  if (i == s.size()) {
    style.format = TimeFormat::kDate;
    return to_unix_seconds(year, month, day);
  }
  if (s[i] != ' ' && s[i] != 'T') return std::nullopt;
  style.time_separator = s[i++];
  if (!read_uint(s, i, 1, 2, hour) || hour > 23) return std::nullopt;
  if (i >= s.size() || s[i++] != ':' || !read_uint(s, i, 2, 2, minute) || minute > 59) {
    return std::nullopt;
  }
  style.format = TimeFormat::kDateTimeMinutes;
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!read_uint(s, i, 2, 2, second) || second > 59) return std::nullopt;
    style.format = TimeFormat::kDateTimeSeconds;
    if (i < s.size() && s[i] == '.') {  // only whole seconds are representable
      ++i;
      const size_t digits_from = i;
      while (i < s.size() && s[i] == '0') ++i;
      if (i == digits_from || (i < s.size() && s[i] >= '1' && s[i] <= '9')) return std::nullopt;
    }
  }
  int64_t t = to_unix_seconds(year, month, day, hour, minute, second);
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i++] == '+' ? 1 : -1;
    unsigned oh, om = 0;
    if (!read_uint(s, i, 2, 2, oh) || oh > 23) return std::nullopt;
    if (i < s.size() && s[i] == ':') ++i;
    if (!read_uint(s, i, 2, 2, om) || om > 59) return std::nullopt;
    t -= sign * (static_cast<int64_t>(oh) * 3600 + om * 60);  // to UTC
  }
  if (i != s.size()) return std::nullopt;
  return t;
}

}  // namespace

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  // Shift the year to start in March so the leap day is the last day of a
  // "year"; then count 400-year eras of 146097 days.
  y -= m <= 2;
  const int64_t era = floor_div(y, 400);
  const int64_t yoe = y - era * 400;                                    // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = floor_div(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  y = yoe + era * 400 + (m <= 2);
}

int64_t to_unix_seconds(int64_t y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s) {
  return days_from_civil(y, mo, d) * kDay + h * 3600 + mi * 60 + s;
}

bool is_valid_date(int64_t y, unsigned m, unsigned d) {
  return m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m);
}

unsigned weekday(int64_t t) {
  // 1970-01-01 was a Thursday (3 with Monday = 0).
  const int64_t days = floor_div(t, kDay);
  return static_cast<unsigned>(((days + 3) % 7 + 7) % 7);
}

std::optional<int64_t> parse_timestamp(std::string_view cell, TimeStyle* style_out) {
  const std::string_view s = detail::trim_blanks(cell);
  if (s.empty()) return std::nullopt;
  TimeStyle style;
  std::optional<int64_t> t;
  const bool looks_integer =
      s.find_first_not_of("0123456789", s[0] == '-' ? 1 : 0) == std::string_view::npos &&
      s.size() > (s[0] == '-' ? 1u : 0u);
  if (looks_integer) {
    int64_t v;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    style.format = TimeFormat::kUnixSeconds;
    t = v;
  } else {
    t = parse_calendar(s, style);
  }
  if (!t || *t < kMinTime || *t > kMaxTime) return std::nullopt;
  if (style_out) *style_out = style;
  return t;
}

int64_t parse_timestamp_or_throw(std::string_view cell, const std::string& what) {
  if (auto t = parse_timestamp(cell)) return *t;
  throw InputError(what + ": found '" + detail::quote_token(cell) +
                   "', expected a date like 2016-07-01, 2016-07-01 13:00, 2016-07 or Unix seconds");
}

std::string format_timestamp(int64_t t, const TimeStyle& style) {
  if (!style.pattern.empty()) return format_timestamp_as(t, style.pattern);
  if (style.format == TimeFormat::kUnixSeconds) return std::to_string(t);
  const int64_t days = floor_div(t, kDay);
  const int64_t tod = t - days * kDay;
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  const char ds = style.date_separator;
  char buf[48];
  switch (style.format) {
    case TimeFormat::kYear:
      std::snprintf(buf, sizeof buf, "%04lld", static_cast<long long>(y));
      break;
    case TimeFormat::kYearMonth:
      std::snprintf(buf, sizeof buf, "%04lld%c%02u", static_cast<long long>(y), ds, m);
      break;
    case TimeFormat::kDate:
      std::snprintf(buf, sizeof buf, "%04lld%c%02u%c%02u", static_cast<long long>(y), ds, m, ds, d);
      break;
    case TimeFormat::kDateTimeMinutes:
    case TimeFormat::kDateTimeSeconds: {
      const unsigned hh = static_cast<unsigned>(tod / 3600),
                     mm = static_cast<unsigned>(tod / 60 % 60),
                     ss = static_cast<unsigned>(tod % 60);
      // Never silently drop seconds the input did not have a column for.
      if (style.format == TimeFormat::kDateTimeMinutes && ss == 0) {
        std::snprintf(buf, sizeof buf, "%04lld%c%02u%c%02u%c%02u:%02u", static_cast<long long>(y),
                      ds, m, ds, d, style.time_separator, hh, mm);
      } else {
        std::snprintf(buf, sizeof buf, "%04lld%c%02u%c%02u%c%02u:%02u:%02u",
                      static_cast<long long>(y), ds, m, ds, d, style.time_separator, hh, mm, ss);
      }
      break;
    }
    default:
      return std::to_string(t);
  }
  return buf;
}

}  // namespace attnfc::data
