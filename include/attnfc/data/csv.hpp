#pragma once
// RFC 4180 CSV tokenizer. It reads the whole file once, keeps the bytes, and
// records where every cell starts; nothing is converted until a caller asks.
//
// Accepted: a UTF-8 byte-order mark, LF or CRLF line ends (a lone CR too), an
// optional final newline, double-quoted fields with "" escapes and embedded
// delimiters or newlines, any single-byte delimiter. Blank lines are skipped.
// Rejected with an InputError naming file:line:column: an empty file, a file
// with a header but no data rows, ragged rows, an unterminated quote, text
// after a closing quote, and binary data (NUL bytes).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnfc/base/enum_names.hpp"

namespace attnfc::data {

class CsvTable {
 public:
  // Parses `bytes`; `source` names the file in error messages.
  static CsvTable parse(std::string bytes, std::string source, char delimiter = ',');
  // Reads and parses a file. A missing or unreadable file is an InputError.
  static CsvTable read_file(const std::string& path, char delimiter = ',');

  const std::string& source() const { return source_; }
  char delimiter() const { return delimiter_; }
  const std::vector<std::string>& header() const { return header_; }
  size_t num_rows() const { return row_line_.size(); }
  size_t num_columns() const { return header_.size(); }

  // Cell text with quotes removed and "" unescaped. row: 0-based data row.
  std::string_view cell(size_t row, size_t column) const {
    const size_t k = row * header_.size() + column;
    return std::string_view(text_.data() + cell_begin_[k], cell_size_[k]);
  }
  // 1-based physical line on which a data row starts (for error messages).
  uint64_t line_of(size_t row) const { return row_line_[row]; }

  // Exact, case-sensitive lookup; nullopt if absent.
  std::optional<size_t> find_column(std::string_view name) const;
  // As find_column, but an absent or duplicated name is an InputError that
  // lists the header's columns.
  size_t column_index(std::string_view name) const;

  // The same table without the data rows whose drop[row] is nonzero (drop has num_rows()
  // entries); kept rows keep their line numbers, so messages still name the file's lines.
  CsvTable without_rows(const std::vector<uint8_t>& drop) const;
  // Builds "<file>:<line>:<col>: column '<name>': <what>" for a data cell.
  std::string locate_cell(size_t row, size_t column, const std::string& what) const;

 private:
  std::string source_;
  char delimiter_ = ',';
  std::string text_;                  // file bytes, quoted cells unescaped in place
  std::vector<std::string> header_;   // unquoted column names
  std::vector<uint64_t> cell_begin_;  // row-major offsets into text_
  std::vector<uint32_t> cell_size_;
  std::vector<uint64_t> row_line_;
};

// True for the missing-value tokens: "" NA NaN null ? (and their
// upper/lower-case variants: na, nan, NAN, NULL, Null, N/A). Surrounding blanks are ignored.
bool is_missing_token(std::string_view cell);

// A text (a series id, a model name) as one comma-separated CSV cell, as RFC 4180 writes it:
// quoted, with "" for each quote, when it holds a comma, a quote or a line break.
std::string csv_cell(std::string_view text);

// Parses a decimal number with std::from_chars (leading '+' and surrounding
// blanks allowed). Returns false for anything else, including inf and nan.
bool parse_number(std::string_view cell, double& out);

// How a file writes its numbers when not as 1234.5 (data.decimal, data.thousands). The
// default takes the fast parse_number above; the others go through a separate path.
struct NumberFormat {
  char decimal = '.';  // '.' or ','
  char thousands = 0;  // 0 (none), ',', '.', ' ' or '\''
  bool is_default() const { return decimal == '.' && thousands == 0; }
};
// Reads the two settings' words ("." or ","; "" or one of , . space '), and checks the
// separator differs from the decimal mark and the delimiter. An InputError names the key
// (`decimal_key`, `thousands_key`: "data.decimal" in a config, "--decimal" for inspect).
NumberFormat parse_number_format(std::string_view decimal, std::string_view thousands,
                                 char delimiter, std::string_view decimal_key,
                                 std::string_view thousands_key);
enum class NumberParse { kNumber, kNotNumber, kBadGrouping };
// parse_number for a file written in `format`: "96,54" with decimal ',', "1,234.5" or
// "1.234,5" with a thousands separator, whose groups after the first must have exactly 3
// digits (else kBadGrouping: the caller names the cell). Default format: parse_number.
NumberParse parse_number(std::string_view cell, const NumberFormat& format, double& out);
// Why a kBadGrouping cell is wrong: "expected groups of 3 digits after each thousands
// separator ',' (like 1,234,567.5)".
std::string grouping_expectation(const NumberFormat& format);

enum class ColumnKind { kNumeric, kTime, kText, kEmpty };

// What a column holds, as `attnfc inspect` reports it.
struct ColumnSummary {
  std::string name;
  ColumnKind kind = ColumnKind::kEmpty;
  size_t missing = 0;         // missing-value tokens
  size_t non_numeric = 0;     // cells that are neither numbers nor missing
  std::string first_text;     // first non-numeric, non-missing cell (for messages)
  size_t first_text_row = 0;  // its 0-based data row
};
// A time column is one whose cells all read as times: ISO, a/b/yyyy or a.b.yyyy dates
// (either order), or `date_format` when given (data.date_format, inspect --date-format).
std::vector<ColumnSummary> summarize_columns(const CsvTable& table, const NumberFormat& format = {},
                                             const std::string& date_format = "");

}  // namespace attnfc::data

template <>
struct attnfc::EnumNames<attnfc::data::ColumnKind> {
  static constexpr std::array<const char*, 4> words{"numeric", "time", "text", "empty"};
};
