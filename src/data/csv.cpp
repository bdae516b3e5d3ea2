// RFC 4180 tokenizer. One pass over the bytes: unquoted cells are recorded as
// (offset, size) into the kept buffer; quoted cells are unescaped in place
// (unescaping only shrinks a cell, so it never overwrites unread bytes).
#include "attnfc/data/csv.hpp"

#include <sys/stat.h>
#if defined(__AVX512BW__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "attnfc/base/error.hpp"
#include "attnfc/data/time.hpp"
#include "internal.hpp"

namespace attnfc::data {

using detail::quote_token;
using detail::trim_blanks;

namespace {

// First delimiter, '\n' or '\r' in [p, end), or end. Most cells are short, so
// one 64-byte (or 32-byte) compare usually finds it; the scalar loop handles the tail.
inline const char* find_field_end(const char* p, const char* end, char delim) {
#if defined(__AVX512BW__)
  const __m512i vd = _mm512_set1_epi8(delim), vn = _mm512_set1_epi8('\n'),
                vr = _mm512_set1_epi8('\r');
  while (end - p >= 64) {
    const __m512i x = _mm512_loadu_si512(p);
    const uint64_t m = _mm512_cmpeq_epi8_mask(x, vd) | _mm512_cmpeq_epi8_mask(x, vn) |
                       _mm512_cmpeq_epi8_mask(x, vr);
    if (m) return p + __builtin_ctzll(m);
    p += 64;
  }
#elif defined(__AVX2__)
  const __m256i vd = _mm256_set1_epi8(delim), vn = _mm256_set1_epi8('\n'),
                vr = _mm256_set1_epi8('\r');
  while (end - p >= 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hit =
        _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, vd), _mm256_cmpeq_epi8(x, vn)),
                        _mm256_cmpeq_epi8(x, vr));
    const uint32_t m = static_cast<uint32_t>(_mm256_movemask_epi8(hit));
    if (m) return p + __builtin_ctz(m);
    p += 32;
  }
#endif
  while (p < end && *p != delim && *p != '\n' && *p != '\r') ++p;
  return p;
}

class Tokenizer {
 public:
  Tokenizer(std::string& text, const std::string& source, char delim)
      : text_(text), source_(source), delim_(delim) {}

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
        const char* p = find_field_end(text_.data() + pos_, text_.data() + n, delim_);
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

CsvTable CsvTable::read_file(const std::string& path, char delimiter) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(locate(
        path, 0, 0,
        std::string("cannot open: ") + std::strerror(errno) + "; expected a readable CSV file"));
  }
  if (S_ISDIR(st.st_mode)) {
    throw InputError(locate(path, 0, 0, "is a directory; expected a CSV file"));
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw InputError(locate(
        path, 0, 0,
        std::string("cannot open: ") + std::strerror(errno) + "; expected a readable CSV file"));
  }
  std::string bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, got);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw InputError(locate(path, 0, 0, "read error; expected a readable CSV file"));
  return parse(std::move(bytes), path, delimiter);
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

const char* to_string(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kNumeric:
      return "numeric";
    case ColumnKind::kTime:
      return "time";
    case ColumnKind::kText:
      return "text";
    case ColumnKind::kEmpty:
      return "empty";
  }
  return "?";
}

std::vector<ColumnSummary> summarize_columns(const CsvTable& table) {
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
      if (parse_number(cell, v)) continue;
      if (s.non_numeric++ == 0) {
        s.first_text = quote_token(cell);
        s.first_text_row = r;
      }
      if (all_times && !parse_timestamp(cell)) all_times = false;
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
