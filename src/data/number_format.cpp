// Numbers written with a decimal comma or a thousands separator (data.decimal,
// data.thousands). A separate path: the default format never comes here, so the CSV
// reader's fast number parse (cells.cpp) keeps its speed.
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "internal.hpp"

namespace attnfc::data {

namespace {

std::string shown(char c) {
  return c == ' ' ? "\" \" (a space)" : "\"" + std::string(1, c) + "\"";
}

bool is_digit(char c) {
  return static_cast<unsigned>(c - '0') < 10;
}

}  // namespace

NumberFormat parse_number_format(std::string_view decimal, std::string_view thousands,
                                 char delimiter, std::string_view decimal_key,
                                 std::string_view thousands_key) {
  NumberFormat f;
  if (decimal != "." && decimal != ",") {
    throw InputError(std::string(decimal_key) + ": found \"" + detail::quote_token(decimal) +
                     "\", expected \".\" or \",\"");
  }
  f.decimal = decimal[0];
  if (thousands.empty()) return f;
  if (thousands.size() != 1 || std::string_view(",. '").find(thousands[0]) == std::string::npos) {
    throw InputError(std::string(thousands_key) + ": found \"" + detail::quote_token(thousands) +
                     "\", expected \"\" (none), \",\", \".\", \" \" or \"'\"");
  }
  f.thousands = thousands[0];
  if (f.thousands == f.decimal) {
    throw InputError(std::string(thousands_key) + ": found " + shown(f.thousands) +
                     ", the decimal mark too (" + std::string(decimal_key) +
                     "); expected a separator other than the decimal mark");
  }
  if (f.thousands == delimiter) {
    throw InputError(std::string(thousands_key) + ": found " + shown(f.thousands) +
                     ", the field delimiter too; expected a separator other than the delimiter");
  }
  return f;
}

std::string grouping_expectation(const NumberFormat& f) {
  const std::string t(1, f.thousands);
  return "expected groups of 3 digits after each thousands separator " + shown(f.thousands) +
         " (like 1" + t + "234" + t + "567" + std::string(1, f.decimal) + "5)";
}

NumberParse parse_number(std::string_view cell, const NumberFormat& f, double& out) {
  if (f.is_default())
    return parse_number(cell, out) ? NumberParse::kNumber : NumberParse::kNotNumber;
  cell = detail::trim_blanks(cell);
  // The cell rewritten as parse_number reads it: separators dropped, the decimal mark '.'.
  char buf[96];
  if (cell.empty() || cell.size() >= sizeof buf) return NumberParse::kNotNumber;
  size_t n = 0, i = 0;
  if (cell[i] == '+' || cell[i] == '-') buf[n++] = cell[i++];
  // The integer part: digits in groups; `group` counts the digits since the last separator.
  size_t group = 0, separators = 0;
  bool bad_group = false;
  for (; i < cell.size(); ++i) {
    if (is_digit(cell[i])) {
      buf[n++] = cell[i];
      ++group;
    } else if (f.thousands != 0 && cell[i] == f.thousands) {
      if (group == 0 || (separators > 0 && group != 3) || group > 3) bad_group = true;
      group = 0;
      ++separators;
    } else {
      break;
    }
  }
  if (separators > 0 && group != 3) bad_group = true;
  if (i < cell.size() && cell[i] == f.decimal) {
    buf[n++] = '.';
    for (++i; i < cell.size() && is_digit(cell[i]); ++i) buf[n++] = cell[i];
  }
  if (i < cell.size() && (cell[i] == 'e' || cell[i] == 'E')) {
    buf[n++] = cell[i++];
    if (i < cell.size() && (cell[i] == '+' || cell[i] == '-')) buf[n++] = cell[i++];
    for (; i < cell.size() && is_digit(cell[i]); ++i) buf[n++] = cell[i];
  }
  if (i != cell.size()) return NumberParse::kNotNumber;
  if (bad_group) return NumberParse::kBadGrouping;
  return parse_number(std::string_view(buf, n), out) ? NumberParse::kNumber
                                                     : NumberParse::kNotNumber;
}

}  // namespace attnfc::data
