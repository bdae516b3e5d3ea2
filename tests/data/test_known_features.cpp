// Inputs known in advance (issue 19): calendar features and which frequencies allow them,
// and holiday files (static columns: test_static_features.cpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known.hpp"

using namespace attnfc::data;
using CF = CalendarFeature;

namespace {

const double kPi = 3.14159265358979323846;

int64_t at(const char* text) {
  return parse_timestamp_or_throw(text, "test time");
}

std::vector<float> row(const std::vector<CF>& f, const char* time) {
  std::vector<float> out(calendar_width(f), -9.0f);
  calendar_row(f, at(time), out.data());
  return out;
}

// sin, cos of one feature at `time`, checked against 2*pi*phase.
void check_phase(CF f, const char* time, double phase) {
  INFO(attnfc::enum_name(f), " at ", time, " phase ", phase);
  const std::vector<float> v = row({f}, time);
  CHECK(v[0] == doctest::Approx(std::sin(2 * kPi * phase)).epsilon(1e-6));
  CHECK(v[1] == doctest::Approx(std::cos(2 * kPi * phase)).epsilon(1e-6));
  CHECK(std::fabs(v[0] - std::sin(2 * kPi * phase)) < 1e-6);
  CHECK(std::fabs(v[1] - std::cos(2 * kPi * phase)) < 1e-6);
}

double distance(const std::vector<float>& a, const std::vector<float>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1]);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<CF> allowed(const char* freq) {
  return calendar_allowed(Frequency::parse(freq));
}

// A file in a folder of this process, removed with it.
struct TempDir {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("attnfc_known_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(dir); }
  ~TempDir() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
};

}  // namespace

TEST_CASE("calendar: exact phases of each feature") {
  // 2024-01-01 is a Monday: day_of_week phase 0, so sin 0 and cos 1 exactly.
  CHECK(row({CF::kDayOfWeek}, "2024-01-01") == std::vector<float>{0.0f, 1.0f});
  CHECK(row({CF::kHourOfDay}, "2024-01-01 00:00") == std::vector<float>{0.0f, 1.0f});
  CHECK(row({CF::kMonth}, "2024-01-15") == std::vector<float>{0.0f, 1.0f});
  CHECK(row({CF::kDayOfMonth}, "2024-03-01 18:00") == std::vector<float>{0.0f, 1.0f});
  check_phase(CF::kHourOfDay, "2024-01-01 06:00", 0.25);
  check_phase(CF::kHourOfDay, "2024-01-01 12:30:36", (12 + 30 / 60.0 + 36 / 3600.0) / 24);
  check_phase(CF::kDayOfWeek, "2024-01-07", 6.0 / 7);  // Sunday
  check_phase(CF::kDayOfWeek, "2024-01-03 23:59", 2.0 / 7);
  check_phase(CF::kDayOfMonth, "2024-02-29", 28.0 / 29);  // leap day: the last of 29
  check_phase(CF::kDayOfMonth, "2023-02-28", 27.0 / 28);
  check_phase(CF::kDayOfMonth, "2024-12-31", 30.0 / 31);
  check_phase(CF::kDayOfMonth, "2024-04-30", 29.0 / 30);
  check_phase(CF::kMonth, "2024-12-31 23:00", 11.0 / 12);
  check_phase(CF::kMonth, "2024-07-01", 6.0 / 12);
  // ISO weeks: 2021-01-01 (a Friday) is week 53 of 2020, 2024-12-30 is week 1 of 2025.
  check_phase(CF::kWeekOfYear, "2021-01-01", 52.0 / 53);
  check_phase(CF::kWeekOfYear, "2020-12-31", 52.0 / 53);
  check_phase(CF::kWeekOfYear, "2024-01-01", 0.0);
  check_phase(CF::kWeekOfYear, "2024-12-30", 0.0);
  check_phase(CF::kWeekOfYear, "2024-06-15", 23.0 / 53);
  // Before 1970 (negative seconds): 1969-12-31 23:00 was a Wednesday.
  check_phase(CF::kHourOfDay, "1969-12-31 23:00", 23.0 / 24);
  check_phase(CF::kDayOfWeek, "1969-12-31 23:00", 2.0 / 7);
}

TEST_CASE("calendar: cyclic, so Sunday sits next to Monday and December next to January") {
  const std::vector<CF> dow{CF::kDayOfWeek}, month{CF::kMonth};
  const double sun_mon = distance(row(dow, "2024-01-07"), row(dow, "2024-01-08"));
  const double mon_tue = distance(row(dow, "2024-01-08"), row(dow, "2024-01-09"));
  CHECK(sun_mon == doctest::Approx(mon_tue).epsilon(1e-6));
  CHECK(sun_mon == doctest::Approx(2 * std::sin(kPi / 7)).epsilon(1e-6));
  const double dec_jan = distance(row(month, "2023-12-01"), row(month, "2024-01-01"));
  const double jan_feb = distance(row(month, "2024-01-01"), row(month, "2024-02-01"));
  const double jan_jul = distance(row(month, "2024-01-01"), row(month, "2024-07-01"));
  CHECK(dec_jan == doctest::Approx(jan_feb).epsilon(1e-6));
  CHECK(jan_jul == doctest::Approx(2.0).epsilon(1e-6));
  CHECK(dec_jan < 0.6);
}

TEST_CASE("calendar: layout, width and names of several features") {
  const std::vector<CF> f{CF::kMonth, CF::kDayOfWeek};
  CHECK(calendar_width(f) == 4);
  CHECK(calendar_width({}) == 0);
  CHECK(calendar_names(f) ==
        std::vector<std::string>{"month.sin", "month.cos", "day_of_week.sin", "day_of_week.cos"});
  // 2024-01-01: month phase 0, Monday phase 0; 2024-04-04: month 3/12, Thursday 3/7.
  const std::vector<float> v = row(f, "2024-04-04");
  CHECK(v[0] == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(std::fabs(v[1]) < 1e-6);
  CHECK(v[2] == doctest::Approx(std::sin(2 * kPi * 3 / 7)).epsilon(1e-6));
  CHECK(v[3] == doctest::Approx(std::cos(2 * kPi * 3 / 7)).epsilon(1e-6));
  CHECK(attnfc::enum_name(CF::kWeekOfYear) == std::string("week_of_year"));
}

TEST_CASE("calendar: what each frequency allows, and auto") {
  const std::vector<CF> all{CF::kHourOfDay, CF::kDayOfWeek, CF::kDayOfMonth, CF::kMonth,
                            CF::kWeekOfYear};
  const std::vector<CF> daily{CF::kDayOfWeek, CF::kDayOfMonth, CF::kMonth, CF::kWeekOfYear};
  CHECK(allowed("1h") == all);
  CHECK(allowed("15min") == all);
  CHECK(allowed("12h") == all);
  CHECK(allowed("1d") == daily);
  CHECK(allowed("B") == daily);
  CHECK(allowed("2B") == daily);
  CHECK(allowed("5B") == std::vector<CF>{CF::kDayOfMonth, CF::kMonth, CF::kWeekOfYear});
  CHECK(allowed("1w") == std::vector<CF>{CF::kDayOfMonth, CF::kMonth, CF::kWeekOfYear});
  CHECK(allowed("30d") == std::vector<CF>{CF::kMonth});
  CHECK(allowed("1mo") == std::vector<CF>{CF::kMonth});
  CHECK(allowed("3mo") == std::vector<CF>{CF::kMonth});
  CHECK(allowed("1mo-end") == std::vector<CF>{CF::kMonth});
  CHECK(allowed("1y").empty());
  CHECK(calendar_allowed(Frequency{}).empty());
  const std::vector<std::string> autow{"auto"};
  CHECK(parse_calendar(autow, Frequency::parse("1h"), "data.calendar") == all);
  CHECK(parse_calendar(autow, Frequency::parse("1d"), "data.calendar") == daily);
  CHECK(parse_calendar(autow, Frequency::parse("B"), "data.calendar") == daily);
  CHECK(parse_calendar(autow, Frequency::parse("1mo"), "data.calendar") ==
        std::vector<CF>{CF::kMonth});
  CHECK(parse_calendar(autow, Frequency::parse("1y"), "data.calendar").empty());
  CHECK(parse_calendar({" AUTO "}, Frequency{}, "data.calendar").empty());
  CHECK(parse_calendar({}, Frequency::parse("1h"), "data.calendar").empty());
  CHECK(parse_calendar({"week_of_year", " Month "}, Frequency::parse("1d"), "data.calendar") ==
        std::vector<CF>{CF::kWeekOfYear, CF::kMonth});
}

TEST_CASE("calendar: each refused word names the key, the word and the frequency") {
  const auto parse = [](std::vector<std::string> words, Frequency f) {
    return error_of([&] { parse_calendar(words, f, "data.calendar"); });
  };
  CHECK(parse({"hour_of_day"}, Frequency::parse("1d")) ==
        "data.calendar: found 'hour_of_day', which does not vary at frequency 1d (every row "
        "would have the same value); expected what 1d allows: day_of_week, day_of_month, month, "
        "week_of_year");
  CHECK(parse({"hour_of_day"}, Frequency::parse("B")).find("frequency B") != std::string::npos);
  CHECK(parse({"day_of_week"}, Frequency::parse("1mo")).find("1mo allows: month") !=
        std::string::npos);
  CHECK(parse({"month"}, Frequency::parse("1y")).find("1y allows: none") != std::string::npos);
  CHECK(parse({"weekday"}, Frequency::parse("1h")) ==
        "data.calendar: found 'weekday', expected hour_of_day, day_of_week, day_of_month, month "
        "or week_of_year, or [\"auto\"]");
  CHECK(parse({"month", "day_of_week", "Month"}, Frequency::parse("1h")) ==
        "data.calendar: found 'month' twice, expected each calendar feature once");
  CHECK(parse({"month", "auto"}, Frequency::parse("1h")) ==
        "data.calendar: found 'auto', expected \"auto\" alone, not in a list of features");
  CHECK(parse({"month"}, Frequency{})
            .find("data.calendar: found 'month' but the frequency is "
                  "unknown") == 0);
  CHECK(error_of([] {
          parse_calendar({"x"}, Frequency::parse("1h"), "predict --calendar");
        }).find("predict --calendar: found 'x'") == 0);
}

TEST_CASE("holidays: the date column, any order and duplicates; a holiday is the whole day") {
  const TempDir tmp;
  const std::string path = tmp.write(
      "h.csv", "name,Date\nChristmas,2024-12-25\nNew year,2024-01-01 00:00\nagain,2024/12/25\n");
  const Holidays h = load_holidays(path);
  CHECK(h.source == path);
  CHECK(h.days == std::vector<int64_t>{at("2024-01-01") / 86400, at("2024-12-25") / 86400});
  CHECK_FALSE(h.empty());
  CHECK(h.contains(at("2024-12-25 00:00")));
  CHECK(h.contains(at("2024-12-25 23:59")));
  CHECK(h.contains(at("2024-12-25 23:59:59")));
  CHECK_FALSE(h.contains(at("2024-12-26 00:00")));
  CHECK_FALSE(h.contains(at("2024-12-24 23:59:59")));
  CHECK(h.contains(at("2024-01-01 12:00")));
  CHECK_FALSE(Holidays{}.contains(at("2024-12-25")));
  CHECK(Holidays{}.empty());
  // Without a date column the first column is read; a day before 1970 works too.
  const Holidays first = load_holidays(tmp.write("f.csv", "holiday,name\n1969-12-31,x\n"));
  CHECK(first.days == std::vector<int64_t>{-1});
  CHECK(first.contains(at("1969-12-31 18:00")));
  CHECK_FALSE(first.contains(at("1970-01-01 00:00")));
}

TEST_CASE("holidays: bad files name the file, and a bad cell its line and column") {
  const TempDir tmp;
  const auto load = [&](const std::string& name, const std::string& text) {
    const std::string path = tmp.write(name, text);
    return error_of([&] { load_holidays(path); });
  };
  const std::string dir = tmp.dir.string() + "/";
  CHECK(load("empty.csv", "") ==
        dir + "empty.csv: file is empty; expected a header line and data rows");
  CHECK(load("header.csv", "date\n") ==
        dir + "header.csv:2: file has a header but no data rows; expected at least one row");
  CHECK(load("bad.csv", "id,date\n1,2024-12-25\n2,2024-13-01\n") ==
        dir +
            "bad.csv:3:2: column 'date': found '2024-13-01', expected a holiday date like "
            "2024-12-25 (a time part, if any, 00:00)");
  CHECK(load("time.csv", "date\n2024-12-25 12:00\n") ==
        dir +
            "time.csv:2:1: column 'date': found '2024-12-25 12:00', expected a holiday date "
            "like 2024-12-25 (a time part, if any, 00:00)");
  CHECK(load("blank.csv", "date,name\n,x\n").find("blank.csv:2:1: column 'date': found ''") !=
        std::string::npos);
  CHECK(error_of([&] { load_holidays(dir + "absent.csv"); }).find(dir + "absent.csv") == 0);
}

TEST_CASE("holidays in data.date_format beside ISO; the error names the format") {
  const TempDir tmp;
  const std::string path = tmp.write("d.csv", "date\n25/12/2024\n2024-01-01\n01/05/2024\n");
  CHECK(load_holidays(path, "%d/%m/%Y").days == std::vector<int64_t>{at("2024-01-01") / 86400,
                                                                     at("2024-05-01") / 86400,
                                                                     at("2024-12-25") / 86400});
  CHECK(error_of([&] { load_holidays(path); }).find("found '25/12/2024'") != std::string::npos);
  const std::string bad = tmp.write("b.csv", "date\n2024.12.25\n");
  CHECK(error_of([&] { load_holidays(bad, "%d/%m/%Y"); }) ==
        bad +
            ":2:1: column 'date': found '2024.12.25', expected a holiday date in "
            "data.date_format '%d/%m/%Y' (a time part, if any, 00:00)");
}
