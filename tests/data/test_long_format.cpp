// Long format (a panel, CsvOptions::id_column): rows grouped by series in order of first
// appearance, each series sorted and checked on its own, gaps and fills per series, and
// bad input named by file, line, series id and column.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc::data;

namespace {
CsvOptions long_options(MissingPolicy missing = MissingPolicy::kError) {
  CsvOptions opt;
  opt.id_column = "id";
  opt.missing = missing;
  return opt;
}
TimeSeries load_long(const std::string& text, CsvOptions opt = long_options()) {
  return load_series(CsvTable::parse(text, "panel.csv"), opt);
}
// The InputError message ("" if it loaded).
std::string long_load_error(const std::string& text, CsvOptions opt = long_options()) {
  try {
    load_long(text, opt);
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "";
}
// The rows of one series as "time=value" (times shown as the file writes them).
std::vector<std::string> rows_of(const TimeSeries& s, size_t k, size_t channel = 0) {
  std::vector<std::string> out;
  const SeriesSegment& g = s.segments.at(k);
  for (size_t r = g.begin; r < g.end; ++r) {
    char v[32];
    std::snprintf(v, sizeof v, "%g", static_cast<double>(s.value(r, channel)));
    out.push_back(s.format_time(s.timestamps[r]) + "=" + v);
  }
  return out;
}
using Rows = std::vector<std::string>;
}  // namespace

TEST_CASE("interleaved series are grouped in order of first appearance; id is not a value") {
  const TimeSeries s = load_long(
      "id,date,value\n"
      "B,2020-01-01,1\nA,2020-01-01,10\nB,2020-01-02,2\nA,2020-01-02,20\nB,2020-01-03,3\n");
  REQUIRE(s.num_series() == 2);
  CHECK(s.id_column == "id");
  CHECK(s.channels == std::vector<std::string>{"value"});
  CHECK(s.segments[0].id == "B");
  CHECK(s.segments[1].id == "A");
  CHECK(rows_of(s, 0) == Rows{"2020-01-01=1", "2020-01-02=2", "2020-01-03=3"});
  CHECK(rows_of(s, 1) == Rows{"2020-01-01=10", "2020-01-02=20"});
  CHECK(s.table_rows == std::vector<size_t>{0, 2, 4, 1, 3});
  CHECK(s.frequency.name() == "1d");
  CHECK(s.gaps.empty());
  CHECK(s.describe() == "2 series, 5 rows x 1 channel, 2020-01-01 .. 2020-01-03, 1d, no gaps");
}

TEST_CASE("each series is sorted by time on its own") {
  const TimeSeries s = load_long(
      "id,date,value\n"
      "A,2020-01-03,3\nA,2020-01-01,1\nB,2020-01-02,20\nA,2020-01-02,2\nB,2020-01-01,10\n");
  REQUIRE(s.num_series() == 2);
  CHECK(rows_of(s, 0) == Rows{"2020-01-01=1", "2020-01-02=2", "2020-01-03=3"});
  CHECK(rows_of(s, 1) == Rows{"2020-01-01=10", "2020-01-02=20"});
  // Row 0 of the series is line 3 of the file (header = line 1).
  CHECK(s.table_row(0) == 1);
}

TEST_CASE("ragged series: different lengths and starts; one series is a panel of one") {
  const TimeSeries s = load_long(
      "id,date,value\n"
      "x,2021-03-01 00:00,1\nx,2021-03-01 01:00,2\n"
      "y,2021-02-01 05:00,7\ny,2021-02-01 06:00,8\ny,2021-02-01 07:00,9\n"
      "z,2021-06-01 00:00,4\n");
  REQUIRE(s.num_series() == 3);
  CHECK(s.segments[0].rows() == 2);
  CHECK(s.segments[1].rows() == 3);
  CHECK(s.segments[2].rows() == 1);
  CHECK(s.frequency.name() == "1h");  // not the step from one series to the next
  CHECK(s.gaps.empty());
  CHECK(
      contains(s.describe(), "3 series, 6 rows x 1 channel, 2021-02-01 05:00 .. 2021-06-01 00:00"));
  const TimeSeries one = load_long("id,date,value\nq,2020-01-01,1\nq,2020-01-02,2\n");
  CHECK(one.segments.size() == 1);
  CHECK(one.describe() == "2 rows x 1 channel, 2020-01-01 .. 2020-01-02, 1d, no gaps");
}

TEST_CASE("the step from one series to the next is not a step of either") {
  // One series of two hourly rows and four single-row series a day apart: the steps
  // between series (1d) would outvote the one real step (1h) if they counted.
  const TimeSeries s = load_long(
      "id,date,value\n"
      "a,2021-01-01 00:00,1\na,2021-01-01 01:00,2\nb,2021-01-02 01:00,3\n"
      "c,2021-01-03 01:00,4\nd,2021-01-04 01:00,5\ne,2021-01-05 01:00,6\n");
  CHECK(s.frequency.name() == "1h");
  CHECK(infer_frequency(s.timestamps).name() == "1d");
}

TEST_CASE("a time twice in one series names the file, both lines and the series") {
  const std::string e = long_load_error(
      "id,date,value\n"
      "A,2020-01-01,1\nB,2020-01-01,5\nA,2020-01-02,2\nA,2020-01-01,3\n");
  CHECK(contains(e, "panel.csv:5:2: column 'date': found duplicate time 2020-01-01 in series 'A'"));
  CHECK(contains(e, "also on line 2"));
  // The same time in two different series is fine.
  CHECK(long_load_error("id,date,value\nA,2020-01-01,1\nB,2020-01-01,5\n").empty());
}

TEST_CASE("integer ids: text keys, never the time column nor a value column") {
  // No column is named like a time: the first-column rule must skip the id (1 would read
  // as Unix seconds).
  CsvOptions opt = long_options();
  opt.id_column = "series";
  const TimeSeries s =
      load_long("series,t,v\n1,1600000000,1.5\n10,1600000000,3\n1,1600003600,2.5\n", opt);
  REQUIRE(s.num_series() == 2);
  CHECK(s.segments[0].id == "1");
  CHECK(s.segments[1].id == "10");
  CHECK(s.time_columns == std::vector<std::string>{"t"});
  CHECK(s.channels == std::vector<std::string>{"v"});
  opt.value_columns = {"series", "v"};
  CHECK(contains(long_load_error("series,t,v\n1,1600000000,1.5\n", opt),
                 "column 'series' is the id column; expected it not to be a value column"));
}

TEST_CASE("gaps are found per series, at rows of the whole panel") {
  const TimeSeries s = load_long(
      "id,date,value\n"
      "A,2020-01-01,1\nA,2020-01-02,2\nA,2020-01-03,3\nA,2020-01-05,5\n"
      "B,2020-01-10,1\nB,2020-01-11,2\nB,2020-01-14,3\nB,2020-01-15,4\n");
  REQUIRE(s.gaps.size() == 2);
  CHECK(s.gaps[0].row == 3);
  CHECK(s.gaps[0].missing_periods == 1);
  CHECK(s.gaps[1].row == 6);
  CHECK(s.gaps[1].missing_periods == 2);
  CHECK(s.total_missing_periods == 3);
  CHECK(s.segment_index(6) == 1);
  CHECK(s.segment_index(3) == 0);
  CsvOptions regular = long_options();
  regular.regular = true;
  const std::string e = long_load_error(
      "id,date,value\nA,2020-01-01,1\nB,2020-01-01,1\nB,2020-01-02,1\nA,2020-01-02,2\n"
      "B,2020-01-04,1\n",
      regular);
  CHECK(contains(e, "panel.csv:6:2:"));
  CHECK(contains(e, "line 6 (series 'B'): 2020-01-02 -> 2020-01-04 (1 missing)"));
}

TEST_CASE("ffill and interpolate never cross a series boundary") {
  const std::string text =
      "id,date,value\n"
      "A,2020-01-01,1\nA,2020-01-02,2\nA,2020-01-03,\n"
      "B,2020-01-01,\nB,2020-01-02,10\nB,2020-01-03,\nB,2020-01-04,30\n";
  const TimeSeries f = load_long(text, long_options(MissingPolicy::kFfill));
  // A's trailing gap takes A's last value; B's leading gap takes B's first, not A's 2.
  CHECK(rows_of(f, 0) == Rows{"2020-01-01=1", "2020-01-02=2", "2020-01-03=2"});
  CHECK(rows_of(f, 1) == Rows{"2020-01-01=10", "2020-01-02=10", "2020-01-03=10", "2020-01-04=30"});
  CHECK(f.missing_per_channel == std::vector<size_t>{3});
  CHECK_FALSE(f.is_observed(3, 0));
  const TimeSeries i = load_long(text, long_options(MissingPolicy::kInterpolate));
  CHECK(rows_of(i, 0) == Rows{"2020-01-01=1", "2020-01-02=2", "2020-01-03=2"});
  CHECK(rows_of(i, 1) == Rows{"2020-01-01=10", "2020-01-02=10", "2020-01-03=20", "2020-01-04=30"});
  // Interleaved in the file: the fill follows each series' time order, not the file's.
  const TimeSeries m = load_long(
      "id,date,value\nB,2020-01-03,NA\nA,2020-01-01,5\nB,2020-01-01,1\nB,2020-01-05,9\n"
      "B,2020-01-04,NA\nB,2020-01-02,NA\n",
      long_options(MissingPolicy::kMask));
  CHECK(rows_of(m, 0) ==
        Rows{"2020-01-01=1", "2020-01-02=3", "2020-01-03=5", "2020-01-04=7", "2020-01-05=9"});
}

TEST_CASE("a series with no value in a column names the series and the column") {
  const std::string e = long_load_error("id,date,a,b\nA,2020-01-01,1,2\nB,2020-01-01,3,NA\n",
                                        long_options(MissingPolicy::kFfill));
  CHECK(contains(e, "panel.csv:3:4: column 'b': series 'B': found no values at all"));
  // Under the default policy the missing cell itself is the error, as for a wide file.
  CHECK(contains(long_load_error("id,date,a\nA,2020-01-01,1\nB,2020-01-01,NA\n"),
                 "panel.csv:3:3: column 'a': found missing value 'NA'"));
}

TEST_CASE("frequency: inferred over all series, checked per series") {
  const std::string e = long_load_error(
      "id,date,value\n"
      "A,2020-01-01 00:00,1\nA,2020-01-01 01:00,2\nA,2020-01-01 02:00,3\nA,2020-01-01 03:00,4\n"
      "B,2020-01-01 00:00,1\nB,2020-01-02 00:00,2\nB,2020-01-03 00:00,3\n");
  CHECK(contains(e, "panel.csv:6:2: column 'date': series 'B': found frequency 1d"));
  CHECK(contains(e, "0 of 2 steps are one period of 1h"));
  CHECK(contains(e, "expected 1h like the other series"));
  // A given frequency is checked the same way.
  CsvOptions given = long_options();
  given.frequency = "1h";
  CHECK(contains(
      long_load_error("id,date,value\nA,2020-01-01,1\nA,2020-01-02,2\nA,2020-01-03,3\n", given),
      "expected 1h (the given frequency)"));
}

TEST_CASE("unknown id column and empty id cells") {
  CsvOptions opt = long_options();
  opt.id_column = "store";
  const std::string e = long_load_error("id,date,value\nA,2020-01-01,1\n", opt);
  CHECK(contains(e, "no column named 'store'"));
  CHECK(contains(e, "id, date, value"));
  const std::string empty = long_load_error("id,date,value\nA,2020-01-01,1\n ,2020-01-02,2\n");
  CHECK(contains(empty, "panel.csv:3:1: column 'id': found an empty series id"));
  opt.id_column = "date";
  CHECK(contains(long_load_error("id,date,value\nA,2020-01-01,1\n", opt),
                 "is both the id column and the time column"));
}

TEST_CASE("a wide file has no segments and the same description as before") {
  const TimeSeries s = load_series(
      CsvTable::parse("date,value\n2020-01-01,1\n2020-01-02,2\n", "wide.csv"), CsvOptions{});
  CHECK(s.segments.empty());
  CHECK(s.table_rows.empty());
  CHECK(s.num_series() == 1);
  CHECK(s.describe() == "2 rows x 1 channel, 2020-01-01 .. 2020-01-02, 1d, no gaps");
}
