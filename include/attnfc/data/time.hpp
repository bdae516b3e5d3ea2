#pragma once
// The time axis: parsing and printing timestamps, and sampling frequencies.
// All times are naive civil times stored as int64 seconds since 1970-01-01
// 00:00:00 "UTC" (no time zones, no leap seconds), so arithmetic is exact.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnfc::data {

// How the input wrote its times; forecasts are printed the same way.
enum class TimeFormat {
  kUnixSeconds,      // 1467331200
  kYear,             // 2016             (composite year column only)
  kYearMonth,        // 2016-07
  kDate,             // 2016-07-01
  kDateTimeMinutes,  // 2016-07-01 00:00  or 2016-07-01T00:00
  kDateTimeSeconds,  // 2016-07-01 00:00:00 or 2016-07-01T00:00:00
};
struct TimeStyle {
  TimeFormat format = TimeFormat::kDateTimeSeconds;
  char date_separator = '-';  // '-' or '/'
  char time_separator = ' ';  // ' ' or 'T' between date and time
  // Set: times are printed with this strftime-style format (data.date_format, or the
  // day-first / month-first format found for a/b/yyyy dates) instead of the above.
  std::string pattern{};
};

// Parses one timestamp cell (surrounding blanks ignored): ISO date "YYYY-MM-DD",
// date-time "YYYY-MM-DD[ T]HH:MM[:SS]" with an optional trailing "Z",
// "YYYY-MM", "YYYY/MM/DD[ HH:MM[:SS]]", or integer Unix seconds. Calendar
// validity is checked (2017-02-29 fails). Returns nullopt if it is none of these;
// `style`, if given, receives the format that matched.
std::optional<int64_t> parse_timestamp(std::string_view cell, TimeStyle* style = nullptr);

// Same, but throws InputError "<what>: found '<cell>', expected a date like 2016-07-01 ...".
int64_t parse_timestamp_or_throw(std::string_view cell, const std::string& what);
// Dates a user writes in a config or a side file (split dates, holidays) for a data file
// read with data.date_format: ISO (as above) or that format (none: as above).
int64_t parse_timestamp_or_throw(std::string_view cell, const std::string& what,
                                 const std::string& date_format);

// Parses one cell (surrounding blanks ignored) with a strftime-style format read by
// Howard Hinnant's date::parse (%d %m %Y %y %H %M %S %b %z ...). The whole cell must
// match and give a valid date; a %z offset (+0200, +02:00 or Z) converts the time to UTC.
// nullopt otherwise.
std::optional<int64_t> parse_timestamp_as(std::string_view cell, const std::string& format);
// Prints `t` (UTC) with a strftime-style format (date::format).
std::string format_timestamp_as(int64_t t, const std::string& format);

// Prints `t` in the given style (the inverse of parse_timestamp for that style).
std::string format_timestamp(int64_t t, const TimeStyle& style);

// Calendar helpers (proleptic Gregorian).
int64_t days_from_civil(int64_t year, unsigned month, unsigned day);
void civil_from_days(int64_t days, int64_t& year, unsigned& month, unsigned& day);
int64_t to_unix_seconds(int64_t year, unsigned month, unsigned day, unsigned hour = 0,
                        unsigned minute = 0, unsigned second = 0);
bool is_valid_date(int64_t year, unsigned month, unsigned day);
unsigned weekday(int64_t unix_seconds);  // 0 = Monday ... 6 = Sunday

// A sampling frequency: a fixed number of seconds, calendar months (whose
// length varies), or business days (Monday to Friday).
struct Frequency {
  enum class Unit { kSeconds, kMonths, kBusinessDays };
  Unit unit = Unit::kSeconds;
  int64_t step = 0;  // seconds, months or business days per period; 0 = unknown
  // kMonths only: rows fall on the last day of their month (Jan 31, Feb 28/29, ...).
  bool month_end = false;

  bool known() const { return step > 0; }
  // "1h", "15min", "30s", "1d", "1w", "1mo", "3mo", "1y", "1mo-end", "B", "2B"
  // ("unknown" if not known()).
  std::string name() const;
  // Accepts the names above and also "h", "d", "w", "mo", "min", "s", "y",
  // "H", "D", "W", "M" (month), "MS", "Q", "A", "T" (minute), "hourly", "daily", "weekly",
  // "monthly", "quarterly", "yearly", "business", "bday", and month ends: "ME", "QE", "YE",
  // "<n>mo-end", "<n>y-end". Unknown text is an InputError that starts with `subject`
  // (e.g. "config key 'data.frequency'").
  static Frequency parse(std::string_view text, std::string_view subject = "frequency");

  // t stepped forward by n periods (n may be negative). Months keep the day
  // of month, clamped to the month's length (or the last day with month_end);
  // business days skip weekends.
  int64_t advance(int64_t t, int64_t n) const;
  // Whole periods from a to b if b lies on a's grid, else nullopt.
  std::optional<int64_t> periods_between(int64_t a, int64_t b) const;
};

}  // namespace attnfc::data
