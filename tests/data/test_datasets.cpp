// The bundled datasets load as datasets/README.md says: rows, frequency,
// gaps and missing values.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"

using namespace attnfc::data;

namespace {
std::string dataset(const char* name) {
  return std::string(ATTNFC_SOURCE_DIR "/datasets/") + name;
}
TimeSeries load(const char* name, MissingPolicy policy = MissingPolicy::kError,
                std::vector<std::string> columns = {}) {
  CsvOptions opt;
  opt.path = dataset(name);
  opt.missing = policy;
  opt.value_columns = std::move(columns);
  return load_series(opt);
}
int64_t ts(const char* s) {
  return *parse_timestamp(s);
}
}  // namespace

TEST_CASE("ETTh1: 17,420 hourly rows, 7 channels, no gaps, standard split") {
  const TimeSeries s = load("ETTh1.csv");
  CHECK(s.rows() == 17420);
  CHECK(s.channels ==
        std::vector<std::string>{"HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"});
  CHECK(s.frequency.name() == "1h");
  CHECK(s.gaps.empty());
  CHECK(s.total_missing() == 0);
  CHECK(s.format_time(s.timestamps.front()) == "2016-07-01 00:00:00");
  CHECK(s.format_time(s.timestamps.back()) == "2018-06-26 19:00:00");
  CHECK(s.value(0, 6) == doctest::Approx(30.531));
  CHECK(s.format_time(s.future_timestamps(2)[1]) == "2018-06-26 21:00:00");

  const Split sp = standard_split("ETTh1.csv", s.rows(), 336);
  CHECK(sp.train.begin == 0);
  CHECK(sp.train.end == 8640);
  CHECK(sp.val.begin == 8640 - 336);
  CHECK(sp.val.end == 11520);
  CHECK(sp.test.begin == 11520 - 336);
  CHECK(sp.test.end == 14400);
  CHECK(s.timestamps[sp.val_targets().begin] == ts("2017-06-26 00:00:00"));
  CHECK(s.timestamps[sp.test_targets().begin] == ts("2017-10-24 00:00:00"));
  CHECK(s.timestamps[sp.test.end - 1] == ts("2018-02-20 23:00:00"));
  // Windows per part as in the reference code: len(part) - L - H + 1.
  CHECK(count_windows(sp.val, 336 + 96) == 2880 - 96 + 1);
  CHECK(count_windows(sp.train, 336 + 96) == 8640 - 336 - 96 + 1);
}

TEST_CASE(
    "exchange_rate and national_illness: the LTSF 70/10/20 split, as datasets/README.md says") {
  // Unpadded "1990/1/1 0:00" dates and no final newline.
  const TimeSeries x = load("exchange_rate.csv");
  CHECK(x.rows() == 7588);
  CHECK(x.channels == std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "OT"});
  CHECK(x.frequency.name() == "1d");
  CHECK(x.gaps.empty());
  CHECK(x.total_missing() == 0);
  CHECK(x.format_time(x.timestamps.back()) == "2010/10/10 00:00");
  // num_train = int(0.7 n) = 5311, num_test = int(0.2 n) = 1517; val/test start L early.
  const Split sx = split_by_fractions(x.rows(), 0.7, 0.2, 96);
  CHECK(sx.train.end == 5311);
  CHECK(sx.val.begin == 5311 - 96);
  CHECK(sx.val.end == 6071);
  CHECK(sx.test.begin == 6071 - 96);
  CHECK(sx.test.end == 7588);

  const TimeSeries ili = load("national_illness.csv");
  CHECK(ili.rows() == 966);
  CHECK(ili.channels.size() == 7);
  CHECK(ili.channels.front() == "% WEIGHTED ILI");
  CHECK(ili.frequency.name() == "1w");
  CHECK(ili.gaps.empty());
  CHECK(ili.value(0, 6) == 176569.0f);
  const Split si = split_by_fractions(ili.rows(), 0.7, 0.2, 104);
  CHECK(si.train.end == 676);
  CHECK(si.val_targets().size() == 97);
  CHECK(si.test_targets().size() == 193);
}

TEST_CASE("airline-passengers and monthly-sunspots: quoted YYYY-MM, CRLF, no final newline") {
  const TimeSeries a = load("airline-passengers.csv");
  CHECK(a.rows() == 144);
  CHECK(a.channels == std::vector<std::string>{"Passengers"});
  CHECK(a.frequency.name() == "1mo");
  CHECK(a.gaps.empty());
  CHECK(a.value(143, 0) == 432.0f);
  CHECK(a.format_time(a.timestamps.back()) == "1960-12");
  CHECK(a.format_time(a.future_timestamps(1)[0]) == "1961-01");

  const TimeSeries m = load("monthly-sunspots.csv");
  CHECK(m.rows() == 2820);
  CHECK(m.frequency.name() == "1mo");
  CHECK(m.gaps.empty());
  CHECK(m.total_missing() == 0);
  CHECK(m.format_time(m.timestamps.back()) == "1983-12");
  const Split sp = standard_split("monthly-sunspots.csv", m.rows(), 24);
  CHECK(sp.train.end == 1973);  // int(0.7 * 2820) in double, as in the README
  CHECK(sp.val.end == 2256);
  CHECK(sp.test.begin + sp.context == 2256);
  CHECK(m.format_time(m.timestamps[1973]) == "1913-06");
}

TEST_CASE("daily-min-temperatures: daily with the two missing leap-year days as gaps") {
  const TimeSeries s = load("daily-min-temperatures.csv");
  CHECK(s.rows() == 3650);
  CHECK(s.frequency.name() == "1d");
  REQUIRE(s.gaps.size() == 2);
  CHECK(s.total_missing_periods == 2);
  CHECK(s.gaps[0].row == 4 * 365);
  CHECK(s.format_time(s.gaps[0].before) == "1984-12-30");
  CHECK(s.format_time(s.gaps[0].after) == "1985-01-01");
  CHECK(s.gaps[0].missing_periods == 1);
  CHECK(s.format_time(s.gaps[1].before) == "1988-12-30");
  CHECK(s.total_missing() == 0);
}

TEST_CASE("pollution: composite hourly time, 2,067 NA in pm2.5, text column cbwd") {
  // The default policy refuses the NAs and says where they are.
  try {
    load("pollution.csv");
    FAIL("expected an InputError");
  } catch (const attnfc::InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("pollution.csv:2:6: column 'pm2.5': found missing value 'NA'") !=
          std::string::npos);
    CHECK(msg.find("2067 missing in pm2.5 (2067)") != std::string::npos);
  }
  const TimeSeries s = load("pollution.csv", MissingPolicy::kInterpolate);
  CHECK(s.rows() == 43824);
  CHECK(s.time_columns == std::vector<std::string>{"year", "month", "day", "hour"});
  CHECK(s.channels == std::vector<std::string>{"pm2.5", "DEWP", "TEMP", "PRES", "Iws", "Is", "Ir"});
  CHECK(s.frequency.name() == "1h");
  CHECK(s.gaps.empty());
  CHECK(s.missing_per_channel[0] == 2067);
  CHECK(s.total_missing() == 2067);
  // The first 24 hours are all NA: filled with the first observed value, flagged.
  for (size_t r = 0; r < 24; ++r) CHECK_FALSE(s.is_observed(r, 0));
  CHECK(s.is_observed(24, 0));
  CHECK(s.value(0, 0) == s.value(24, 0));
  // The 155-hour run (data rows 6318-6472) lies on the line from 4 to 45.
  CHECK(s.is_observed(6316, 0));
  CHECK_FALSE(s.is_observed(6317, 0));
  CHECK_FALSE(s.is_observed(6471, 0));
  CHECK(s.value(6316 + 78, 0) == doctest::Approx(4.0 + 41.0 * 78.0 / 156.0));
  size_t unobserved = 0;
  for (size_t r = 0; r < s.rows(); ++r) unobserved += !s.is_observed(r, 0);
  CHECK(unobserved == 2067);
  const bool all_finite =
      std::all_of(s.values.begin(), s.values.end(), [](float v) { return v == v; });
  CHECK(all_finite);

  const TimeSeries f = load("pollution.csv", MissingPolicy::kFfill, {"pm2.5", "TEMP"});
  CHECK(f.value(6400, 0) == 4.0f);  // carried forward through the long run
  CHECK_THROWS_WITH(load("pollution.csv", MissingPolicy::kMask, {"cbwd"}),
                    doctest::Contains("pollution.csv:2:10: column 'cbwd': found text 'NW'"));
}

TEST_CASE("brent-daily: business days, holidays reported as gaps") {
  const TimeSeries s = load("brent-daily.csv");
  CHECK(s.rows() == 9958);
  CHECK(s.frequency.name() == "B");
  CHECK(s.gaps.size() == 231);  // every skipped weekday (holiday), counted independently
  CHECK(s.total_missing_periods == 282);
  CHECK(s.off_grid_steps == 0);
  CHECK(s.format_time(s.timestamps.back()) == "2026-08-18");
  const auto next = s.future_timestamps(4);
  CHECK(s.format_time(next[3]) == "2026-08-24");  // Tue + 4 business days = Mon
  CsvOptions regular;
  regular.path = dataset("brent-daily.csv");
  regular.regular = true;
  CHECK_THROWS_WITH(load_series(regular),
                    doctest::Contains("found 231 gap(s) at frequency B (first: line 20: "
                                      "1987-06-12 -> 1987-06-16 (1 missing)"));
}

TEST_CASE("M4 Hourly train, converted by scripts/m4-to-long.sh: 414 series of 700 or 960 hours") {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("attnfc_m4_" + std::to_string(::getpid())))
          .string();
  const std::string cmd = "sh '" ATTNFC_SOURCE_DIR "/scripts/m4-to-long.sh' '" +
                          dataset("m4/Hourly-train.csv") + "' > '" + out + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CsvOptions opt;
  opt.path = out;
  opt.id_column = "id";
  const TimeSeries s = load_series(opt);
  std::filesystem::remove(out);
  REQUIRE(s.num_series() == 414);
  CHECK(s.rows() == 169 * 700 + 245 * 960);
  CHECK(s.frequency.name() == "1h");
  CHECK(s.gaps.empty());
  CHECK(s.channels == std::vector<std::string>{"value"});
  size_t n700 = 0, n960 = 0;
  for (const SeriesSegment& g : s.segments) {
    n700 += g.rows() == 700;
    n960 += g.rows() == 960;
  }
  CHECK(n700 == 169);
  CHECK(n960 == 245);
  CHECK(s.segments.front().id == "H1");
  CHECK(s.segments.back().id == "H414");
  CHECK(s.value(0, 0) == 605.0f);
  CHECK(s.format_time(s.timestamps[0]) == "1970-01-01 00:00:00");
  CHECK(s.describe().rfind("414 series, 353,500 rows x 1 channel, 1970-01-01 00:00:00", 0) == 0);
}
