// Time axis: timestamp parsing/printing, frequencies, stepping, inference, gaps.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/time.hpp"

using namespace attnfc::data;

namespace {
int64_t utc_seconds(const char* s) {
  const auto t = parse_timestamp(s);
  REQUIRE(t.has_value());
  return *t;
}
std::string time_load_error(const std::string& text, CsvOptions opt = {}) {
  try {
    load_series(CsvTable::parse(text, "in.csv"), opt);
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("timestamps parse to Unix seconds and print back in the input's style") {
  TimeStyle st;
  CHECK(parse_timestamp("1970-01-01", &st) == 0);
  CHECK(st.format == TimeFormat::kDate);
  CHECK(parse_timestamp("2016-07-01 00:00:00", &st) == 1467331200);
  CHECK(st.format == TimeFormat::kDateTimeSeconds);
  CHECK(format_timestamp(1467331200 + 3600, st) == "2016-07-01 01:00:00");
  CHECK(parse_timestamp("2016-07-01T01:30", &st) == 1467336600);
  CHECK(format_timestamp(1467336600, st) == "2016-07-01T01:30");
  CHECK(parse_timestamp("1949-01", &st) == utc_seconds("1949-01-01"));
  CHECK(format_timestamp(utc_seconds("1961-03-01"), st) == "1961-03");
  CHECK(parse_timestamp("1467331200", &st) == 1467331200);
  CHECK(st.format == TimeFormat::kUnixSeconds);
  CHECK(parse_timestamp("2016-07-01T02:00:00+02:00") == 1467331200);
  CHECK(parse_timestamp("2016-07-01T00:00:00Z") == 1467331200);
  CHECK(parse_timestamp("2016/7/1") == 1467331200);
  CHECK(parse_timestamp("2000-02-29") == utc_seconds("2000-03-01") - 86400);
  for (const char* bad :
       {"2017-02-29", "1900-02-29", "2016-13-01", "2016-07-01 24:00", "2016-07-01 10", "07/01/2016",
        "2016-07-01x", "abc", "", "2016-07-01 00:00:00.5"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_timestamp(bad).has_value());
  }
  // Civil conversion round trips across centuries and negative days.
  for (int64_t d = -800000; d <= 800000; d += 997) {
    int64_t y;
    unsigned m, dd;
    civil_from_days(d, y, m, dd);
    CHECK(days_from_civil(y, m, dd) == d);
  }
  CHECK(weekday(utc_seconds("2026-11-30")) == 0);  // a Monday
}

TEST_CASE("frequency names parse and print") {
  CHECK(Frequency::parse("1h").name() == "1h");
  CHECK(Frequency::parse("15min").name() == "15min");
  CHECK(Frequency::parse("D").name() == "1d");
  CHECK(Frequency::parse("7d").name() == "1w");
  CHECK(Frequency::parse("M").name() == "1mo");
  CHECK(Frequency::parse("monthly").name() == "1mo");
  CHECK(Frequency::parse("Q").name() == "3mo");
  CHECK(Frequency::parse("12mo").name() == "1y");
  CHECK(Frequency::parse("B").name() == "B");
  CHECK(Frequency::parse("ME").name() == "1mo-end");
  CHECK(Frequency::parse("QE").name() == "3mo-end");
  CHECK(Frequency::parse("1y-end").name() == "1y-end");
  CHECK_THROWS(Frequency::parse("1h-end"));
  for (const char* bad : {"", "m", "0h", "h1", "fortnightly", "-1d"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Frequency::parse(bad), attnfc::InputError);
  }
  CHECK_THROWS_WITH(Frequency::parse("weird"),
                    doctest::Contains("found 'weird', expected a frequency such as 1h"));
}

TEST_CASE("stepping forward by months clamps the day; business days skip weekends") {
  const Frequency month = Frequency::parse("1mo");
  CHECK(month.advance(utc_seconds("2016-01-31"), 1) == utc_seconds("2016-02-29"));
  CHECK(month.advance(utc_seconds("1960-12-01"), 1) == utc_seconds("1961-01-01"));
  CHECK(month.advance(utc_seconds("1960-12-01"), -12) == utc_seconds("1959-12-01"));
  const Frequency month_end = Frequency::parse("1mo-end");
  CHECK(month_end.advance(utc_seconds("2016-01-31"), 1) == utc_seconds("2016-02-29"));
  CHECK(month_end.advance(utc_seconds("2016-02-29"), 1) == utc_seconds("2016-03-31"));
  CHECK(month_end.periods_between(utc_seconds("2016-02-29"), utc_seconds("2016-04-30")) == 2);
  CHECK_FALSE(
      month.periods_between(utc_seconds("2016-02-29"), utc_seconds("2016-03-31")).has_value());
  const Frequency bday = Frequency::parse("B");
  CHECK(bday.advance(utc_seconds("2026-08-14"), 1) == utc_seconds("2026-08-17"));  // Fri -> Mon
  CHECK(bday.advance(utc_seconds("2026-08-18"), 4) ==
        utc_seconds("2026-08-24"));  // Tue -> next Mon
  CHECK(bday.advance(utc_seconds("2026-08-17"), -1) == utc_seconds("2026-08-14"));
  CHECK(bday.advance(utc_seconds("2026-08-15"), 1) == utc_seconds("2026-08-17"));  // Sat -> Mon
  CHECK(bday.periods_between(utc_seconds("2026-08-14"), utc_seconds("2026-08-18")) == 2);
  CHECK_FALSE(
      bday.periods_between(utc_seconds("2026-08-14"), utc_seconds("2026-08-15")).has_value());
  const Frequency hour = Frequency::parse("1h");
  CHECK(hour.periods_between(utc_seconds("2016-07-01 00:00"), utc_seconds("2016-07-01 05:00")) ==
        5);
  CHECK_FALSE(hour.periods_between(utc_seconds("2016-07-01 00:00"), utc_seconds("2016-07-01 05:30"))
                  .has_value());
}

TEST_CASE("frequency inference: hours, days, months, years, business days") {
  const auto grid = [](const char* first, const Frequency& f, int n) {
    std::vector<int64_t> v;
    for (int i = 0; i < n; ++i) v.push_back(f.advance(utc_seconds(first), i));
    return v;
  };
  CHECK(infer_frequency(grid("2016-07-01 00:00", Frequency::parse("1h"), 50)).name() == "1h");
  CHECK(infer_frequency(grid("2016-07-01 00:00", Frequency::parse("15min"), 50)).name() == "15min");
  CHECK(infer_frequency(grid("2016-07-01", Frequency::parse("1d"), 50)).name() == "1d");
  CHECK(infer_frequency(grid("2016-07-04", Frequency::parse("1w"), 50)).name() == "1w");
  CHECK(infer_frequency(grid("1949-01-01", Frequency::parse("1mo"), 50)).name() == "1mo");
  CHECK(infer_frequency(grid("1949-01-01", Frequency::parse("Q"), 50)).name() == "3mo");
  CHECK(infer_frequency(grid("1949-01-01", Frequency::parse("1y"), 50)).name() == "1y");
  CHECK(infer_frequency(grid("2026-08-03", Frequency::parse("B"), 50)).name() == "B");
  CHECK_FALSE(infer_frequency({utc_seconds("2016-07-01")}).known());
  const Frequency me = infer_frequency(grid("2015-11-30", Frequency::parse("ME"), 30));
  CHECK(me.name() == "1mo-end");
  CHECK(me.month_end);
  CHECK(infer_frequency(grid("2015-12-31", Frequency::parse("QE"), 30)).name() == "3mo-end");
  // A dropped hour is a gap of one period; an off-grid step is flagged -1.
  std::vector<int64_t> h = grid("2016-07-01 00:00", Frequency::parse("1h"), 10);
  h.erase(h.begin() + 4);
  h.back() += 1800;
  const auto gaps = find_gaps(h, infer_frequency(h));
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[0].row == 4);
  CHECK(gaps[0].missing_periods == 1);
  CHECK(gaps[1].missing_periods == -1);
}

TEST_CASE("regular: true rejects gaps and lists the first ones; a given frequency is used") {
  const std::string text = "date,v\n2020-01-01,1\n2020-01-02,2\n2020-01-04,3\n2020-01-05,4\n";
  CsvOptions opt;
  opt.regular = true;
  const std::string e = time_load_error(text, opt);
  CHECK(e.find("in.csv:4:1: column 'date': found 1 gap(s) at frequency 1d (first: line 4: "
               "2020-01-02 -> 2020-01-04 (1 missing)), expected a regular series") !=
        std::string::npos);
  CsvOptions given;
  given.frequency = "2d";
  const TimeSeries s = load_series(CsvTable::parse(text, "in.csv"), given);
  CHECK_FALSE(s.frequency_inferred);
  CHECK(s.frequency.name() == "2d");
  CHECK(s.off_grid_steps == 2);
  CsvOptions wrong;
  wrong.frequency = "fortnightly";
  CHECK(time_load_error(text, wrong).find("in.csv: frequency: found 'fortnightly'") !=
        std::string::npos);
}

TEST_CASE("composite year/month/day/hour columns and a lone year column") {
  const TimeSeries s = load_series(
      CsvTable::parse("No,year,month,day,hour,v\n1,2010,1,1,0,5\n2,2010,1,1,1,6\n3,2010,1,1,2,7\n",
                      "p.csv"),
      {});
  CHECK(s.time_columns == std::vector<std::string>{"year", "month", "day", "hour"});
  CHECK(s.channels == std::vector<std::string>{"v"});  // "No" is a row counter, skipped
  CHECK(s.frequency.name() == "1h");
  CHECK(s.format_time(s.future_timestamps(1)[0]) == "2010-01-01 03:00");
  CHECK(
      time_load_error("year,month,day,v\n2010,2,30,1\n")
          .find(
              "in.csv:2:3: column 'day': found day 30 of 2010-2, expected a valid calendar date") !=
      std::string::npos);
  CHECK(time_load_error("year,month,v\n2010,13,1\n")
            .find("column 'month': found '13', expected the month as an integer in [1, 12]") !=
        std::string::npos);
  CsvOptions year;
  year.time_column = "Year";
  const TimeSeries y =
      load_series(CsvTable::parse("Year,v\n1990,1\n1991,2\n1992,3\n", "y.csv"), year);
  CHECK(y.frequency.name() == "1y");
  CHECK(y.format_time(y.future_timestamps(1)[0]) == "1993");
}
