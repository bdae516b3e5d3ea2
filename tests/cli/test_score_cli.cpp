// attnfc score, run as a user would: a forecast file beside the M4 benchmarks, and the
// inputs it must refuse with one line and exit code 2.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace {

namespace fs = std::filesystem;

// Two series of period 4 (history 40 values, horizon 4) and their long-format files.
struct ScoreFiles : cli_test::ScratchDir {
  ScoreFiles() : ScratchDir("attnfc_score_") {
    std::ofstream h(dir + "/history.csv"), a(dir + "/actual.csv");
    h << "id,time,value\n";
    a << "id,time,value\n";
    for (const char* id : {"A", "B"}) {
      const double base = id[0] == 'A' ? 10 : 50;
      for (int t = 0; t < 44; ++t) {
        const double v = base + 0.1 * t + 3 * ((t % 4) - 1.5) + 0.2 * std::sin(t);
        (t < 40 ? h : a) << id << "," << t << "," << v << "\n";
      }
    }
    write("forecast.csv",
          "id,time,value\nA,40,8\nA,41,12\nA,42,15\nA,43,18\n"
          "B,40,48\nB,41,52\nB,42,55\nB,43,58\n");
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  }
  std::string args(const std::string& forecast) const {
    return "score --forecast " + forecast + " --actual " + dir + "/actual.csv --history " + dir +
           "/history.csv --id-column id --season 4";
  }
};

}  // namespace

TEST_CASE("score: the table, the per-series CSV and the JSON") {
  const ScoreFiles f;
  const cli_test::Run r = cli_test::run_attnfc(f.args(f.dir + "/forecast.csv") + " --out " + f.dir +
                                               "/m.json --per-series " + f.dir + "/ps.csv");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  for (const char* row : {"attnfc", "Naive1", "sNaive", "Naive2", "Theta", "sMAPE", "OWA"}) {
    CHECK_MESSAGE(cli_test::contains(r.out, row), r.out);
  }
  CHECK(cli_test::contains(r.out, "2 series, 8 forecast values, season 4"));
  const std::string csv = cli_test::slurp(f.dir + "/ps.csv");
  CHECK(cli_test::contains(csv, "id,horizon,attnfc_smape,attnfc_mase,Naive1_smape"));
  CHECK(cli_test::contains(csv, "\nB,4,"));
  const nlohmann::json j = nlohmann::json::parse(cli_test::slurp(f.dir + "/m.json"));
  CHECK(j["series"] == 2);
  CHECK(j["methods"]["Naive2"]["owa"].get<double>() == doctest::Approx(1.0));
  CHECK(j["per_series"].size() == 2);
  CHECK(j["methods"]["attnfc"]["smape"].get<double>() > 0);
}

// The file with ';' between fields and ',' as the decimal mark.
std::string to_semicolon_comma(const std::string& text) {
  std::string out = text;
  for (char& c : out) c = c == ',' ? ';' : c == '.' ? ',' : c;
  return out;
}

TEST_CASE("score: files with a decimal comma, read with --delimiter and --decimal") {
  const ScoreFiles f;
  const std::string base = f.dir + "/m.json", comma = f.dir + "/m2.json";
  REQUIRE(cli_test::run_attnfc(f.args(f.dir + "/forecast.csv") + " --out " + base).code == 0);
  for (const char* name : {"forecast.csv", "actual.csv", "history.csv"})
    f.write(std::string("c_") + name,
            to_semicolon_comma(cli_test::slurp(f.dir + "/" + std::string(name))));
  const std::string args = "score --forecast " + f.dir + "/c_forecast.csv --actual " + f.dir +
                           "/c_actual.csv --history " + f.dir +
                           "/c_history.csv --id-column id --season 4 --delimiter ';' ";
  const cli_test::Run r = cli_test::run_attnfc(args + "--decimal , --out " + comma);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const auto a = nlohmann::json::parse(cli_test::slurp(base)),
             b = nlohmann::json::parse(cli_test::slurp(comma));
  CHECK(b["methods"]["attnfc"]["smape"] == a["methods"]["attnfc"]["smape"]);
  CHECK(b["methods"]["Theta"]["owa"] == a["methods"]["Theta"]["owa"]);
  // Without --decimal the same cells are no numbers: one line naming the cell.
  const cli_test::Run plain = cli_test::run_attnfc(args);
  CHECK(plain.code == 2);
  CHECK(cli_test::contains(plain.out, "c_actual.csv:2:3: column 'value': series 'A': found '"));
}

TEST_CASE("score: ids, lengths and values that do not line up are refused (exit 2)") {
  const ScoreFiles f;
  const auto refused = [&](const std::string& name, const std::string& text,
                           const std::string& expect) {
    const cli_test::Run r = cli_test::run_attnfc(f.args(f.write(name, text)));
    CHECK_MESSAGE(r.code == 2, r.out);
    CHECK_MESSAGE(cli_test::contains(r.out, expect), r.out);
  };
  refused("unknown.csv", "id,time,value\nA,40,8\nA,41,1\nA,42,1\nA,43,1\nC,40,1\n",
          "unknown.csv:6: id 'C' is not in " + f.dir + "/actual.csv");
  refused("short.csv", "id,time,value\nA,40,8\nA,41,12\nB,40,1\nB,41,1\nB,42,1\nB,43,1\n",
          "short.csv:2: id 'A' has 2 forecast values; " + f.dir + "/actual.csv has 4 for it");
  refused("nan.csv", "id,time,value\nA,40,8\nA,41,nan\n",
          "nan.csv:3:3: column 'value': series 'A': found a missing value, expected a number");
  refused("missing_b.csv", "id,time,value\nA,40,8\nA,41,1\nA,42,1\nA,43,1\n",
          "id 'B' has no forecast in");
  refused("noid.csv", "series,time,value\nA,40,8\n", "id");
}

// The forecast file with NeuralForecast-named bounds: 95% wide enough to cover every actual
// value, 80% of width 0.
std::string with_intervals(const std::string& forecast_csv) {
  std::string out = "id,time,value,value-lo-80,value-hi-80,value-lo-95,value-hi-95\n";
  std::istringstream in(forecast_csv);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const std::string v = line.substr(line.rfind(',') + 1);
    const double x = std::stod(v);
    out +=
        line + "," + v + "," + v + "," + std::to_string(x - 9) + "," + std::to_string(x + 9) + "\n";
  }
  return out;
}

TEST_CASE("score: interval columns get M4's MSIS, coverage and ACD beside seasonal naive's") {
  const ScoreFiles f;
  const std::string fc =
      f.write("fc_iv.csv", with_intervals(cli_test::slurp(f.dir + "/forecast.csv")));
  const cli_test::Run r = cli_test::run_attnfc(f.args(fc) + " --out " + f.dir + "/iv.json" +
                                               " --per-series " + f.dir + "/iv.csv");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK_MESSAGE(cli_test::contains(r.out, "MSIS"), r.out);
  const nlohmann::json j = nlohmann::json::parse(cli_test::slurp(f.dir + "/iv.json"));
  const nlohmann::json& wide = j["intervals"]["95"]["attnfc"];
  CHECK(wide["coverage"].get<double>() == 1.0);
  CHECK(wide["acd"].get<double>() == doctest::Approx(0.05));
  CHECK(wide["level"].get<double>() == doctest::Approx(0.95));
  // Every value covered: MSIS is the width over the scale, more than 18 / largest scale.
  CHECK(wide["msis"].get<double>() > 0);
  CHECK(j["intervals"]["80"]["attnfc"]["coverage"].get<double>() == 0.0);
  CHECK(j["intervals"]["95"]["sNaive"]["msis"].get<double>() > 0);
  CHECK(j["per_series"][0]["attnfc"]["msis95"].get<double>() > 0);
  CHECK(cli_test::contains(cli_test::slurp(f.dir + "/iv.csv"),
                           "attnfc_msis80,sNaive_msis80,attnfc_msis95,sNaive_msis95\n"));
  // The point scores are those of the file without bounds.
  REQUIRE(
      cli_test::run_attnfc(f.args(f.dir + "/forecast.csv") + " --out " + f.dir + "/p.json").code ==
      0);
  const nlohmann::json p = nlohmann::json::parse(cli_test::slurp(f.dir + "/p.json"));
  CHECK(p["methods"]["attnfc"] == j["methods"]["attnfc"]);
  CHECK_FALSE(p.contains("intervals"));
}

// The forecast file of ScoreFiles with extra columns `header` and `cells` on every row.
std::string with_columns(const ScoreFiles& f, const std::string& header, const std::string& cells) {
  std::istringstream in(cli_test::slurp(f.dir + "/forecast.csv"));
  std::string line, out;
  std::getline(in, line);
  out = line + "," + header + "\n";
  while (std::getline(in, line)) out += line + "," + cells + "\n";
  return out;
}

TEST_CASE("score: a bound column without its mirror is refused (exit 2)") {
  const ScoreFiles f;
  const cli_test::Run r =
      cli_test::run_attnfc(f.args(f.write("lonely.csv", with_columns(f, "value-lo-95", "7"))));
  CHECK(r.code == 2);
  CHECK_MESSAGE(cli_test::contains(r.out,
                                   "lonely.csv:1: column 'value-lo-95' has no mirror "
                                   "'value-hi-95'; expected both bounds of the interval"),
                r.out);
  const cli_test::Run odd = cli_test::run_attnfc(
      f.args(f.write("odd.csv", with_columns(f, "value-hi-x,value-lo-x", "7,6"))));
  CHECK(odd.code == 2);
  CHECK_MESSAGE(cli_test::contains(odd.out,
                                   "column 'value-hi-x': expected value-hi-N with N a "
                                   "number in (0, 100), e.g. value-hi-95"),
                odd.out);
  for (const char* label : {"1e1", "0x10", " 95", "100", "0"}) {
    const std::string header = std::string("value-lo-") + label + ",value-hi-" + label;
    const cli_test::Run bad =
        cli_test::run_attnfc(f.args(f.write("bad.csv", with_columns(f, header, "7,9"))));
    CHECK_MESSAGE(bad.code == 2, label);
  }
  // A lower bound above its upper bound: the series and the step are named.
  const std::string crossed = with_columns(f, "value-lo-95,value-hi-95", "7,9");
  const std::string swapped = crossed.substr(0, crossed.rfind("7,9")) + "9,7\n";
  const cli_test::Run x = cli_test::run_attnfc(f.args(f.write("crossed.csv", swapped)));
  CHECK(x.code == 2);
  CHECK_MESSAGE(cli_test::contains(x.out,
                                   "crossed.csv:6: id 'B' step 4: value-lo-95 9.000000 is "
                                   "above value-hi-95 7.000000; expected the lower bound "
                                   "at or below the upper"),
                x.out);
}
