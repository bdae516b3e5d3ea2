// Series for the M4 evaluation: the competition's wide files and long-format CSVs, read
// with the same CSV tokenizer as everything else (data::CsvTable). The long reader groups
// rows by id on its own, so it does not wait for data::load_series to learn long format.
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/train/m4.hpp"

namespace attnfc::train::m4 {

namespace {

double number_at(const data::CsvTable& t, size_t row, size_t column, const std::string& id,
                 const data::NumberFormat& number = {}) {
  double v = 0;
  const std::string_view cell = t.cell(row, column);
  const data::NumberParse parsed = data::parse_number(cell, number, v);
  if (parsed == data::NumberParse::kNumber) return v;
  const std::string found = data::is_missing_token(cell)
                                ? "a missing value"
                                : "'" + printable_excerpt(std::string(cell), 40) + "'";
  const std::string expected = parsed == data::NumberParse::kBadGrouping
                                   ? data::grouping_expectation(number)
                                   : "expected a number";
  throw InputError(
      t.locate_cell(row, column, "series '" + id + "': found " + found + ", " + expected));
}

// The column holding values: the one named, or the first that is not id or time.
size_t value_column_of(const data::CsvTable& t, size_t id_col, const std::string& value_column,
                       const std::string& time_column) {
  if (!value_column.empty()) return t.column_index(value_column);
  std::optional<size_t> time_col;
  if (!time_column.empty()) {
    time_col = t.column_index(time_column);
  } else {
    for (const char* name : {"time", "date", "ds", "timestamp"}) {
      if ((time_col = t.find_column(name))) break;
    }
  }
  for (size_t c = 0; c < t.num_columns(); ++c) {
    if (c != id_col && c != time_col) return c;
  }
  throw InputError(
      locate(t.source(), 1, 0, "no value column: the header has only the id and time columns"));
}

}  // namespace

std::vector<Series> read_m4_wide(const std::string& path) {
  const data::CsvTable t = data::CsvTable::read_file(path);
  std::vector<Series> out;
  out.reserve(t.num_rows());
  for (size_t r = 0; r < t.num_rows(); ++r) {
    Series s;
    s.id = std::string(t.cell(r, 0));
    s.line = t.line_of(r);
    size_t end = t.num_columns();
    while (end > 1 && t.cell(r, end - 1).empty()) --end;  // the padding
    s.values.reserve(end - 1);
    for (size_t c = 1; c < end; ++c) s.values.push_back(number_at(t, r, c, s.id));
    if (s.values.empty()) {
      throw InputError(
          locate(path, static_cast<long>(s.line), 0, "series '" + s.id + "' has no values"));
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// The series of one value column of a long table: rows grouped by id, in file order.
std::vector<Series> series_of(const data::CsvTable& t, size_t id_col, size_t value_col,
                              const data::NumberFormat& number) {
  std::vector<Series> out;
  std::unordered_map<std::string, size_t> index;
  for (size_t r = 0; r < t.num_rows(); ++r) {
    const std::string id(t.cell(r, id_col));
    if (id.empty()) {
      throw InputError(t.locate_cell(r, id_col, "empty series id"));
    }
    auto [it, added] = index.try_emplace(id, out.size());
    if (added) out.push_back(Series{id, {}, t.line_of(r)});
    out[it->second].values.push_back(number_at(t, r, value_col, id, number));
  }
  return out;
}

}  // namespace

std::vector<Series> read_long(const std::string& path, const std::string& id_column,
                              const std::string& value_column, const std::string& time_column,
                              char delimiter, const data::NumberFormat& number) {
  const data::CsvTable t = data::CsvTable::read_file(path, delimiter);
  const size_t id_col = t.column_index(id_column);
  return series_of(t, id_col, value_column_of(t, id_col, value_column, time_column), number);
}

std::vector<std::vector<Series>> read_long_columns(const std::string& path,
                                                   const std::string& id_column,
                                                   const std::vector<std::string>& columns,
                                                   char delimiter,
                                                   const data::NumberFormat& number) {
  const data::CsvTable t = data::CsvTable::read_file(path, delimiter);
  const size_t id_col = t.column_index(id_column);
  std::vector<std::vector<Series>> out;
  for (const std::string& c : columns)
    out.push_back(series_of(t, id_col, t.column_index(c), number));
  return out;
}

LongHeader read_long_header(const std::string& path, const std::string& id_column,
                            const std::string& value_column, const std::string& time_column,
                            char delimiter) {
  const data::CsvTable t = data::CsvTable::read_file(path, delimiter);
  const size_t value_col = value_column_of(t, t.column_index(id_column), value_column, time_column);
  return {t.header()[value_col], t.header()};
}

}  // namespace attnfc::train::m4
