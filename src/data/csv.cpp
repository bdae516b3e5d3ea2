// RFC 4180 tokenizer. One pass over the bytes: unquoted cells are recorded as
// (offset, size) into the kept buffer; quoted cells are unescaped in place
// (unescaping only shrinks a cell, so it never overwrites unread bytes).
#include "attnfc/data/csv.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/time.hpp"
#include "csv_scan.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::quote_token;
using detail::scan_function;
using detail::scan_path;
using detail::trim_blanks;

namespace {

// The scan path, chosen on first use (-1: not yet).
std::atomic<int> g_scan_path{-1};

class Tokenizer {
 public:
  Tokenizer(std::string& text, const std::string& source, char delim)
      : text_(text), source_(source), delim_(delim), find_field_end_(scan_function(scan_path())) {}

  // Reads one record starting at pos_. Appends (begin, size) per field and
  // returns false at end of input. Skips blank lines.
  bool next_record(std::vector<uint64_t>& begins, std::vector<uint32_t>& sizes, size_t& fields,
                   uint64_t& record_line) {
    const size_t n = text_.size();
    while (pos_ < n && (text_[pos_] == '\n' || text_[pos_] == '\r')) end_line();
    if (pos_ >= n) return false;
    record_line = line_;
    fields = 0;
    for (;;) {
      const size_t field_col = fields + 1;
      uint64_t begin;
      size_t size;
      if (text_[pos_] == '"') {
        read_quoted(begin, size, field_col);
      } else {
        begin = pos_;
        const char* p = find_field_end_(text_.data() + pos_, text_.data() + n, delim_);
        size = static_cast<size_t>(p - (text_.data() + pos_));
        pos_ += size;
      }
      if (size > std::numeric_limits<uint32_t>::max()) {
        throw InputError(locate(source_, record_line, static_cast<long>(field_col),
                                "field is larger than 4 GiB; expected a CSV cell"));
      }
      begins.push_back(begin);
      sizes.push_back(static_cast<uint32_t>(size));
      ++fields;
      if (pos_ >= n) return true;
      const char c = text_[pos_];
      if (c == delim_) {
        ++pos_;
        if (pos_ >= n || text_[pos_] == '\n' || text_[pos_] == '\r') {
          // A trailing delimiter ends with one more (empty) field.
          begins.push_back(pos_);
          sizes.push_back(0);
          ++fields;
          if (pos_ < n) end_line();
          return true;
        }
        continue;
      }
      end_line();  // '\n' or '\r'
      return true;
    }
  }

  uint64_t line() const { return line_; }

 private:
  void end_line() {
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
    ++line_;
  }

  void read_quoted(uint64_t& begin, size_t& size, size_t field_col) {
    const uint64_t open_line = line_;
    const size_t n = text_.size();
    size_t read = pos_ + 1;
    size_t write = read;
    begin = read;
    for (;;) {
      const void* q = std::memchr(text_.data() + read, '"', n - read);
      if (q == nullptr) {
        throw InputError(locate(source_, open_line, static_cast<long>(field_col),
                                "found a quoted field that never closes; expected a closing '\"'"));
      }
      const size_t qpos = static_cast<size_t>(static_cast<const char*>(q) - text_.data());
      line_ += static_cast<uint64_t>(std::count(text_.data() + read, text_.data() + qpos, '\n'));
      if (write != read) std::memmove(text_.data() + write, text_.data() + read, qpos - read);
      write += qpos - read;
      if (qpos + 1 < n && text_[qpos + 1] == '"') {  // "" is an escaped quote
        text_[write++] = '"';
        read = qpos + 2;
        continue;
      }
      pos_ = qpos + 1;
      break;
    }
    size = write - begin;
    if (pos_ < n && text_[pos_] != delim_ && text_[pos_] != '\n' && text_[pos_] != '\r') {
      std::string_view rest(text_.data() + pos_, std::min<size_t>(12, n - pos_));
      rest = rest.substr(0, rest.find_first_of("\r\n"));
      throw InputError(locate(source_, line_, static_cast<long>(field_col),
                              "found '" + quote_token(rest) +
                                  "' after a closing quote; expected a delimiter or end of line"));
    }
  }

  std::string& text_;
  const std::string& source_;
  char delim_;
  detail::FieldEndFn find_field_end_;  // first delimiter, '\n' or '\r' in [p, end), or end
  size_t pos_ = 0;
  uint64_t line_ = 1;

 public:
  void skip_bom() {
    if (text_.size() >= 3 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
  }
};

std::string delimiter_name(char d) {
  if (d == '\t') return "tab";
  if (d == ',') return "','";
  if (d == ';') return "';'";
  return std::string("'") + d + "'";
}

}  // namespace

namespace detail {

ScanPath scan_path() {
  int p = g_scan_path.load(std::memory_order_acquire);
  if (p < 0) {
    p = static_cast<int>(default_scan_path());
    g_scan_path.store(p, std::memory_order_release);
  }
  return static_cast<ScanPath>(p);
}

void set_scan_path(ScanPath path) {
  g_scan_path.store(static_cast<int>(path), std::memory_order_release);
}

}  // namespace detail

CsvTable CsvTable::parse(std::string bytes, std::string source, char delimiter) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r' || delimiter == '\0') {
    throw InputError(locate(source, 0, 0,
                            "delimiter " + quote_token(std::string_view(&delimiter, 1)) +
                                " is not allowed; expected a character such as ',' ';' or tab"));
  }
  CsvTable t;
  t.source_ = std::move(source);
  t.delimiter_ = delimiter;
  t.text_ = std::move(bytes);
  const std::string& text = t.text_;
  if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
    const size_t at = static_cast<size_t>(static_cast<const char*>(nul) - text.data());
    const long line = 1 + static_cast<long>(std::count(text.data(), text.data() + at, '\n'));
    const size_t bol = text.rfind('\n', at == 0 ? 0 : at - 1);
    const long col = static_cast<long>(bol == std::string::npos || at == 0 ? at + 1 : at - bol);
    throw InputError(
        locate(t.source_, line, col, "found a NUL byte (binary data); expected a text CSV file"));
  }
  Tokenizer tok(t.text_, t.source_, delimiter);
  tok.skip_bom();
  std::vector<uint64_t> hb;
  std::vector<uint32_t> hs;
  size_t fields = 0;
  uint64_t line = 0;
  if (!tok.next_record(hb, hs, fields, line)) {
    throw InputError(
        locate(t.source_, 0, 0, "file is empty; expected a header line and data rows"));
  }
  t.header_.reserve(fields);
  for (size_t i = 0; i < fields; ++i) t.header_.emplace_back(text.data() + hb[i], hs[i]);
  const size_t ncols = fields;

  // Reserve for the number of lines so the hot loop does not reallocate.
  // Every cell ends at a delimiter or a line end, which bounds the count even
  // for a wide header over short (ragged) lines.
  const size_t lines_hint = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const size_t cells_bound =
      static_cast<size_t>(std::count(text.begin(), text.end(), delimiter)) + lines_hint;
  t.cell_begin_.reserve(std::min(lines_hint * ncols, cells_bound));
  t.cell_size_.reserve(std::min(lines_hint * ncols, cells_bound));
  t.row_line_.reserve(lines_hint);
  while (tok.next_record(t.cell_begin_, t.cell_size_, fields, line)) {
    if (fields != ncols) {
      const std::string what =
          "found " + std::to_string(fields) + (fields == 1 ? " field" : " fields") + ", expected " +
          std::to_string(ncols) + " as in the header (delimiter " + delimiter_name(delimiter) + ")";
      throw InputError(locate(t.source_, static_cast<long>(line),
                              static_cast<long>(std::min(fields, ncols) + (fields > ncols ? 1 : 0)),
                              what));
    }
    t.row_line_.push_back(line);
  }
  if (t.row_line_.empty()) {
    throw InputError(
        locate(t.source_, 2, 0, "file has a header but no data rows; expected at least one row"));
  }
  return t;
}

namespace {

// Half of this machine's memory: the table keeps the bytes and an index beside them.
uint64_t max_csv_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{1} << 33;  // 8 GiB when unknown
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

}  // namespace

CsvTable CsvTable::read_file(const std::string& path, char delimiter) {
  struct stat st {};
  if (path != kStdinPath && ::stat(path.c_str(), &st) != 0) {
    throw InputError(locate(
        path, 0, 0,
        std::string("cannot open: ") + std::strerror(errno) + "; expected a readable CSV file"));
  }
  if (S_ISDIR(st.st_mode)) {
    throw InputError(locate(path, 0, 0, "is a directory; expected a CSV file"));
  }
  // Checked before a byte is read (a regular file by its size; a pipe while it streams,
  // with an idle timeout; devices refused): a CSV must fit in memory with room to parse,
  // decompressed when it is gzip. "-" is standard input, named <stdin>.
  std::string bytes = read_input_data(path, max_csv_bytes(), "CSV file");
  return parse(std::move(bytes), input_name(path), delimiter);
}

std::optional<size_t> CsvTable::find_column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

size_t CsvTable::column_index(std::string_view name) const {
  std::optional<size_t> found;
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] != name) continue;
    if (found) {
      throw InputError(locate(source_, 1, static_cast<long>(i + 1),
                              "column '" + quote_token(name) + "' appears twice (columns " +
                                  std::to_string(*found + 1) + " and " + std::to_string(i + 1) +
                                  "); expected unique column names"));
    }
    found = i;
  }
  if (!found) {
    std::string list;
    for (size_t i = 0; i < header_.size() && i < 30; ++i) {
      list += (i ? ", " : "") + quote_token(header_[i]);
    }
    if (header_.size() > 30) list += ", ...";
    throw InputError(locate(
        source_, 1, 0, "no column named '" + quote_token(name) + "'; expected one of: " + list));
  }
  return *found;
}

std::string CsvTable::locate_cell(size_t row, size_t column, const std::string& what) const {
  return locate(source_, static_cast<long>(line_of(row)), static_cast<long>(column + 1),
                "column '" + quote_token(header_[column]) + "': " + what);
}

CsvTable CsvTable::without_rows(const std::vector<uint8_t>& drop) const {
  if (drop.size() != num_rows())
    throw std::invalid_argument("CsvTable::without_rows: one flag per data row expected");
  CsvTable t;
  t.source_ = source_;
  t.delimiter_ = delimiter_;
  t.text_ = text_;  // cells point into the same bytes
  t.header_ = header_;
  const size_t nc = header_.size();
  for (size_t r = 0; r < num_rows(); ++r) {
    if (drop[r]) continue;
    t.cell_begin_.insert(t.cell_begin_.end(), cell_begin_.begin() + r * nc,
                         cell_begin_.begin() + (r + 1) * nc);
    t.cell_size_.insert(t.cell_size_.end(), cell_size_.begin() + r * nc,
                        cell_size_.begin() + (r + 1) * nc);
    t.row_line_.push_back(row_line_[r]);
  }
  return t;
}

std::string csv_cell(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace attnfc::data
