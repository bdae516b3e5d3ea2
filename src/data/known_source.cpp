// KnownSource: the decoder's per-step and per-series inputs (known_source.hpp).
#include "attnfc/data/known_source.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"

namespace attnfc::data {

size_t KnownSource::width() const {
  return future_channels + calendar_width(calendar) + (holidays.empty() ? 0 : 1);
}

void KnownSource::step(int64_t t, const float* future, float* out) const {
  std::copy_n(future, future_channels, out);
  out += future_channels;
  calendar_row(calendar, t, out);
  out += calendar_width(calendar);
  if (!holidays.empty()) *out = holidays.contains(t) ? 1.0f : 0.0f;
}

std::vector<std::string> KnownSource::names(const std::vector<std::string>& channels) const {
  std::vector<std::string> out(channels.end() - static_cast<ptrdiff_t>(future_channels),
                               channels.end());
  for (const std::string& n : calendar_names(calendar)) out.push_back(n);
  if (!holidays.empty()) out.push_back("holiday");
  return out;
}

nlohmann::json KnownSource::to_json() const {
  nlohmann::json words = nlohmann::json::array();
  for (CalendarFeature f : calendar) words.push_back(enum_name(f));
  return {{"future_channels", future_channels},
          {"calendar", words},
          {"holidays", holidays.days},
          {"holidays_source", holidays.source},
          {"static", statics.to_json()}};
}

KnownSource KnownSource::from_json(const nlohmann::json& j, const std::string& what) {
  const auto fail = [&](const std::string& key, const std::string& expected) {
    throw InputError(what + ": key '" + key + "': expected " + expected);
  };
  if (!j.is_object()) fail("", "an object");
  KnownSource k;
  if (!j.contains("future_channels") || !j["future_channels"].is_number_unsigned())
    fail("future_channels", "a whole number");
  k.future_channels = j["future_channels"].get<size_t>();
  if (!j.contains("calendar") || !j["calendar"].is_array()) fail("calendar", "an array of words");
  for (const auto& w : j["calendar"]) {
    const auto f =
        w.is_string() ? enum_from_name<CalendarFeature>(w.get<std::string>()) : std::nullopt;
    if (!f) fail("calendar", "calendar feature words (" + enum_word_list<CalendarFeature>() + ")");
    k.calendar.push_back(*f);
  }
  if (!j.contains("holidays") || !j["holidays"].is_array()) fail("holidays", "an array of days");
  for (const auto& d : j["holidays"]) {
    if (!d.is_number_integer()) fail("holidays", "whole days since 1970-01-01");
    k.holidays.days.push_back(d.get<int64_t>());
  }
  if (!std::is_sorted(k.holidays.days.begin(), k.holidays.days.end()))
    fail("holidays", "days in increasing order");
  k.holidays.source = j.value("holidays_source", std::string());
  if (!j.contains("static")) fail("static", "the static encoder");
  k.statics = StaticEncoder::from_json(j["static"], what + ": static");
  return k;
}

void reserve_known(const TimeSeries& series, SampleBuffers& out) {
  if (!series.known) return;
  out.reserve_known(static_cast<int64_t>(series.known->width()),
                    static_cast<int64_t>(series.known->numeric_width()),
                    static_cast<int64_t>(series.known->category_width()));
}

void fill_known(const TimeSeries& series, size_t target_row, size_t b, SampleBuffers& out) {
  const KnownSource* k = series.known.get();
  if (!k || (out.known_width == 0 && out.numeric_width == 0 && out.category_width == 0)) return;
  const size_t K = static_cast<size_t>(out.known_width), H = static_cast<size_t>(out.horizon);
  const size_t nc = series.num_channels(), F = k->future_channels;
  float* known = out.known.data() + b * H * K;
  for (size_t h = 0; h < H; ++h) {
    const size_t row = target_row + h;
    k->step(series.timestamps[row], series.values.data() + row * nc + (nc - F), known + h * K);
  }
  const size_t s = series.segment_index(target_row - 1);
  const auto S = static_cast<size_t>(out.numeric_width),
             G = static_cast<size_t>(out.category_width);
  std::copy_n(series.static_numeric.data() + s * S, S, out.static_numeric.data() + b * S);
  std::copy_n(series.static_codes.data() + s * G, G, out.static_codes.data() + b * G);
}

}  // namespace attnfc::data
