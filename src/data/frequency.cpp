// Sampling frequencies: naming, parsing, stepping, inference from timestamps, gaps.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/time.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::floor_div;
using detail::kDay;

namespace {

constexpr int64_t kWeek = 7 * kDay;

// Months since year 0 and the rest of the timestamp (day of month, time of day).
struct MonthParts {
  int64_t month_index;
  unsigned day;
  int64_t time_of_day;
};
MonthParts month_parts(int64_t t) {
  const int64_t days = floor_div(t, kDay);
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  return {y * 12 + (m - 1), d, t - days * kDay};
}

// Business days are numbered 5 per week; weekdays map to themselves. A weekend
// day maps to the Friday before (rounding down) or the Monday after (rounding up).
int64_t business_index(int64_t day, bool round_up) {
  const int64_t m = day + 3;  // days since Monday 1969-12-29
  const int64_t week = floor_div(m, 7);
  const int64_t wd = m - week * 7;
  if (wd >= 5) return week * 5 + (round_up ? 5 : 4);
  return week * 5 + wd;
}
int64_t day_from_business_index(int64_t b) {
  const int64_t week = floor_div(b, 5);
  return week * 7 + (b - week * 5) - 3;
}

}  // namespace

std::string Frequency::name() const {
  if (!known()) return "unknown";
  const std::string n = std::to_string(step);
  switch (unit) {
    case Unit::kBusinessDays:
      return step == 1 ? "B" : n + "B";
    case Unit::kMonths:
      return (step % 12 == 0 ? std::to_string(step / 12) + "y" : n + "mo") +
             (month_end ? "-end" : "");
    case Unit::kSeconds:
      if (step % kWeek == 0) return std::to_string(step / kWeek) + "w";
      if (step % kDay == 0) return std::to_string(step / kDay) + "d";
      if (step % 3600 == 0) return std::to_string(step / 3600) + "h";
      if (step % 60 == 0) return std::to_string(step / 60) + "min";
      return n + "s";
  }
  return "unknown";
}

Frequency Frequency::parse(std::string_view text, std::string_view subject) {
  const std::string_view s = detail::trim_blanks(text);
  size_t i = 0;
  int64_t count = 1;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i > 0) {
    const auto r = std::from_chars(s.data(), s.data() + i, count);
    if (r.ec != std::errc() || count <= 0 || count > 1000000) count = -1;
  }
  std::string unit_text(s.substr(i));
  bool month_end = false;
  if (unit_text.size() > 4 && unit_text.compare(unit_text.size() - 4, 4, "-end") == 0) {
    unit_text.resize(unit_text.size() - 4);
    month_end = true;
  } else if (unit_text == "ME" || unit_text == "QE" || unit_text == "YE" || unit_text == "AE") {
    unit_text = unit_text[0] == 'M' ? "mo" : unit_text[0] == 'Q' ? "q" : "y";
    month_end = true;
  }
  std::string lower = unit_text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, Frequency> kUnits = {{"s", {Unit::kSeconds, 1}},
                                                          {"sec", {Unit::kSeconds, 1}},
                                                          {"min", {Unit::kSeconds, 60}},
                                                          {"t", {Unit::kSeconds, 60}},
                                                          {"h", {Unit::kSeconds, 3600}},
                                                          {"hourly", {Unit::kSeconds, 3600}},
                                                          {"d", {Unit::kSeconds, kDay}},
                                                          {"daily", {Unit::kSeconds, kDay}},
                                                          {"w", {Unit::kSeconds, kWeek}},
                                                          {"weekly", {Unit::kSeconds, kWeek}},
                                                          {"mo", {Unit::kMonths, 1}},
                                                          {"ms", {Unit::kMonths, 1}},
                                                          {"monthly", {Unit::kMonths, 1}},
                                                          {"q", {Unit::kMonths, 3}},
                                                          {"qs", {Unit::kMonths, 3}},
                                                          {"quarterly", {Unit::kMonths, 3}},
                                                          {"y", {Unit::kMonths, 12}},
                                                          {"a", {Unit::kMonths, 12}},
                                                          {"ys", {Unit::kMonths, 12}},
                                                          {"yearly", {Unit::kMonths, 12}},
                                                          {"b", {Unit::kBusinessDays, 1}},
                                                          {"bday", {Unit::kBusinessDays, 1}},
                                                          {"business", {Unit::kBusinessDays, 1}}};
  Frequency f;
  if (unit_text == "M") {
    f = {Unit::kMonths, 1};  // pandas-style "M" = month; "m" alone is ambiguous
  } else if (auto it = kUnits.find(lower); it != kUnits.end() && lower != "m") {
    f = it->second;
  } else {
    count = -1;
  }
  if (month_end && f.unit != Unit::kMonths) count = -1;
  if (count <= 0) {
    throw InputError(
        std::string(subject) + ": found '" + detail::quote_token(text) +
        "', expected a frequency such as 1h, 15min, 1d, B, 1w, 1mo, 3mo, 1y or 1mo-end");
  }
  f.step *= count;
  f.month_end = month_end;
  return f;
}

int64_t Frequency::advance(int64_t t, int64_t n) const {
  if (!known() || n == 0) return t;
  const int64_t k = n * step;
  switch (unit) {
    case Unit::kSeconds:
      return t + k;
    case Unit::kMonths: {
      const MonthParts p = month_parts(t);
      const int64_t mi = p.month_index + k;
      const int64_t y = floor_div(mi, 12);
      const unsigned m = static_cast<unsigned>(mi - y * 12 + 1);
      unsigned d = month_end ? 31 : p.day;
      while (!is_valid_date(y, m, d)) --d;  // Jan 31 + 1mo = Feb 28/29
      return days_from_civil(y, m, d) * kDay + p.time_of_day;
    }
    case Unit::kBusinessDays: {
      const int64_t day = floor_div(t, kDay);
      const int64_t tod = t - day * kDay;
      const int64_t b = business_index(day, k < 0) + k;
      return day_from_business_index(b) * kDay + tod;
    }
  }
  return t;
}

std::optional<int64_t> Frequency::periods_between(int64_t a, int64_t b) const {
  if (!known()) return std::nullopt;
  switch (unit) {
    case Unit::kSeconds:
      if ((b - a) % step != 0) return std::nullopt;
      return (b - a) / step;
    case Unit::kMonths: {
      const MonthParts pa = month_parts(a), pb = month_parts(b);
      const int64_t dm = pb.month_index - pa.month_index;
      if (dm % step != 0 || advance(a, dm / step) != b) return std::nullopt;
      return dm / step;
    }
    case Unit::kBusinessDays: {
      const int64_t da = floor_div(a, kDay), db = floor_div(b, kDay);
      if (weekday(a) >= 5 || weekday(b) >= 5 || a - da * kDay != b - db * kDay) {
        return std::nullopt;
      }
      const int64_t d = business_index(db, false) - business_index(da, false);
      if (d % step != 0) return std::nullopt;
      return d / step;
    }
  }
  return std::nullopt;
}

namespace {

// The most common difference; ties go to the smaller step. A strict majority is the mode
// whatever the rest holds: checking for one first skips the sort on regular series.
int64_t mode_of(std::vector<int64_t>& d) {
  const size_t first_count = static_cast<size_t>(std::count(d.begin(), d.end(), d[0]));
  if (2 * first_count > d.size()) return d[0];
  std::sort(d.begin(), d.end());
  int64_t best = d[0];
  size_t best_count = 0;
  for (size_t i = 0; i < d.size();) {
    size_t j = i;
    while (j < d.size() && d[j] == d[i]) ++j;
    if (j - i > best_count) best = d[i], best_count = j - i;
    i = j;
  }
  return best;
}

// Calendar months over the segments: every row on the same day of month and time of day
// as `first` (or, with month_end, on the last day of its month); the month steps of
// consecutive rows within a segment into `steps`. False if a row is off that pattern.
bool month_steps(const std::vector<int64_t>& ts, const std::vector<SeriesSegment>& segs,
                 const MonthParts& first, bool month_end, std::vector<int64_t>& steps) {
  steps.clear();
  for (const SeriesSegment& g : segs) {
    int64_t prev = 0;
    for (size_t i = g.begin; i < g.end; ++i) {
      const MonthParts p = month_parts(ts[i]);
      const bool on_day =
          month_end ? month_parts(ts[i] - p.time_of_day + kDay).day == 1 : p.day == first.day;
      if (!on_day || p.time_of_day != first.time_of_day) return false;
      if (i > g.begin) steps.push_back(p.month_index - prev);
      prev = p.month_index;
    }
  }
  return true;
}

}  // namespace

Frequency infer_frequency(const std::vector<int64_t>& ts) {
  return infer_frequency(ts, {SeriesSegment{"", 0, ts.size()}});
}

Frequency infer_frequency(const std::vector<int64_t>& ts, const std::vector<SeriesSegment>& segs) {
  Frequency f;
  bool all_midnight = true, weekdays_only = true, skips_weekend = false;
  std::vector<int64_t> diffs;  // steps within a segment: a boundary is not a step
  diffs.reserve(ts.size());
  for (const SeriesSegment& g : segs) {
    for (size_t i = g.begin; i < g.end; ++i) {
      const int64_t tod = ts[i] - floor_div(ts[i], kDay) * kDay;
      if (tod != 0) all_midnight = false;
      if (weekday(ts[i]) >= 5) weekdays_only = false;
      if (i == g.begin) continue;
      if (weekday(ts[i - 1]) == 4 && ts[i] - ts[i - 1] == 3 * kDay) skips_weekend = true;
      diffs.push_back(ts[i] - ts[i - 1]);
    }
  }
  if (diffs.empty()) return f;  // no series has two rows
  const auto first_row =
      std::find_if(segs.begin(), segs.end(), [](const SeriesSegment& g) { return g.rows() > 0; });
  const MonthParts first = month_parts(ts[first_row->begin]);
  std::vector<int64_t> month_diffs;
  month_diffs.reserve(diffs.size());
  // Calendar months: every row on the same day of month and time of day.
  if (first.day <= 28 && month_steps(ts, segs, first, false, month_diffs)) {
    const int64_t step = mode_of(month_diffs);
    if (step > 0) return {Frequency::Unit::kMonths, step};
  }
  // Month ends: every row on the last day of its month, at the same time of day.
  if (month_steps(ts, segs, first, true, month_diffs)) {
    const int64_t step = mode_of(month_diffs);
    if (step > 0) return {Frequency::Unit::kMonths, step, true};
  }
  const int64_t step = mode_of(diffs);
  if (all_midnight && weekdays_only && skips_weekend && step == kDay) {
    return {Frequency::Unit::kBusinessDays, 1};
  }
  return {Frequency::Unit::kSeconds, step};
}

void detail::append_gaps(const std::vector<int64_t>& ts, size_t begin, size_t end,
                         const Frequency& freq, std::vector<Gap>& gaps) {
  if (!freq.known()) return;
  for (size_t i = begin + 1; i < end; ++i) {
    const std::optional<int64_t> q = freq.periods_between(ts[i - 1], ts[i]);
    if (q && *q == 1) continue;
    Gap g;
    g.row = i;
    g.before = ts[i - 1];
    g.after = ts[i];
    g.missing_periods = (q && *q > 1) ? *q - 1 : -1;
    gaps.push_back(g);
  }
}

std::vector<Gap> find_gaps(const std::vector<int64_t>& ts, const Frequency& freq) {
  std::vector<Gap> gaps;
  detail::append_gaps(ts, 0, ts.size(), freq, gaps);
  return gaps;
}

}  // namespace attnfc::data
