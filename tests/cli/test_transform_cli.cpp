// data.transform through the commands a user runs: a log model trains, stores its transform
// with the model, forecasts in the data's units (every series, the unseen one too), and
// every value it cannot take is refused with file, line and column (exit 2).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

// Series "a" (300 rows) and "b" (250 rows, 10x the scale), positive and multiplicative
// (a daily cycle that scales with the level), and "c" (40 rows: too short to train on);
// a's first value is `first_value`.
std::string write_positive_panel(const std::string& dir, double first_value) {
  const double scale[] = {1, 10, 2};
  return cli_test::write_long_panel(
      dir + "/pos" + std::to_string(first_value > 0) + ".csv", {"a", "b", "c"}, {300, 250, 40},
      [&](int k, int t) {
        if (t == 0 && k == 0) return first_value;
        return scale[k] * std::exp(1 + 0.8 * std::sin(2 * M_PI * t / 24) + 0.002 * t);
      });
}

std::string write_transform_config(const std::string& dir, const std::string& csv) {
  return cli_test::write_panel_config(dir, "log.json", csv, R"("transform": "log",)",
                                      R"("quantiles": [0.1, 0.5, 0.9],)", 2, 8);
}

struct TransformScratch : cli_test::ScratchDir {
  TransformScratch() : ScratchDir("attnfc_transform_") {}
};

}  // namespace

TEST_CASE("data.transform log: trained, stored, forecast in the data's units, every level > 0") {
  TransformScratch s;
  const std::string csv = write_positive_panel(s.dir, 2.5),
                    config = write_transform_config(s.dir, csv);
  const Run train = run_attnfc("train --config " + config + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  CHECK(contains(slurp(s.dir + "/run/config.json"), "\"transform\": \"log\""));
  const std::string model = s.dir + "/run/model.safetensors";
  // Each series' scaler carries it (JSON inside the header's metadata strings).
  CHECK(contains(slurp(model), R"(\"power\":[0.0],\"scale\")"));

  const Run predict = run_attnfc("predict -m " + model + " -i " + csv + " -o " + s.dir + "/f.csv");
  REQUIRE_MESSAGE(predict.code == 0, predict.out);
  std::istringstream fc(slurp(s.dir + "/f.csv"));
  std::string line;
  std::getline(fc, line);
  CHECK(line == "id,time,load,load-lo-80,load-hi-80");
  int rows = 0;
  double b_sum = 0;
  while (std::getline(fc, line)) {
    const size_t v = line.find(',', line.find(',') + 1) + 1;
    double lo = 0, mid = 0, hi = 0;
    REQUIRE(std::sscanf(line.c_str() + v, "%lf,%lf,%lf", &mid, &lo, &hi) == 3);
    CHECK_MESSAGE((0 < lo && lo <= mid && mid <= hi && std::isfinite(hi)), line);
    if (line[0] == 'b') b_sum += mid;
    ++rows;
  }
  CHECK(rows == 24);  // a, b and the unseen c (scaled by a log scaler fit on its history)
  // b's level is about 10 e^(1 + 0.5) ~ 45 at its end: back in the data's units.
  CHECK(b_sum / 8 == doctest::Approx(45).epsilon(0.5));

  const Run eval = run_attnfc("evaluate -m " + model + " -i " + csv);
  CHECK_MESSAGE(eval.code == 0, eval.out);
}

TEST_CASE("data.transform: values and settings it cannot take are exit 2, named") {
  TransformScratch s;
  const std::string good = write_positive_panel(s.dir, 2.5);
  const std::string zero = write_positive_panel(s.dir, 0.0);
  const std::string config = write_transform_config(s.dir, zero);
  // Training data: the 0 of series a on line 2, column 3.
  const Run train = run_attnfc("train --config " + config + " --out " + s.dir + "/bad");
  CHECK(train.code == 2);
  CHECK_MESSAGE(contains(train.out, zero + ":2:3: column 'load': found 0, expected a value > 0 "
                                           "(data.transform takes the logarithm of the targets)"),
                train.out);
  // A power (sqrt) takes 0.
  const Run sqrt = run_attnfc("train --config " + config + " --set data.transform=sqrt --out " +
                              s.dir + "/sqrt");
  CHECK_MESSAGE(sqrt.code == 0, sqrt.out);

  // The same check guards predict's input for a model trained on good data.
  const Run ok = run_attnfc("train --config " + config + " --set data.path=" + good + " --out " +
                            s.dir + "/run");
  REQUIRE_MESSAGE(ok.code == 0, ok.out);
  const Run predict = run_attnfc("predict -m " + s.dir + "/run/model.safetensors -i " + zero +
                                 " -o " + s.dir + "/f.csv");
  CHECK(predict.code == 2);
  CHECK(contains(predict.out, zero + ":2:3: column 'load': found 0, expected a value > 0"));
  CHECK_FALSE(std::ifstream(s.dir + "/f.csv").good());

  const Run name = run_attnfc("train --config " + config + " --set data.transform=exp");
  CHECK(name.code == 2);
  CHECK(contains(name.out, "data.transform"));
  CHECK(contains(name.out, "\"log\""));
  const Run lambda =
      run_attnfc("train --config " + config + " --set 'data.transform={\"box_cox\": 2}'");
  CHECK(lambda.code == 2);
  CHECK(contains(lambda.out, "data.transform.box_cox"));
  const Run key =
      run_attnfc("train --config " + config + " --set 'data.transform={\"lambda\": 0.5}'");
  CHECK(key.code == 2);
  CHECK(contains(key.out, "box_cox"));
}
