// Static columns of a long file: one value per series, repeated on each of its rows.
// Read from the table the panel came from, checked to be constant within each series.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::quote_token;
using detail::trim_blanks;

namespace {

// The column's index in the table, refused when it is absent or already read as the id,
// the time or a value: a static column describes the series, it is not one of its values.
size_t static_column_index(const CsvTable& table, const TimeSeries& s, const std::string& name) {
  const std::string what = "data.static: column '" + quote_token(name) + "' ";
  if (!table.find_column(name)) {
    throw InputError(
        locate(table.source(), 1, 0,
               what + "not found; expected one of the columns: " + detail::join(table.header())));
  }
  if (!s.id_column.empty() && name == s.id_column) {
    throw InputError(locate(table.source(), 1, 0,
                            what + "is the id column (data.id_column); expected a column other "
                                   "than the id, the time and the values"));
  }
  if (std::find(s.time_columns.begin(), s.time_columns.end(), name) != s.time_columns.end()) {
    throw InputError(locate(table.source(), 1, 0,
                            what + "is the time column; expected a column other than the id, "
                                   "the time and the values"));
  }
  if (std::find(s.channels.begin(), s.channels.end(), name) != s.channels.end()) {
    throw InputError(locate(table.source(), 1, 0,
                            what + "is also a value column; expected a column other than the "
                                   "id, the time and the values (name the value columns in "
                                   "data.columns or data.targets so it is not read as one)"));
  }
  return table.column_index(name);  // refuses a name the header holds twice
}

std::string series_label(const SeriesSegment& seg) {
  return seg.id.empty() ? std::string("the series") : "series '" + quote_token(seg.id) + "'";
}

// A cell as a number in the file's format; a number with a bad thousands grouping is an
// error naming the cell (it is no category: 1,23 would be a typo, not a label).
bool number_in(const CsvTable& table, size_t row, size_t col, const NumberFormat& number,
               double& v) {
  const std::string_view cell = table.cell(row, col);
  const NumberParse p = parse_number(cell, number, v);
  if (p == NumberParse::kBadGrouping)
    throw InputError(table.locate_cell(
        row, col,
        "found '" + quote_token(trim_blanks(cell)) + "', " + grouping_expectation(number)));
  return p == NumberParse::kNumber;
}

// Whether some cell is not a number; a missing cell is an error, named where it is.
bool is_categorical(const CsvTable& table, size_t col, const TimeSeries& s,
                    const std::vector<SeriesSegment>& segs, const NumberFormat& number) {
  bool categorical = false;
  for (const SeriesSegment& seg : segs) {
    for (size_t r = seg.begin; r < seg.end; ++r) {
      const std::string_view cell = table.cell(s.table_row(r), col);
      if (is_missing_token(cell)) {
        throw InputError(table.locate_cell(
            s.table_row(r), col,
            series_label(seg) + ": found a missing value '" + quote_token(trim_blanks(cell)) +
                "', expected the series' static value on every row"));
      }
      double v;
      if (!categorical && !number_in(table, s.table_row(r), col, number, v)) categorical = true;
    }
  }
  return categorical;
}

float to_float(const CsvTable& table, size_t row, size_t col, double v) {
  if (std::fabs(v) > std::numeric_limits<float>::max()) {
    throw InputError(
        table.locate_cell(row, col,
                          "found " + std::string(trim_blanks(table.cell(row, col))) +
                              ", expected a number within single-precision range (about 3.4e38)"));
  }
  return static_cast<float>(v);
}

// The series' value (its first row's cell), refusing a row that differs from it. Numbers
// are compared as numbers (1 and 1.0 agree), text as trimmed text.
void read_segment(const CsvTable& table, size_t col, const TimeSeries& s, const SeriesSegment& seg,
                  const NumberFormat& number, StaticColumn& out) {
  const size_t first = s.table_row(seg.begin);
  const std::string_view ref = trim_blanks(table.cell(first, col));
  double ref_v = 0;
  if (!out.categorical) number_in(table, first, col, number, ref_v);
  for (size_t r = seg.begin + 1; r < seg.end; ++r) {
    const std::string_view cell = trim_blanks(table.cell(s.table_row(r), col));
    double v = 0;
    if (out.categorical ? cell == ref
                        : number_in(table, s.table_row(r), col, number, v) && v == ref_v)
      continue;
    throw InputError(table.locate_cell(
        s.table_row(r), col,
        series_label(seg) + ": found '" + quote_token(cell) + "' but '" + quote_token(ref) +
            "' on line " + std::to_string(table.line_of(first)) +
            ", expected one value per series (a static column is constant within each series)"));
  }
  if (out.categorical) {
    out.text.emplace_back(ref);
  } else {
    out.numeric.push_back(to_float(table, first, col, ref_v));
  }
}

}  // namespace

// A column the model reads as numeric: its first cell that is not a number, refused.
void refuse_text(const CsvTable& table, size_t col, const TimeSeries& s,
                 const std::vector<SeriesSegment>& segs, const std::string& name,
                 const NumberFormat& number) {
  for (const SeriesSegment& seg : segs)
    for (size_t r = seg.begin; r < seg.end; ++r) {
      double v;
      const std::string_view cell = table.cell(s.table_row(r), col);
      if (number_in(table, s.table_row(r), col, number, v)) continue;
      throw InputError(table.locate_cell(s.table_row(r), col,
                                         series_label(seg) + ": found '" +
                                             quote_token(trim_blanks(cell)) +
                                             "', expected a number (the model was trained with '" +
                                             quote_token(name) + "' as a numeric static column)"));
    }
}

std::vector<StaticColumn> read_static(const CsvTable& table, const TimeSeries& series,
                                      const std::vector<std::string>& columns,
                                      const NumberFormat& number,
                                      const std::vector<bool>* categorical) {
  for (size_t i = 0; i < columns.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (columns[i] != columns[j]) continue;
      throw InputError("data.static: found column '" + quote_token(columns[i]) +
                       "' twice, expected each static column once");
    }
  }
  const std::vector<SeriesSegment> segs = series.series_segments();
  std::vector<StaticColumn> out;
  out.reserve(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& name = columns[i];
    const size_t col = static_column_index(table, series, name);
    StaticColumn c;
    c.name = name;
    c.categorical = is_categorical(table, col, series, segs, number);
    if (categorical && !(*categorical)[i] && c.categorical)
      refuse_text(table, col, series, segs, name, number);
    if (categorical) c.categorical = (*categorical)[i];
    if (c.categorical) {
      c.text.reserve(segs.size());
    } else {
      c.numeric.reserve(segs.size());
    }
    for (const SeriesSegment& seg : segs) read_segment(table, col, series, seg, number, c);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace attnfc::data
