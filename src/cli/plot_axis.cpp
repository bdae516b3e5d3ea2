// The axes of plot's charts (plot_axis.hpp).
#include "plot_axis.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "attnfc/data/time.hpp"

namespace attnfc::cli {

namespace {

constexpr int64_t kMinute = 60, kHour = 3600, kDay = 86400;
constexpr const char* kMonthNames[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// What a tick label names: the finest unit shown by a step.
enum class Level { kSecond, kMinute, kDay, kMonth, kYear };

// A tick step: `seconds` apart (offset from the Unix epoch, so weeks start on a Monday), or
// `months` apart counted from January of year 0.
struct Step {
  int64_t seconds = 0, months = 0, offset = 0;
  Level level = Level::kSecond;
};

std::vector<Step> candidate_steps() {
  std::vector<Step> out;
  for (int64_t s : {1, 5, 15, 30}) out.push_back({s, 0, 0, Level::kSecond});
  for (int64_t m : {1, 2, 5, 10, 15, 30}) out.push_back({m * kMinute, 0, 0, Level::kMinute});
  for (int64_t h : {1, 2, 3, 6, 12}) out.push_back({h * kHour, 0, 0, Level::kMinute});
  for (int64_t d : {1, 2}) out.push_back({d * kDay, 0, 0, Level::kDay});
  // 1970-01-05 was a Monday: weeks counted from there start on Mondays.
  for (int64_t w : {1, 2}) out.push_back({w * 7 * kDay, 0, 4 * kDay, Level::kDay});
  for (int64_t m : {1, 2, 3, 6}) out.push_back({0, m, 0, Level::kMonth});
  for (int64_t y = 1; y <= 100000; y *= 10)
    for (int64_t f : {1, 2, 5}) out.push_back({0, 12 * y * f, 0, Level::kYear});
  return out;
}

// Months since January of year 0 of a time, and the time at the start of such a month.
int64_t month_index(int64_t t) {
  int64_t y;
  unsigned m, d;
  data::civil_from_days(floor_div(t, kDay), y, m, d);
  return y * 12 + (m - 1);
}
int64_t month_start(int64_t index) {
  const int64_t y = floor_div(index, 12);
  return data::to_unix_seconds(y, static_cast<unsigned>(index - 12 * y + 1), 1);
}

// The step's ticks in [from, to], stopping once there are more than `limit`.
std::vector<int64_t> ticks_of(const Step& s, int64_t from, int64_t to, size_t limit) {
  std::vector<int64_t> out;
  if (s.seconds > 0) {
    int64_t t = s.offset + floor_div(from - s.offset, s.seconds) * s.seconds;
    if (t < from) t += s.seconds;
    for (; t <= to && out.size() <= limit; t += s.seconds) out.push_back(t);
    return out;
  }
  int64_t k = floor_div(month_index(from), s.months) * s.months;
  if (month_start(k) < from) k += s.months;
  for (; month_start(k) <= to && out.size() <= limit; k += s.months) out.push_back(month_start(k));
  return out;
}

struct Civil {
  int64_t year;
  unsigned month, day, hour, minute, second;
};
Civil civil(int64_t t) {
  Civil c{};
  data::civil_from_days(floor_div(t, kDay), c.year, c.month, c.day);
  const int64_t s = t - floor_div(t, kDay) * kDay;
  c.hour = static_cast<unsigned>(s / kHour);
  c.minute = static_cast<unsigned>(s % kHour / kMinute);
  c.second = static_cast<unsigned>(s % kMinute);
  return c;
}

// The label of a tick at `level`, and its second line when the coarser unit differs from
// the previous tick's (`prev`, null for the first tick).
TimeTick label_tick(int64_t t, Level level, const Civil* prev) {
  const Civil c = civil(t);
  char b[64];
  TimeTick tick{t, "", ""};
  const std::string year = std::to_string(c.year);
  const std::string day = std::string(kMonthNames[c.month - 1]) + " " + std::to_string(c.day);
  const bool new_year = !prev || prev->year != c.year;
  const bool new_day = new_year || prev->month != c.month || prev->day != c.day;
  switch (level) {
    case Level::kSecond:
    case Level::kMinute:
      if (level == Level::kSecond)
        std::snprintf(b, sizeof b, "%02u:%02u:%02u", c.hour, c.minute, c.second);
      else
        std::snprintf(b, sizeof b, "%02u:%02u", c.hour, c.minute);
      tick.label = b;
      if (new_day) tick.context = new_year ? day + " " + year : day;
      break;
    case Level::kDay:
      tick.label = day;
      if (new_year) tick.context = year;
      break;
    case Level::kMonth:
      tick.label = kMonthNames[c.month - 1];
      if (new_year) tick.context = year;
      break;
    case Level::kYear:
      tick.label = year;
      break;
  }
  return tick;
}

}  // namespace

std::vector<TimeTick> time_ticks(int64_t from, int64_t to, int max_ticks) {
  if (from > to) return {};
  const size_t limit = static_cast<size_t>(std::max(1, max_ticks));
  static const std::vector<Step> steps = candidate_steps();
  const auto labelled = [](const std::vector<int64_t>& at, Level level) {
    std::vector<TimeTick> out;
    for (size_t i = 0; i < at.size(); ++i) {
      const Civil prev = i > 0 ? civil(at[i - 1]) : Civil{};
      out.push_back(label_tick(at[i], level, i > 0 ? &prev : nullptr));
    }
    return out;
  };
  // The finest step with two to max_ticks ticks; an axis needs two to be read.
  const Step* too_fine = nullptr;  // the last step with too many
  for (const Step& s : steps) {
    const std::vector<int64_t> at = ticks_of(s, from, to, limit);
    if (at.size() > limit) too_fine = &s;
    if (at.size() >= 2 && at.size() <= limit) return labelled(at, s.level);
  }
  if (!too_fine) return labelled(ticks_of(steps.front(), from, to, limit), steps.front().level);
  // No step fits (a range between two calendar units, or max_ticks 1): every k-th tick of
  // the coarsest step that had too many (the next one had fewer than two, so at most
  // about five times too many).
  const std::vector<int64_t> all = ticks_of(*too_fine, from, to, 16 * limit);
  std::vector<int64_t> at;
  for (size_t i = 0; i < all.size(); i += (all.size() + limit - 1) / limit) at.push_back(all[i]);
  return labelled(at, too_fine->level);
}

std::vector<double> value_ticks(double lo, double hi, int max_ticks) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  max_ticks = std::max(2, max_ticks);
  for (int e = static_cast<int>(std::floor(std::log10((hi - lo) / max_ticks))) - 1;; ++e)
    for (const double f : {1.0, 2.0, 5.0}) {
      const double step = f * std::pow(10.0, e);
      const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
      if (last - first + 1 > max_ticks) continue;
      // k * f / 10^-e rather than k * step: 3 * 0.1 is not 0.3 in binary, 3 / 10 is.
      std::vector<double> out;
      for (double k = first; k <= last; ++k) {
        const double v = e < 0 ? k * f / std::pow(10.0, -e) : k * f * std::pow(10.0, e);
        out.push_back(v == 0 ? 0.0 : v);
      }
      return out;
    }
}

std::vector<double> log_ticks(double lo, double hi, int max_ticks) {
  if (!(lo > 0) || !(hi > lo)) return value_ticks(lo, hi, max_ticks);
  const int first = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
  const int last = static_cast<int>(std::floor(std::log10(hi) + 1e-9));
  const auto decade = [](int e) { return e < 0 ? 1 / std::pow(10.0, -e) : std::pow(10.0, e); };
  // 1, 2 and 5 of each decade when they fit: a range of one or two decades reads better.
  std::vector<double> out;
  for (int e = first - 1; e <= last; ++e)
    for (const double f : {1.0, 2.0, 5.0}) {
      const double v = e < 0 ? f / std::pow(10.0, -e) : f * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  if (out.size() >= 2 && out.size() <= static_cast<size_t>(max_ticks)) return out;
  if (last - first < 1) return value_ticks(lo, hi, max_ticks);
  out.clear();
  const int every = (last - first) / std::max(1, max_ticks) + 1;  // thin very long ranges
  for (int e = first; e <= last; e += every) out.push_back(decade(e));
  return out;
}

std::string format_number(double v) {
  if (v == 0) return "0";
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string viridis(double u) {
  static constexpr std::array<std::array<int, 3>, 11> kStops{{{68, 1, 84},
                                                              {72, 36, 117},
                                                              {65, 68, 135},
                                                              {53, 95, 141},
                                                              {42, 120, 142},
                                                              {33, 145, 140},
                                                              {34, 168, 132},
                                                              {68, 191, 112},
                                                              {122, 209, 81},
                                                              {189, 223, 38},
                                                              {253, 231, 37}}};
  const double x = std::clamp(std::isfinite(u) ? u : 0.0, 0.0, 1.0) * 10;
  const int i = std::min(9, static_cast<int>(x));
  const double f = x - i;
  char b[8];
  int rgb[3];
  for (int k = 0; k < 3; ++k)
    rgb[k] = static_cast<int>(std::lround(kStops[i][k] + f * (kStops[i + 1][k] - kStops[i][k])));
  std::snprintf(b, sizeof b, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return b;
}

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

}  // namespace attnfc::cli
