// attnfc inspect, run as a user would: the bundled datasets and files it must refuse.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include "cli_run.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/text.hpp"

using attnfc_test::contains;

namespace {
using Result = cli_test::Run;
Result inspect(const std::string& args) {
  return cli_test::run_attnfc("inspect " + args);
}
std::string dataset(const char* name) {
  return std::string(ATTNFC_SOURCE_DIR "/datasets/") + name;
}
// A temporary CSV that removes itself.
struct TempCsv {
  std::string path;
  // In a folder of this process: ctest runs cli@avx512 and cli@avx2 at once.
  explicit TempCsv(const std::string& name, const std::string& text)
      : path(scratch().dir + "/" + name) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static const cli_test::ScratchDir& scratch() {
    static const cli_test::ScratchDir dir("attnfc_inspect_");
    return dir;
  }
  ~TempCsv() { std::filesystem::remove(path); }
};
}  // namespace

TEST_CASE("inspect ETTh1: rows, time range, frequency, columns, stats and sparklines") {
  const Result r = inspect(dataset("ETTh1.csv"));
  CHECK(r.code == 0);
  CHECK(contains(r.out, "rows       17420"));
  CHECK(contains(r.out, "time       date: 2016-07-01 00:00:00 .. 2018-06-26 19:00:00"));
  CHECK(contains(r.out, "frequency  1h (inferred)"));
  CHECK(contains(r.out, "gaps       none"));
  CHECK(contains(r.out, "missing    0 values"));
  CHECK(contains(r.out, "columns    8 (7 value channels)"));
  CHECK(contains(r.out, "OT         numeric  value  0              -4.08     46.01"));
  CHECK(contains(r.out, "█"));
}

TEST_CASE("inspect pollution: composite time, NA counts, the text column and the index") {
  const Result r = inspect(dataset("pollution.csv"));
  CHECK(r.code == 0);
  CHECK(contains(r.out, "rows       43824"));
  CHECK(contains(
      r.out,
      "time       year, month, day, hour (composite): 2010-01-01 00:00 .. 2014-12-31 23:00"));
  CHECK(contains(r.out,
                 "missing    2067 values (train refuses them unless the config sets data.missing"));
  CHECK(contains(r.out, "pm2.5      numeric  value  2067 (4.717%)  0         994"));
  CHECK(contains(r.out, "cbwd       text     -      0              e.g. 'NW' (line 2)"));
  CHECK(contains(r.out, "No         numeric  -"));
  const Result two =
      inspect(dataset("pollution.csv") + " --columns pm2.5,TEMP --missing interpolate");
  CHECK(two.code == 0);
  CHECK(contains(two.out, "(2 value channels)"));
  CHECK(contains(two.out, "filled by policy 'interpolate'"));
}

TEST_CASE("inspect brent and daily temperatures: business days and gaps") {
  const Result b = inspect(dataset("brent-daily.csv"));
  CHECK(b.code == 0);
  CHECK(contains(b.out, "frequency  B (inferred)"));
  CHECK(contains(b.out, "gaps       231 (282 missing periods)"));
  CHECK(contains(b.out, "line 20: 1987-06-12 -> 1987-06-16 (1 missing)"));
  const Result d = inspect(dataset("daily-min-temperatures.csv"));
  CHECK(contains(d.out, "gaps       2 (2 missing periods)"));
  CHECK(contains(d.out, "1984-12-30 -> 1985-01-01"));
  const Result a = inspect(dataset("airline-passengers.csv") + " --time-column Month --width 12");
  CHECK(a.code == 0);
  CHECK(contains(a.out, "frequency  1mo (inferred)"));
  CHECK(contains(a.out, "time       Month: 1949-01 .. 1960-12"));
  const Result given = inspect(dataset("airline-passengers.csv") + " --frequency 3mo");
  CHECK(given.code == 0);
  CHECK(contains(given.out, "frequency  3mo (given)"));
  CHECK(contains(given.out, "gaps       143 (0 missing periods, 143 off the grid)"));
  const Result policy = inspect(dataset("pollution.csv") + " --missing zero");
  CHECK(policy.code == 2);
  CHECK(contains(policy.out,
                 "missing-value policy: found 'zero', expected error, ffill, interpolate or mask"));
}

TEST_CASE("inspect with another delimiter and an explicit composite time") {
  const TempCsv f("attnfc_inspect_semi.csv", "y;m;v\n2020;1;1,5\n2020;2;2\n2020;3;3\n");
  const Result bad_numbers = inspect(f.path + " --delimiter ';' --time-column y,m");
  CHECK(bad_numbers.code == 2);
  CHECK(contains(bad_numbers.out,
                 "attnfc_inspect_semi.csv:1: found no numeric value columns among: "
                 "y, m, v (column 'v' holds text such as '1,5' on line 2)"));
  const Result named = inspect(f.path + " --delimiter ';' --time-column y,m --columns v");
  CHECK(named.code == 2);
  CHECK(contains(
      named.out,
      "attnfc_inspect_semi.csv:2:3: column 'v': found text '1,5', expected a numeric column"));
  const TempCsv g("attnfc_inspect_tab.csv", "y\tm\tv\n2020\t1\t1.5\n2020\t2\t2\n2020\t3\t3\n");
  const Result ok = inspect(g.path + " --delimiter tab --time-column y,m");
  CHECK(ok.code == 0);
  CHECK(contains(ok.out, "frequency  1mo"));
  CHECK(contains(ok.out, "time       y, m (composite): 2020-01 .. 2020-03"));
}

TEST_CASE("inspect exits 2 with one error line for files it cannot read") {
  const Result missing = inspect("/nonexistent/data.csv");
  CHECK(missing.code == 2);
  CHECK(contains(missing.out, "/nonexistent/data.csv: cannot open: No such file or directory"));
  const TempCsv empty("attnfc_inspect_empty.csv", "");
  const Result e = inspect(empty.path);
  CHECK(e.code == 2);
  CHECK(contains(e.out, "file is empty"));
  const TempCsv ragged("attnfc_inspect_ragged.csv", "date,v\n2020-01-01,1\n2020-01-02,2,3\n");
  const Result r = inspect(ragged.path);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "attnfc_inspect_ragged.csv:3:3: found 3 fields, expected 2"));
  const Result col = inspect(dataset("ETTh1.csv") + " --columns nope");
  CHECK(col.code == 2);
  CHECK(contains(col.out, "no column named 'nope'; expected one of: date, HUFL"));
  const Result delim = inspect(dataset("ETTh1.csv") + " --delimiter ab");
  CHECK(delim.code == 2);
  CHECK(contains(delim.out, "--delimiter: found 'ab'"));
}

TEST_CASE("inspect --id-column: a long file's series count, lengths and per-series gaps") {
  const TempCsv csv("attnfc_inspect_long.csv",
                    "id,date,v\nA,2020-01-01,1\nB,2020-01-01,5\nA,2020-01-03,2\n"
                    "B,2020-01-02,6\nB,2020-01-03,7\n");
  const Result r = inspect(csv.path + " --id-column id");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "series     2 (id column id; rows per series: min 2, median 3, max 3)"));
  CHECK(contains(r.out, "line 4 (series A): 2020-01-01 -> 2020-01-03 (1 missing)"));
  CHECK(contains(r.out, "id         text     id "));
  const Result bad = inspect(csv.path + " --id-column store");
  CHECK(bad.code == 2);
  CHECK(contains(bad.out, "no column named 'store'; expected one of: id, date, v"));
}
