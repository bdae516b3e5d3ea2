// CSV tokenizer: RFC 4180 features, and one test per class of bad input that
// checks the message names file, line, column, what was found and what was expected.
#include <doctest/doctest.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc::data;

namespace {
// Loads CSV text as a series and returns the InputError message ("" if it loaded).
std::string load_error(const std::string& text, CsvOptions opt = {}) {
  try {
    load_series(CsvTable::parse(text, "in.csv", opt.delimiter), opt);
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("quoted fields, escaped quotes, embedded delimiters and newlines") {
  const CsvTable t =
      CsvTable::parse("\"a\",\"b,c\",d\n\"x\"\"y\",\"line1\nline2\",3\n4,,\"\"\n", "q.csv");
  REQUIRE(t.num_columns() == 3);
  CHECK(t.header()[1] == "b,c");
  REQUIRE(t.num_rows() == 2);
  CHECK(t.cell(0, 0) == "x\"y");
  CHECK(t.cell(0, 1) == "line1\nline2");
  CHECK(t.cell(0, 2) == "3");
  CHECK(t.cell(1, 1) == "");
  CHECK(t.cell(1, 2) == "");
  CHECK(t.line_of(0) == 2);
  CHECK(t.line_of(1) == 4);  // the quoted newline moved the physical line on
}

TEST_CASE("CRLF, a UTF-8 BOM, no final newline, blank lines and other delimiters") {
  const CsvTable crlf = CsvTable::parse(
      "\xEF\xBB\xBF"
      "date,v\r\n2020-01-01,1\r\n\r\n2020-01-02,2",
      "c.csv");
  CHECK(crlf.header()[0] == "date");
  REQUIRE(crlf.num_rows() == 2);
  CHECK(crlf.cell(1, 1) == "2");
  CHECK(crlf.line_of(1) == 4);
  const CsvTable semi = CsvTable::parse("date;v\n2020-01-01;1,5\n", "s.csv", ';');
  CHECK(semi.cell(0, 1) == "1,5");
  const CsvTable tab = CsvTable::parse("date\tv\n2020-01-01\t7\n", "t.csv", '\t');
  CHECK(tab.cell(0, 1) == "7");
}

TEST_CASE("numbers go through from_chars; missing tokens are recognised") {
  double x = 0;
  CHECK(parse_number("1.5", x));
  CHECK(x == 1.5);
  CHECK(parse_number(" -4.08 ", x));
  CHECK(x == doctest::Approx(-4.08));
  CHECK(parse_number("+2e3", x));
  CHECK(x == 2000.0);
  CHECK_FALSE(parse_number("1,5", x));
  CHECK_FALSE(parse_number("inf", x));
  CHECK_FALSE(parse_number("nan", x));
  CHECK_FALSE(parse_number("?0.2", x));
  CHECK_FALSE(parse_number("", x));
  for (const char* m : {"", "NA", "NaN", "null", "?", " NA "}) CHECK(is_missing_token(m));
  CHECK_FALSE(is_missing_token("0"));
  CHECK_FALSE(is_missing_token("NAB"));
}

TEST_CASE("the fast decimal path gives the same doubles as from_chars, bit for bit") {
  // parse_number takes a shortcut for short decimals; any rounding slip shows here.
  uint64_t state = 0x243F6A8885A308D3ull;
  char buf[64];
  for (int i = 0; i < 40000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t r = state >> 11;
    const double x = (i % 4 == 0)   ? static_cast<double>(static_cast<float>(r * 1e-13))
                     : (i % 4 == 1) ? -static_cast<double>(r % 100000000) / 1000.0
                     : (i % 4 == 2) ? static_cast<double>(r) / 1e9
                                    : static_cast<double>(r % 1000);
    const int n = (i % 3 == 0) ? std::snprintf(buf, sizeof buf, "%.17g", x)
                  : (i % 3 == 1)
                      ? std::snprintf(buf, sizeof buf, "%.6f", x)
                      : static_cast<int>(std::to_chars(buf, buf + sizeof buf, x).ptr - buf);
    double fast = 0, exact = 0;
    REQUIRE(parse_number(std::string_view(buf, static_cast<size_t>(n)), fast));
    std::from_chars(buf, buf + n, exact);
    if (std::memcmp(&fast, &exact, sizeof fast) != 0) FAIL_CHECK(buf);
  }
}

TEST_CASE("column summaries tell numbers, times and text apart") {
  const CsvTable t =
      CsvTable::parse("date,v,w,e\n2020-01-01,1,SE,\n2020-01-02,NA,NW,NA\n", "k.csv");
  const auto s = summarize_columns(t);
  CHECK(s[0].kind == ColumnKind::kTime);
  CHECK(s[1].kind == ColumnKind::kNumeric);
  CHECK(s[1].missing == 1);
  CHECK(s[2].kind == ColumnKind::kText);
  CHECK(s[2].first_text == "SE");
  CHECK(s[3].kind == ColumnKind::kEmpty);
  // Slash and dot dates are times, as load_series reads them; with a date_format, cells in it.
  const CsvTable d = CsvTable::parse(
      "a;b;c;d\n01/02/2023;13.02.2023 10:00;2023-02-01T10:00:00Z;Feb 1\n"
      "02/02/2023;14.02.2023 10:00;2023-02-01T11:00:00+01:00;Feb 2\n",
      "d.csv", ';');
  const auto ds = summarize_columns(d);
  CHECK(ds[0].kind == ColumnKind::kTime);
  CHECK(ds[1].kind == ColumnKind::kTime);
  CHECK(ds[2].kind == ColumnKind::kTime);  // ISO with Z or an offset
  CHECK(ds[3].kind == ColumnKind::kText);
  const auto zs = summarize_columns(d, {}, "%Y-%m-%dT%H:%M:%S%z");
  CHECK(zs[2].kind == ColumnKind::kTime);
  CHECK(zs[0].kind == ColumnKind::kText);  // under a format, only cells in it
}

TEST_CASE("error: empty file") {
  const std::string e = load_error("");
  CHECK(contains(e, "in.csv: file is empty; expected a header line"));
  CHECK(contains(load_error("\xEF\xBB\xBF\r\n\n"), "file is empty"));
}

TEST_CASE("error: header only") {
  CHECK(contains(load_error("date,v\n"), "in.csv:2: file has a header but no data rows"));
}

TEST_CASE("error: ragged rows name the line and the field counts") {
  const std::string e = load_error("date,v\n2020-01-01,1\n2020-01-02,2,9\n");
  CHECK(contains(e, "in.csv:3:3: found 3 fields, expected 2 as in the header"));
  const std::string short_row = load_error("date,v,w\n2020-01-01,1\n");
  CHECK(contains(short_row, "in.csv:2:2: found 2 fields, expected 3"));
}

TEST_CASE("error: unparseable numbers name line, column and token") {
  const std::string e = load_error("date,v\n2020-01-01,1\n2020-01-02,1.2.3\n");
  CHECK(contains(e, "in.csv:3:2: column 'v': found '1.2.3', expected a number"));
  const std::string big = load_error("date,v\n2020-01-01,1e300\n");
  CHECK(
      contains(big, "in.csv:2:2: column 'v': found '1e300', expected a number within float range"));
}

TEST_CASE("error: bad, duplicate and unsorted dates") {
  CHECK(contains(load_error("date,v\n2020-01-01,1\n2020-02-30,2\n"),
                 "in.csv:3:1: column 'date': found '2020-02-30', expected a timestamp like"));
  CHECK(contains(load_error("date,v\n2020-01-01,1\n2020-01-01,2\n"),
                 "in.csv:3:1: column 'date': found duplicate time 2020-01-01 (also on line 2), "
                 "expected strictly increasing times"));
  CHECK(contains(
      load_error("date,v\n2020-01-02,1\n2020-01-01,2\n"),
      "in.csv:3:1: column 'date': found time 2020-01-01 earlier than 2020-01-02 on line 2"));
  CHECK(contains(load_error("date,v\n2020-01-01,1\n,2\n"),
                 "in.csv:3:1: column 'date': found a missing time"));
}

TEST_CASE("error: a missing column lists the available ones") {
  CsvOptions opt;
  opt.value_columns = {"OT"};
  CHECK(contains(load_error("date,v\n2020-01-01,1\n", opt),
                 "in.csv:1: no column named 'OT'; expected one of: date, v"));
  CsvOptions time;
  time.time_column = "when";
  CHECK(contains(load_error("date,v\n2020-01-01,1\n", time), "no column named 'when'"));
}

TEST_CASE("error: binary garbage") {
  std::string bytes = "date,v\n2020-01-01,1\n20";
  bytes += '\0';
  bytes += "\x01\xff";
  CHECK(contains(load_error(bytes),
                 "in.csv:3:3: found a NUL byte (binary data); expected a text CSV"));
  // Control bytes in a found token are escaped so the message stays one line.
  CsvOptions v;
  v.value_columns = {"v"};
  const std::string ctl = load_error("date,v\n2020-01-01,\x1b[2J\n", v);
  CHECK(contains(ctl, "found text '\\x1B[2J'"));
  CHECK(ctl.find('\n') == std::string::npos);
}

TEST_CASE("error: an unterminated quote and text after a closing quote") {
  CHECK(contains(load_error("date,v\n\"2020-01-01,1\n"),
                 "in.csv:2:1: found a quoted field that never closes"));
  CHECK(contains(load_error("date,v\n\"2020-01-01\"x,1\n"),
                 "in.csv:2:1: found 'x,1' after a closing quote; expected a delimiter"));
}

TEST_CASE("error: a text column chosen as a value column is named") {
  CsvOptions opt;
  opt.value_columns = {"cbwd"};
  CHECK(contains(load_error("date,cbwd\n2020-01-01,SE\n", opt),
                 "in.csv:2:2: column 'cbwd': found text 'SE', expected a numeric column"));
}

TEST_CASE("error: missing values under the default policy list the first cells") {
  const std::string e = load_error("date,a,b\n2020-01-01,NA,1\n2020-01-02,2,?\n2020-01-03,3,4\n");
  CHECK(contains(e, "in.csv:2:2: column 'a': found missing value 'NA', expected a number"));
  CHECK(contains(e, "2 missing in a (1), b (1); first at line 2 column a, line 3 column b"));
  CHECK(contains(e, "choose a missing-value policy: ffill, interpolate or mask"));
}

TEST_CASE("error: no time column and no numeric value column") {
  CHECK(contains(load_error("name,v\nx,1\n"), "in.csv:1: found no time column among: name, v"));
  CHECK(
      contains(load_error("date,name\n2020-01-01,x\n"),
               "found no numeric value columns among: date, name (column 'name' holds text such as "
               "'x' on line 2)"));
}

TEST_CASE("error: two value columns of one name (issue 18 item 12)") {
  // Accepted, it trained a model whose columns predict could not find again.
  const std::string e = load_error("date,load,load\n2020-01-01,1,2\n2020-01-02,3,4\n");
  CHECK(contains(e, "in.csv:1:3: column 'load' has the name of column 2"));
  CHECK(contains(e, "expected every value column to have its own name"));
}
