// The README's path for a user's own CSV: copy configs/default.json, change data.path and
// data.columns, train. It has to work on a short monthly file (sizes "auto"), and what
// cannot work has to name the config key to change.
#include <doctest/doctest.h>

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

// configs/default.json pointed at `csv` (columns `columns`), with `model` edits, written
// to dir/config.json; returns its path.
std::string copied_default(const std::string& dir, const std::string& csv, const json& columns,
                           const json& model = json::object()) {
  json c = attnfc::load_json_file(std::string(ATTNFC_SOURCE_DIR) + "/configs/default.json");
  c["data"]["path"] = csv;
  c["data"]["columns"] = columns;
  c["model"].update(model);
  c["train"]["epochs"] = 1;
  std::ofstream(dir + "/config.json") << c.dump(2);
  return dir + "/config.json";
}

// The first `rows` months of the bundled airline file.
std::string airline_head(const std::string& dir, int rows) {
  std::ifstream in(std::string(ATTNFC_SOURCE_DIR) + "/datasets/airline-passengers.csv");
  const std::string csv = dir + "/monthly.csv";
  std::ofstream out(csv);
  std::string line;
  for (int i = 0; i <= rows && std::getline(in, line); ++i) out << line << "\n";
  return csv;
}

}  // namespace

TEST_CASE("newcomer: a copy of default.json trains on a 60-row monthly file") {
  cli_test::ScratchDir s("attnfc_newcomer_");
  const std::string cfg = copied_default(s.dir, airline_head(s.dir, 60), {"Passengers"});
  const Run r = run_attnfc("--log-level info train --config " + cfg + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(contains(r.out, "sizes from the data (1mo data, M4's horizon; 60 rows"));
  const json resolved = attnfc::load_json_file(s.dir + "/run/config.json");
  CHECK(resolved["model"]["horizon"] == 6);
  CHECK(resolved["model"]["context_length"] == 18);
  CHECK(resolved["data"]["split"] == "auto");
  const Run p = run_attnfc("predict --model " + s.dir + "/run/model.safetensors -i " + s.dir +
                           "/monthly.csv -o " + s.dir + "/forecast.csv");
  REQUIRE_MESSAGE(p.code == 0, p.out);
}

TEST_CASE("newcomer: sizes and splits that cannot fit name the key and a value that works") {
  cli_test::ScratchDir s("attnfc_newcomer_keys_");
  const std::string csv = airline_head(s.dir, 60);
  Run r =
      run_attnfc("train --config " + copied_default(s.dir, csv, {"Passengers"}, {{"horizon", 24}}) +
                 " --out " + s.dir + "/a");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "model.horizon: found 24"));
  CHECK(contains(r.out, "expected at most 6"));
  r = run_attnfc("train --config " + copied_default(s.dir, csv, {"Passengers"}) + " --out " +
                 s.dir + "/b --set data.split=etth");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "data.split: ETTh split: needs 14400 rows, found 60"));
  CHECK(contains(r.out, "\"auto\""));
}

TEST_CASE("newcomer: missing values name data.missing, the key that accepts them") {
  cli_test::ScratchDir s("attnfc_newcomer_na_");
  const std::string csv = s.dir + "/gappy.csv";
  std::ofstream(csv) << "date,v\n2020-01-01,1\n2020-01-02,NA\n2020-01-03,3\n";
  const Run r = run_attnfc("train --config " + copied_default(s.dir, csv, {"v"}) + " --out " +
                           s.dir + "/run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "found missing value 'NA'"));
  CHECK(contains(r.out, "choose data.missing in the config: ffill, interpolate or mask"));
}
