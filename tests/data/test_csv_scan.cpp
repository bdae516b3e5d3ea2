// The CSV field scan on every path this CPU runs (scalar, AVX2, AVX-512BW) against the
// scalar path: the scan function itself from every start offset of awkward buffers,
// and whole CsvTable::parse results (cells, lines, errors) with the path forced.
#include <doctest/doctest.h>

#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "../../src/data/csv_scan.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"

using namespace attnfc::data;
using detail::ScanPath;

namespace {

const ScanPath kPaths[] = {ScanPath::Scalar, ScanPath::Avx2, ScanPath::Avx512};

const char* path_name(ScanPath p) {
  return p == ScanPath::Scalar ? "scalar" : p == ScanPath::Avx2 ? "avx2" : "avx512";
}

// Restores the path in use when the test began.
struct ScanPathGuard {
  ScanPath before = detail::scan_path();
  ~ScanPathGuard() { detail::set_scan_path(before); }
};

// Cells of length around the vector widths (1, 7, 31..33, 63..65, 127..129).
const int kLengths[] = {0, 1, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129};

std::string cell(int length, int seed) {
  std::string s;
  for (int i = 0; i < length; ++i) s += static_cast<char>('a' + (seed + i) % 26);
  return s;
}

// Every supported path gives the same dump: all cells with their record's line, or the
// error message.
std::string dump(const std::string& text, char delim) {
  try {
    const CsvTable t = CsvTable::parse(text, "in.csv", delim);
    std::string out;
    for (const std::string& h : t.header()) out += "[" + h + "]";
    for (size_t r = 0; r < t.num_rows(); ++r) {
      out += "\n" + std::to_string(t.line_of(r)) + ":";
      for (size_t c = 0; c < t.num_columns(); ++c) out += "[" + std::string(t.cell(r, c)) + "]";
    }
    return out;
  } catch (const attnfc::InputError& e) {
    return std::string("error: ") + e.what();
  }
}

// Returns the scalar path's dump.
std::string same_parse_on_every_path(const std::string& text, char delim = ',') {
  ScanPathGuard guard;
  detail::set_scan_path(ScanPath::Scalar);
  const std::string want = dump(text, delim);
  for (ScanPath p : kPaths) {
    if (!detail::scan_path_supported(p)) continue;
    detail::set_scan_path(p);
    INFO("path " << path_name(p) << ", input of " << text.size() << " bytes");
    CHECK(dump(text, delim) == want);
  }
  return want;
}

bool parsed(const std::string& dumped) {
  return dumped.rfind("error: ", 0) != 0;
}

}  // namespace

TEST_CASE("csv scan: every path finds the same field end from every offset") {
  const char fill[] = {'x', '"', ' ', '\t', ';'};
  for (int n : {1, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200}) {
    for (int hit = -1; hit < n; hit += (hit < 70 ? 1 : 13)) {
      for (char stop : {',', '\n', '\r'}) {
        std::string buf(static_cast<size_t>(n), fill[(n + hit) % 5]);
        if (hit >= 0) buf[static_cast<size_t>(hit)] = stop;
        if (n > 40) buf[40] = static_cast<char>(0xFF);  // high bytes are no match
        const char* b = buf.data();
        const char* e = b + buf.size();
        for (int start = 0; start <= n; start += (start < 70 ? 1 : 9)) {
          const char* want = detail::find_field_end_scalar(b + start, e, ',');
          for (ScanPath p : kPaths) {
            if (!detail::scan_path_supported(p)) continue;
            const char* got = detail::scan_function(p)(b + start, e, ',');
            INFO("path " << path_name(p) << " n " << n << " hit " << hit << " start " << start);
            CHECK(got - b == want - b);
          }
        }
      }
    }
  }
}

TEST_CASE("csv scan: parse gives the same table on every path, awkward inputs") {
  for (const char* eol : {"\n", "\r\n", "\r"}) {
    std::string text = "a,b,c";
    text += eol;
    int seed = 0;
    for (int len : kLengths) {
      // plain, quoted with an escaped quote and a line break inside, and plain again
      const std::string plain = cell(len, seed), half = cell(len / 2, seed + 1),
                        quoted = cell(len, seed + 2), last = cell(len + 1, seed + 3);
      text += plain + ",\"" + half + "\"\"x" + eol + quoted + "\"," + last + eol;
      seed += 4;
    }
    const std::string table = same_parse_on_every_path(text);
    CHECK(parsed(table));
    // Each quoted "" became one quote.
    CHECK(table.find("\"x") != std::string::npos);
    CHECK(table.find("\"\"x") == std::string::npos);
    CHECK(parsed(same_parse_on_every_path(text + "z,y,x")));  // no final line end
    CHECK(same_parse_on_every_path("\xEF\xBB\xBF" + text) == table);
  }
  // A trailing delimiter adds an empty cell; blank lines are skipped.
  for (int len : kLengths) {
    CHECK(parsed(same_parse_on_every_path(
        "a;b\r\n" + cell(len, len) + ";\r\n\r\n;" + cell(len, 3) + "\r\n", ';')));
  }
  // One long unquoted row, cells of every awkward length.
  std::string header, row;
  for (size_t i = 0; i < std::size(kLengths); ++i) {
    header += (i ? "\t" : "") + std::string("c") + std::to_string(i);
    row += (i ? "\t" : "") + cell(kLengths[i], static_cast<int>(i));
  }
  CHECK(parsed(same_parse_on_every_path(header + "\n" + row + "\n" + row, '\t')));
}

TEST_CASE("csv scan: errors are the same on every path") {
  // A ragged row, text after a closing quote, and an unclosed quote, past vector widths.
  const std::string long_cell = cell(70, 1);
  for (const std::string& bad : {"a,b\n" + long_cell + "," + long_cell + "\n" + long_cell + "\n",
                                 "a,b\n\"" + long_cell + "\"x," + long_cell + "\n",
                                 "a,b\n" + long_cell + ",\"" + long_cell + "\n"}) {
    CHECK(!parsed(same_parse_on_every_path(bad)));
  }
}

TEST_CASE("csv scan: ATTNFC_KERNELS=portable selects the scalar scan") {
  const char* env = std::getenv("ATTNFC_KERNELS");
  const ScanPath def = detail::default_scan_path();
  CHECK(detail::scan_path_supported(def));
  if (env != nullptr && std::string(env) == "portable") CHECK(def == ScanPath::Scalar);
  if (env != nullptr && std::string(env) == "avx2") CHECK(def != ScanPath::Avx512);
  if (env == nullptr || *env == '\0') {
    const bool any_vector = detail::scan_path_supported(ScanPath::Avx2) ||
                            detail::scan_path_supported(ScanPath::Avx512);
    CHECK((def != ScanPath::Scalar) == any_vector);
  }
}
