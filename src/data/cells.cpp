// Cell values: missing-value tokens, numbers (an exact fast path beside
// std::from_chars), and what kind of column a CSV column is.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "attnfc/data/csv.hpp"
#include "attnfc/data/time.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::quote_token;
using detail::trim_blanks;

bool is_missing_token(std::string_view cell) {
  cell = trim_blanks(cell);
  switch (cell.size()) {
    case 0:
      return true;
    case 1:
      return cell[0] == '?';
    case 2:
      return cell == "NA" || cell == "na";
    case 3:
      return cell == "NaN" || cell == "nan" || cell == "NAN" || cell == "N/A" || cell == "n/a";
    case 4:
      return cell == "null" || cell == "NULL" || cell == "Null";
    default:
      return false;
  }
}

namespace {

// Clinger's fast path: a decimal with at most 19 digits whose integer mantissa
// is below 2^53 and whose power of ten is within +-22 is a correctly rounded
// double after one multiplication or division (both operands are exact).
// Everything else (and anything unusual) is left to std::from_chars.
// SWAR digit parsing: eight ASCII digits loaded as one little-endian word.
inline bool all_eight_digits(uint64_t v) {
  return ((v & 0xF0F0F0F0F0F0F0F0ull) |
          (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) == 0x3333333333333333ull;
}
// Folds digit pairs, then quads, then the two halves; byte 0 is the first digit.
inline uint32_t eight_digits_value(uint64_t v) {
  v -= 0x3030303030303030ull;
  v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFull;
  v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFull;
  v = (v * 10000 + (v >> 32)) & 0xFFFFFFFFull;
  return static_cast<uint32_t>(v);
}

bool parse_simple_decimal(const char* p, const char* end, double& out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = *p == '-';
  p += negative;
  uint64_t mantissa = 0;
  int digits = 0, fraction_digits = 0;
  const char* start = p;
  while (p < end && static_cast<unsigned>(*p - '0') < 10) {
    mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    ++p;
  }
  digits = static_cast<int>(p - start);
  if (p < end && *p == '.') {
    const char* frac = ++p;
    // Eight fraction digits at a time while they last (and at most 19 digits in all).
    while (end - p >= 8 && digits + (p - frac) + 8 <= 19) {
      uint64_t eight;
      std::memcpy(&eight, p, 8);
      if (!all_eight_digits(eight)) break;
      mantissa = mantissa * 100000000 + eight_digits_value(eight);
      p += 8;
    }
    while (p < end && static_cast<unsigned>(*p - '0') < 10) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
      ++p;
    }
    fraction_digits = static_cast<int>(p - frac);
  }
  // Exponents, long mantissas and stray text go the slow, exact way.
  if (p != end || digits + fraction_digits == 0 || digits + fraction_digits > 19 ||
      mantissa > (uint64_t{1} << 53) || fraction_digits > 22) {
    return false;
  }
  double v = static_cast<double>(mantissa);
  if (fraction_digits) v /= kPow10[fraction_digits];
  out = negative ? -v : v;
  return true;
}

}  // namespace

bool parse_number(std::string_view cell, double& out) {
  const char* p = cell.data();
  const char* end = p + cell.size();
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) --end;
  if (p < end && *p == '+') ++p;
  if (p == end) return false;
  if (parse_simple_decimal(p, end, out)) return true;
  const auto r = std::from_chars(p, end, out);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(out);
}

std::vector<ColumnSummary> summarize_columns(const CsvTable& table, const NumberFormat& format,
                                             const std::string& date_format) {
  CsvOptions time_options;  // what makes a cell a time (detail::cell_is_time)
  time_options.date_format = date_format;
  std::vector<ColumnSummary> out(table.num_columns());
  for (size_t c = 0; c < table.num_columns(); ++c) {
    ColumnSummary& s = out[c];
    s.name = table.header()[c];
    bool all_times = true;
    size_t present = 0;
    for (size_t r = 0; r < table.num_rows(); ++r) {
      const std::string_view cell = table.cell(r, c);
      if (is_missing_token(cell)) {
        ++s.missing;
        continue;
      }
      ++present;
      double v;
      if (parse_number(cell, format, v) == NumberParse::kNumber) continue;
      if (s.non_numeric++ == 0) {
        s.first_text = quote_token(cell);
        s.first_text_row = r;
      }
      if (all_times && !detail::cell_is_time(cell, time_options, true)) all_times = false;
    }
    if (present == 0) {
      s.kind = ColumnKind::kEmpty;
    } else if (s.non_numeric == 0) {
      s.kind = ColumnKind::kNumeric;
    } else if (all_times && s.non_numeric == present) {
      s.kind = ColumnKind::kTime;
    } else {
      s.kind = ColumnKind::kText;
    }
  }
  return out;
}

}  // namespace attnfc::data
