// A user's holiday dates, read from a CSV by the same reader as the series.
#include <algorithm>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::kDay;
using detail::quote_token;

namespace {

int64_t day_of(int64_t t) {
  const int64_t q = t / kDay;
  return (t % kDay != 0 && t < 0) ? q - 1 : q;
}

}  // namespace

bool Holidays::contains(int64_t unix_seconds) const {
  return std::binary_search(days.begin(), days.end(), day_of(unix_seconds));
}

Holidays load_holidays(const std::string& path, const std::string& date_format) {
  // The reader refuses an empty file and a header without rows with its own messages.
  const CsvTable table = CsvTable::read_file(path);
  size_t col = 0;  // a file of dates alone may call its column anything
  for (size_t c = 0; c < table.num_columns(); ++c) {
    if (detail::lower(detail::trim_blanks(table.header()[c])) == "date") {
      col = c;
      break;
    }
  }
  Holidays h;
  h.source = path;
  h.days.reserve(table.num_rows());
  for (size_t r = 0; r < table.num_rows(); ++r) {
    const std::string_view cell = table.cell(r, col);
    std::optional<int64_t> t = parse_timestamp(cell);
    if (!t && !date_format.empty()) t = parse_timestamp_as(cell, date_format);
    // A holiday is a whole day: a time of day would mean the file is not a list of dates.
    if (!t || *t % kDay != 0) {
      const std::string expected =
          date_format.empty() ? "like 2024-12-25" : "in data.date_format '" + date_format + "'";
      throw InputError(table.locate_cell(r, col,
                                         "found '" + quote_token(cell) +
                                             "', expected a holiday date " + expected +
                                             " (a time part, if any, 00:00)"));
    }
    h.days.push_back(day_of(*t));
  }
  std::sort(h.days.begin(), h.days.end());
  h.days.erase(std::unique(h.days.begin(), h.days.end()), h.days.end());
  return h;
}

}  // namespace attnfc::data
