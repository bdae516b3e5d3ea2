// Other ways of writing numbers and times (data.decimal, data.thousands, data.date_format,
// day-first detection, time columns named in other languages), and each of their errors
// naming file:line:column, what was found and what was expected.
#include <doctest/doctest.h>

#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/time.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc::data;

namespace {

TimeSeries load_text(const std::string& text, const CsvOptions& opt = {}) {
  return load_series(CsvTable::parse(text, "in.csv", opt.delimiter), opt);
}
std::string format_error(const std::string& text, const CsvOptions& opt = {}) {
  try {
    load_text(text, opt);
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "";
}
std::string format_error(const std::string& decimal, const std::string& thousands,
                         char delimiter = ',') {
  try {
    parse_number_format(decimal, thousands, delimiter, "data.decimal", "data.thousands");
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "";
}
CsvOptions semicolon_comma() {
  CsvOptions opt;
  opt.delimiter = ';';
  opt.number.decimal = ',';
  return opt;
}

}  // namespace

TEST_CASE("formats: decimal comma in a semicolon file, quoted cells too") {
  const TimeSeries s = load_text(
      "Datum;Wert\n2023-01-01;96,54\n2023-01-02;\"1,5\"\n2023-01-03;-3\n", semicolon_comma());
  REQUIRE(s.rows() == 3);
  CHECK(s.time_columns == std::vector<std::string>{"Datum"});
  CHECK(s.value(0, 0) == doctest::Approx(96.54));
  CHECK(s.value(1, 0) == doctest::Approx(1.5));
  CHECK(s.value(2, 0) == doctest::Approx(-3.0));
  // The default format reads 96,54 as text: the column is not a value column.
  CsvOptions plain;
  plain.delimiter = ';';
  CHECK(contains(format_error("Datum;Wert\n2023-01-01;96,54\n", plain),
                 "found no numeric value columns"));
}

TEST_CASE("formats: a decimal point in a decimal-comma file names the cell") {
  const std::string e = format_error("date;v\n2023-01-01;1,5\n2023-01-02;2.5\n", semicolon_comma());
  CHECK(contains(
      e, "in.csv:3:2: column 'v': found '2.5', expected a number with the decimal mark ','"));
}

TEST_CASE("formats: thousands separators") {
  double v = 0;
  NumberFormat comma{'.', ','};
  CHECK(parse_number("1,234.5", comma, v) == NumberParse::kNumber);
  CHECK(v == 1234.5);
  CHECK(parse_number("-12,345,678", comma, v) == NumberParse::kNumber);
  CHECK(v == -12345678.0);
  CHECK(parse_number("999", comma, v) == NumberParse::kNumber);
  CHECK(v == 999.0);
  CHECK(parse_number("1,23", comma, v) == NumberParse::kBadGrouping);
  CHECK(parse_number("1234,567", comma, v) == NumberParse::kBadGrouping);
  CHECK(parse_number(",123", comma, v) == NumberParse::kBadGrouping);
  CHECK(parse_number("1,,234", comma, v) == NumberParse::kBadGrouping);
  CHECK(parse_number("abc", comma, v) == NumberParse::kNotNumber);
  NumberFormat german{',', '.'};
  CHECK(parse_number("1.234,5", german, v) == NumberParse::kNumber);
  CHECK(v == 1234.5);
  CHECK(parse_number("1.5", german, v) == NumberParse::kBadGrouping);
  NumberFormat swiss{'.', '\''};
  CHECK(parse_number("1'234'567.25", swiss, v) == NumberParse::kNumber);
  CHECK(v == 1234567.25);
  NumberFormat french{',', ' '};
  CHECK(parse_number(" 1 234,5 ", french, v) == NumberParse::kNumber);
  CHECK(v == 1234.5);
  CsvOptions opt = semicolon_comma();
  opt.number.thousands = '.';
  const TimeSeries s = load_text("date;v\n2023-01-01;1.234,5\n2023-01-02;12\n", opt);
  CHECK(s.value(0, 0) == doctest::Approx(1234.5));
}

TEST_CASE("formats: a bad thousands grouping names file:line:column, found and expected") {
  CsvOptions opt;
  opt.number.thousands = ',';
  const std::string e = format_error("date,v\n2023-01-01,\"1,234.5\"\n2023-01-02,\"12,34\"\n", opt);
  CHECK(contains(e,
                 "in.csv:3:2: column 'v': found '12,34', expected groups of 3 digits after each "
                 "thousands separator \",\" (like 1,234,567.5)"));
}

TEST_CASE("formats: decimal and thousands settings are checked, naming the key") {
  CHECK(format_error(",", "") == "");
  CHECK(format_error(".", "'") == "");
  CHECK(contains(format_error(";", ""), "data.decimal: found \";\", expected \".\" or \",\""));
  CHECK(contains(format_error(".", "x"), "data.thousands: found \"x\", expected"));
  CHECK(contains(format_error(",", ","),
                 "data.thousands: found \",\", the decimal mark too "
                 "(data.decimal)"));
  CHECK(contains(format_error(",", " ", ' '),
                 "data.thousands: found \" \" (a space), the field "
                 "delimiter too"));
  CHECK(contains(format_error(".", ","), "data.thousands: found \",\", the field delimiter too"));
}

TEST_CASE("formats: date_format reads day-first dates, times, and offsets to UTC") {
  CsvOptions opt;
  opt.date_format = "%d/%m/%Y";
  TimeSeries s = load_text("when,v\n01/02/2023,1\n02/02/2023,2\n", opt);
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 2, 1));
  CHECK(s.format_time(s.timestamps[1]) == "02/02/2023");
  opt.date_format = "%d.%m.%Y %H:%M";
  s = load_text("when,v\n01.02.2023 13:30,1\n01.02.2023 14:30,2\n", opt);
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 2, 1, 13, 30));
  opt.date_format = "%m/%d/%Y";
  s = load_text("when,v\n01/02/2023,1\n01/03/2023,2\n", opt);
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 1, 2));
  opt.date_format = "%Y-%m-%dT%H:%M:%S%z";
  s = load_text("when,v\n2023-01-01T10:00:00+0200,1\n2023-01-01T11:00:00+02:00,2\n", opt);
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 1, 1, 8));
  CHECK(s.timestamps[1] == to_unix_seconds(2023, 1, 1, 9));
  // ISO 8601's Z for UTC under %z.
  s = load_text("when,v\n2023-01-01T10:00:00Z,1\n2023-01-01T12:00:00+01:00,2\n", opt);
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 1, 1, 10));
  CHECK(s.timestamps[1] == to_unix_seconds(2023, 1, 1, 11));
  CHECK_FALSE(parse_timestamp_as("2023-01-01T10:00:00Q", opt.date_format));
  CHECK_FALSE(parse_timestamp_as("2023-01-01T10:00:00Z", "%Y-%m-%dT%H:%M:%S"));
}

TEST_CASE("formats: config dates (split dates) in date_format or ISO; the error names both") {
  CHECK(parse_timestamp_or_throw("01/02/2023", "data.split.val_start", "%d/%m/%Y") ==
        to_unix_seconds(2023, 2, 1));
  CHECK(parse_timestamp_or_throw("2023-02-01", "data.split.val_start", "%d/%m/%Y") ==
        to_unix_seconds(2023, 2, 1));
  std::string e;
  try {
    parse_timestamp_or_throw("1.2.2023", "data.split.test_start", "%d/%m/%Y");
  } catch (const attnfc::InputError& x) {
    e = x.what();
  }
  CHECK(e ==
        "data.split.test_start: found '1.2.2023', expected a date in data.date_format "
        "'%d/%m/%Y' or ISO like 2016-07-01 13:00");
}

TEST_CASE("formats: a cell not matching date_format names file:line:column, cell and format") {
  CsvOptions opt;
  opt.date_format = "%d/%m/%Y";
  const std::string e = format_error("date,v\n01/02/2023,1\n2023-02-02,2\n", opt);
  CHECK(contains(e,
                 "in.csv:3:1: column 'date': found '2023-02-02', expected a time in the format "
                 "\"%d/%m/%Y\" (data.date_format)"));
  CHECK(contains(format_error("date,v\n31/02/2023,1\n", opt), "found '31/02/2023'"));
}

TEST_CASE("formats: slash and dot dates without date_format: the order from the cells") {
  TimeSeries s = load_text("date,v\n01/02/2023,1\n25/02/2023,2\n");
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 2, 1));
  CHECK(s.format_time(s.timestamps[1]) == "25/02/2023");
  s = load_text("date,v\n01/02/2023 10:00,1\n01/13/2023 10:00,2\n");
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 1, 2, 10));
  // Dotted dates are day-first by convention, even when every field is 12 or less.
  s = load_text("Datum,v\n01.02.2023,1\n02.02.2023,2\n");
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 2, 1));
  // ISO slashes (year first) are read as before.
  s = load_text("date,v\n2023/02/01,1\n2023/02/02,2\n");
  CHECK(s.timestamps[0] == to_unix_seconds(2023, 2, 1));
}

TEST_CASE("formats: ambiguous and mixed day/month orders are errors naming the cells") {
  const std::string e = format_error("date,v\n01/02/2023,1\n02/02/2023,2\n");
  CHECK(contains(e, "in.csv:2:1: column 'date': found dates like '01/02/2023'"));
  CHECK(contains(e,
                 "expected data.date_format set to \"%d/%m/%Y\" (day first) or \"%m/%d/%Y\" "
                 "(month first)"));
  const std::string mixed = format_error("date,v\n13/01/2023,1\n01/14/2023,2\n");
  CHECK(contains(mixed,
                 "found day-first dates ('13/01/2023' on line 2) and month-first dates "
                 "('01/14/2023' on line 3)"));
}

TEST_CASE("formats: time columns found by name in other languages and by content") {
  for (const char* name : {"Datum", "ZEIT", "Zeitstempel", "fecha", "hora", "date_heure", "tijd",
                           "czas", "дата", "Дата", "data"}) {
    CAPTURE(name);
    const TimeSeries s = load_text(std::string("v,") + name + "\n1,2023-01-01\n2,2023-01-02\n");
    CHECK(s.time_columns == std::vector<std::string>{name});
    CHECK(s.channels == std::vector<std::string>{"v"});
  }
  // "data" holding numbers is a value column, not the time.
  const std::string e = format_error("x,data\n1.5,5\n2.5,6\n");
  CHECK(contains(e, "found no time column"));
  // By content: a later column of dates.
  TimeSeries s = load_text("v,when\n1,2023-01-01\n2,2023-01-02\n");
  CHECK(s.time_columns == std::vector<std::string>{"when"});
  s = load_text("v,when\n1,25/01/2023\n2,26/01/2023\n");
  CHECK(s.time_columns == std::vector<std::string>{"when"});
}
