#pragma once
// Helpers shared by the data layer's .cpp files (not part of the public API).
#include <cctype>
#include <cstdint>
#include <cstdio>
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
std::vector<size_t> resolve_time_columns(const CsvTable& table, const CsvOptions& opt);
void read_single_time_column(const CsvTable& table, size_t col, TimeSeries& s);
void read_composite_time(const CsvTable& table, const std::vector<size_t>& cols, TimeSeries& s);
void check_increasing(const CsvTable& table, size_t time_col, const TimeSeries& s);

// Fills the unobserved entries of v (obs[i] == 0) in place: ffill, or linear
// interpolation between observed neighbours; leading gaps take the first observed
// value, trailing gaps the last. v must have at least one observed entry.
void fill_missing(std::vector<float>& v, const std::vector<uint8_t>& obs, MissingPolicy policy);

}  // namespace attnfc::data::detail
