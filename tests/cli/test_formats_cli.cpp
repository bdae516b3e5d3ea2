// A German-style file end to end: semicolons, decimal commas, a "Datum" column of dotted
// dates. And the errors a newcomer meets first: an ambiguous day/month order, a bad
// thousands grouping, a bad format key, each exit code 2 naming the key to set.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "attnfc/base/json_config.hpp"
#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using nlohmann::json;

namespace {

// configs/default.json pointed at `csv`, with `data` edits and one epoch; returns its path.
std::string config_for(const std::string& dir, const std::string& csv, const json& data) {
  json c = attnfc::load_json_file(std::string(ATTNFC_SOURCE_DIR) + "/configs/default.json");
  c["data"]["path"] = csv;
  c["data"].update(data);
  c["train"]["epochs"] = 1;
  std::ofstream(dir + "/config.json") << c.dump(2);
  return dir + "/config.json";
}

// 60 months of "01.MM.YYYY;123,45" under "Datum;Umsatz".
std::string german_monthly(const std::string& dir) {
  const std::string csv = dir + "/umsatz.csv";
  std::ofstream out(csv);
  out << "Datum;Umsatz\n";
  for (int i = 0; i < 60; ++i) {
    char line[64];
    std::snprintf(line, sizeof line, "01.%02d.%d;%d,%02d\n", i % 12 + 1, 2018 + i / 12,
                  100 + (i % 12) * 7 + i, (i * 37) % 100);
    out << line;
  }
  return csv;
}

}  // namespace

TEST_CASE("formats cli: train on a semicolon file with decimal commas and a Datum column") {
  cli_test::ScratchDir s("attnfc_formats_");
  const std::string csv = german_monthly(s.dir);
  const std::string cfg =
      config_for(s.dir, csv, {{"delimiter", ";"}, {"decimal", ","}, {"columns", {"Umsatz"}}});
  const Run r = run_attnfc("--log-level info train --config " + cfg + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(contains(r.out, "1mo"));
  const json resolved = attnfc::load_json_file(s.dir + "/run/config.json");
  CHECK(resolved["data"]["decimal"] == ",");
  const Run p = run_attnfc("predict --model " + s.dir + "/run/model.safetensors -i " + csv +
                           " -o " + s.dir + "/forecast.csv");
  REQUIRE_MESSAGE(p.code == 0, p.out);
  // The forecast's times are written the way the input wrote them.
  CHECK(contains(cli_test::slurp(s.dir + "/forecast.csv"), "01.01.2023"));
  // Without data.decimal the values are text: the error shows one.
  const Run plain = run_attnfc(
      "train --config " + config_for(s.dir, csv, {{"delimiter", ";"}, {"columns", json::array()}}) +
      " --out " + s.dir + "/plain");
  CHECK(plain.code == 2);
  CHECK(contains(plain.out, "holds text such as '"));
  // inspect takes the same settings as flags.
  const Run i = run_attnfc("inspect " + csv + " --delimiter ';' --decimal ,");
  REQUIRE_MESSAGE(i.code == 0, i.out);
  CHECK(contains(i.out, "Umsatz"));
}

TEST_CASE("formats cli: an ambiguous day/month order is exit 2 naming data.date_format") {
  cli_test::ScratchDir s("attnfc_formats_ambiguous_");
  const std::string csv = s.dir + "/days.csv";
  std::ofstream(csv) << "date,v\n01/02/2023,1\n02/02/2023,2\n03/02/2023,3\n";
  Run r = run_attnfc("train --config " + config_for(s.dir, csv, {{"columns", {"v"}}}) + " --out " +
                     s.dir + "/run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "days.csv:2:1: column 'date': found dates like '01/02/2023'"));
  CHECK(contains(r.out, "data.date_format set to \"%d/%m/%Y\" (day first) or \"%m/%d/%Y\""));
  r = run_attnfc("inspect " + csv);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--date-format set to \"%d/%m/%Y\""));
  r = run_attnfc("inspect " + csv + " --date-format %d/%m/%Y");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(contains(r.out, "01/02/2023"));
}

TEST_CASE("formats cli: bad format settings and a bad grouping are exit 2 naming the key") {
  cli_test::ScratchDir s("attnfc_formats_keys_");
  const std::string csv = s.dir + "/v.csv";
  std::ofstream(csv) << "date,v\n2023-01-01,\"1,234\"\n2023-01-02,\"12,34\"\n";
  Run r = run_attnfc("train --config " +
                     config_for(s.dir, csv, {{"thousands", ","}, {"columns", {"v"}}}) + " --out " +
                     s.dir + "/a");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "data.thousands: found \",\", the field delimiter too"));
  r = run_attnfc(
      "train --config " +
      config_for(s.dir, csv, {{"decimal", ","}, {"thousands", ","}, {"columns", {"v"}}}) +
      " --out " + s.dir + "/b");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "data.thousands: found \",\", the decimal mark too (data.decimal)"));
  r = run_attnfc("inspect " + csv + " --thousands ,");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--thousands: found \",\", the field delimiter too"));
  std::ofstream(csv) << "date;v\n2023-01-01;1,234\n2023-01-02;12,34\n";
  r = run_attnfc("inspect " + csv + " --delimiter ';' --thousands ,");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "v.csv:3:2: column 'v': found '12,34', expected groups of 3 digits"));
}
