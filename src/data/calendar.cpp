// Calendar features (cyclic sin/cos encodings of a timestamp's position in the day, week,
// month and year) and which of them a sampling frequency lets vary.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::days_in_month;
using detail::floor_div;
using detail::kDay;
using detail::quote_token;

namespace {

// The feature's period in calendar days, the longest step at which it still varies, and
// whether that step may equal the period (week_of_year at a weekly step still moves on).
struct Reach {
  double max_days;
  bool inclusive;
};
Reach reach(CalendarFeature f) {
  switch (f) {
    case CalendarFeature::kHourOfDay:
      return {1, false};
    case CalendarFeature::kDayOfWeek:
      return {7, false};
    case CalendarFeature::kDayOfMonth:
      return {28, false};
    case CalendarFeature::kMonth:
      return {365, false};
    case CalendarFeature::kWeekOfYear:
      return {7, true};
  }
  return {0, false};
}

bool allows(const Frequency& freq, CalendarFeature f) {
  if (!freq.known()) return false;
  const Reach r = reach(f);
  // Seconds and business days are compared as calendar days (a business step is 7/5 of a
  // day on average). Month steps only ever move the month: every other feature would be
  // the same on each row, or say nothing (the day of month of a month-end row).
  double days = 0;
  switch (freq.unit) {
    case Frequency::Unit::kSeconds:
      days = static_cast<double>(freq.step) / kDay;
      break;
    case Frequency::Unit::kBusinessDays:
      // Rows are always at midnight: the hour never varies.
      if (f == CalendarFeature::kHourOfDay) return false;
      days = static_cast<double>(freq.step) * 7 / 5;
      break;
    case Frequency::Unit::kMonths:
      return f == CalendarFeature::kMonth && freq.step < 12;
  }
  return r.inclusive ? days <= r.max_days : days < r.max_days;
}

std::string word_list(const std::vector<CalendarFeature>& features) {
  if (features.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < features.size(); ++i)
    out += (i ? ", " : "") + std::string(enum_name(features[i]));
  return out;
}

// 0 = Monday ... 6 = Sunday, of a day since 1970-01-01 (a Thursday).
int64_t weekday_of_day(int64_t day) {
  return day + 3 - floor_div(day + 3, 7) * 7;
}

// ISO 8601 week number (1..53) of a day since 1970-01-01: the week belongs to the year that
// holds its Thursday.
unsigned iso_week(int64_t day) {
  const int64_t thursday = day - weekday_of_day(day) + 3;
  int64_t y;
  unsigned m, d;
  civil_from_days(thursday, y, m, d);
  return static_cast<unsigned>((thursday - days_from_civil(y, 1, 1)) / 7 + 1);
}

double phase(CalendarFeature f, int64_t t) {
  const int64_t day = floor_div(t, kDay);
  int64_t y;
  unsigned m, d;
  switch (f) {
    case CalendarFeature::kHourOfDay:
      return static_cast<double>(t - day * kDay) / kDay;
    case CalendarFeature::kDayOfWeek:
      return static_cast<double>(weekday_of_day(day)) / 7;
    case CalendarFeature::kDayOfMonth:
      civil_from_days(day, y, m, d);
      return static_cast<double>(d - 1) / days_in_month(y, m);
    case CalendarFeature::kMonth:
      civil_from_days(day, y, m, d);
      return static_cast<double>(m - 1) / 12;
    case CalendarFeature::kWeekOfYear:
      return static_cast<double>(iso_week(day) - 1) / 53;
  }
  return 0;
}

}  // namespace

std::vector<CalendarFeature> calendar_allowed(const Frequency& freq) {
  std::vector<CalendarFeature> out;
  for (size_t i = 0; i < EnumNames<CalendarFeature>::words.size(); ++i) {
    const auto f = static_cast<CalendarFeature>(i);
    if (allows(freq, f)) out.push_back(f);
  }
  return out;
}

std::vector<CalendarFeature> parse_calendar(const std::vector<std::string>& words,
                                            const Frequency& freq, std::string_view key) {
  const std::string k(key);
  const std::vector<CalendarFeature> allowed = calendar_allowed(freq);
  if (words.size() == 1 && detail::lower(detail::trim_blanks(words[0])) == "auto") return allowed;
  std::vector<CalendarFeature> out;
  for (const std::string& raw : words) {
    const std::string w = detail::lower(detail::trim_blanks(raw));
    const auto f = enum_from_name<CalendarFeature>(w);
    if (!f) {
      throw InputError(k + ": found '" + quote_token(raw) + "', expected " +
                       (w == "auto" ? std::string("\"auto\" alone, not in a list of features")
                                    : enum_word_list<CalendarFeature>() + ", or [\"auto\"]"));
    }
    if (std::find(out.begin(), out.end(), *f) != out.end()) {
      throw InputError(k + ": found '" + w + "' twice, expected each calendar feature once");
    }
    if (!freq.known()) {
      throw InputError(k + ": found '" + w +
                       "' but the frequency is unknown (too few rows to infer it); expected a "
                       "known frequency (give data.frequency) or no calendar features");
    }
    if (!allows(freq, *f)) {
      throw InputError(k + ": found '" + w + "', which does not vary at frequency " + freq.name() +
                       " (every row would have the same value); expected what " + freq.name() +
                       " allows: " + word_list(allowed));
    }
    out.push_back(*f);
  }
  return out;
}

size_t calendar_width(const std::vector<CalendarFeature>& features) {
  return 2 * features.size();
}

void calendar_row(const std::vector<CalendarFeature>& features, int64_t t, float* out) {
  for (size_t i = 0; i < features.size(); ++i) {
    const double a = 2 * std::numbers::pi * phase(features[i], t);
    out[2 * i] = static_cast<float>(std::sin(a));
    out[2 * i + 1] = static_cast<float>(std::cos(a));
  }
}

std::vector<std::string> calendar_names(const std::vector<CalendarFeature>& features) {
  std::vector<std::string> out;
  out.reserve(2 * features.size());
  for (CalendarFeature f : features) {
    out.push_back(std::string(enum_name(f)) + ".sin");
    out.push_back(std::string(enum_name(f)) + ".cos");
  }
  return out;
}

}  // namespace attnfc::data
