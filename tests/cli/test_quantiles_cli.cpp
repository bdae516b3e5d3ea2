// Quantile forecasts (model.quantiles) as a user runs them: predict writes the point
// forecast and the intervals under NeuralForecast's column names, every interval ordered
// around the point; bad levels are refused naming the key, exit 2.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;

TEST_CASE("quantiles: predict writes the point and the intervals, ordered, per row") {
  cli_test::ScratchDir s("attnfc_quantiles_");
  const std::string csv = cli_test::write_etth1_head(s.dir, 701);
  const std::string model = cli_test::train_micro_model(
      s.dir, csv, "");  // trains dir/run; the quantile run below overrides the model keys
  const Run train =
      run_attnfc("train --config " + s.dir + "/micro.json --set " +
                 "'model.quantiles=[0.025,0.1,0.3,0.5,0.9,0.975]' --out " + s.dir + "/q");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const Run p = run_attnfc("predict -m " + s.dir + "/q/model.safetensors -i " + csv);
  REQUIRE_MESSAGE(p.code == 0, p.out);
  CHECK(contains(p.out, "date,OT,OT-lo-95,OT-lo-80,OT-q0.3,OT-hi-80,OT-hi-95\n"));
  std::istringstream lines(p.out);
  std::string line;
  std::getline(lines, line);  // header
  int rows = 0;
  while (std::getline(lines, line) && line.find(',') != std::string::npos) {
    std::vector<double> v;
    std::istringstream cells(line.substr(line.find(',') + 1));
    for (std::string c; std::getline(cells, c, ',');) v.push_back(std::atof(c.c_str()));
    REQUIRE(v.size() == 6);
    // point, lo-95, lo-80, q0.3, hi-80, hi-95: the levels increase, the point sits inside.
    CHECK(v[1] < v[2]);
    CHECK(v[2] < v[3]);
    CHECK(v[3] < v[0]);
    CHECK(v[0] < v[4]);
    CHECK(v[4] < v[5]);
    ++rows;
  }
  CHECK(rows == 8);
  // --level picks intervals; one the model does not have, or --level on a point model, is
  // refused naming the flag and what the model has.
  const std::string qm = " -m " + s.dir + "/q/model.safetensors -i " + csv;
  const Run only80 = run_attnfc("predict" + qm + " --level 80");
  REQUIRE_MESSAGE(only80.code == 0, only80.out);
  CHECK(contains(only80.out, "date,OT,OT-lo-80,OT-hi-80\n"));
  const Run bad90 = run_attnfc("predict" + qm + " --level 80,90");
  CHECK(bad90.code == 2);
  CHECK_MESSAGE(contains(bad90.out, "--level: found '90'"), bad90.out);
  CHECK_MESSAGE(contains(bad90.out, "has the intervals 80, 95"), bad90.out);
  const Run point = run_attnfc("predict -m " + model + " -i " + csv + " --level 80");
  CHECK(point.code == 2);
  CHECK_MESSAGE(contains(point.out, "forecasts points only"), point.out);
  // evaluate scores the levels beside the point metrics, on the same windows.
  const Run e = run_attnfc("evaluate -m " + s.dir + "/q/model.safetensors -i " + csv + " --json " +
                           s.dir + "/e.json");
  REQUIRE_MESSAGE(e.code == 0, e.out);
  CHECK(contains(e.out, "attnfc intervals (original units): wQL "));
  CHECK(contains(e.out, "80%: coverage "));
  CHECK(contains(e.out, "95%: coverage "));
  // ... beside baselines with intervals of their own (residual quantiles, split conformal).
  CHECK(contains(e.out, "nlinear intervals (original units)"));
  CHECK(contains(e.out, "seasonal-naive("));
  CHECK(!contains(e.out, "repeat-last intervals"));
  CHECK(contains(cli_test::slurp(s.dir + "/e.json"), "\"msis\""));
  // Calibrated on validation: stored with the model, scored beside the raw intervals.
  const Run cal = run_attnfc("train --config " + s.dir + "/micro.json --set " +
                             "'model.quantiles=[0.1,0.5,0.9]' --set train.calibrate=conformal " +
                             "--out " + s.dir + "/c");
  REQUIRE_MESSAGE(cal.code == 0, cal.out);
  const Run ce = run_attnfc("evaluate -m " + s.dir + "/c/model.safetensors -i " + csv);
  REQUIRE_MESSAGE(ce.code == 0, ce.out);
  CHECK(contains(ce.out, "attnfc-calibrated intervals (original units)"));
  // predict applies the correction; --uncalibrated writes the intervals as trained (the same
  // point), and is refused for a model without calibration.
  const std::string cm = " -m " + s.dir + "/c/model.safetensors -i " + csv;
  const Run calibrated = run_attnfc("predict" + cm),
            raw = run_attnfc("predict" + cm + " --uncalibrated");
  REQUIRE_MESSAGE(raw.code == 0, raw.out);
  CHECK(raw.out != calibrated.out);
  const auto first_point = [](const std::string& out) {
    const size_t row = out.find('\n') + 1, a = out.find(',', row) + 1;
    return out.substr(a, out.find(',', a) - a);
  };
  CHECK(first_point(raw.out) == first_point(calibrated.out));
  // The scaled method: the same point, other intervals, and the model file says which.
  const Run sc =
      run_attnfc("train --config " + s.dir + "/micro.json --set " +
                 "'model.quantiles=[0.1,0.5,0.9]' --set train.calibrate=conformal_scaled" +
                 " --out " + s.dir + "/cs");
  REQUIRE_MESSAGE(sc.code == 0, sc.out);
  const Run scaled = run_attnfc("predict -m " + s.dir + "/cs/model.safetensors -i " + csv);
  REQUIRE_MESSAGE(scaled.code == 0, scaled.out);
  CHECK(first_point(scaled.out) == first_point(calibrated.out));
  CHECK(scaled.out != calibrated.out);
  CHECK(contains(cli_test::slurp(s.dir + "/cs/model.safetensors"), "conformal_scaled"));
  const Run uncal_q = run_attnfc("predict" + qm + " --uncalibrated");
  CHECK(uncal_q.code == 2);
  CHECK_MESSAGE(contains(uncal_q.out, "--uncalibrated: "), uncal_q.out);
  CHECK(contains(uncal_q.out, "has no calibration"));
  // An ensemble's levels (the members' mean) are calibrated once, after its members.
  const Run ens = run_attnfc("train --config " + s.dir + "/micro.json --set " +
                             "'model.quantiles=[0.1,0.5,0.9]' --set train.calibrate=conformal " +
                             "--set train.ensemble=2 --out " + s.dir + "/ce");
  REQUIRE_MESSAGE(ens.code == 0, ens.out);
  const std::string em = " -m " + s.dir + "/ce/model.safetensors -i " + csv;
  const Run ee = run_attnfc("evaluate" + em);
  REQUIRE_MESSAGE(ee.code == 0, ee.out);
  CHECK(contains(ee.out, "attnfc-calibrated intervals (original units)"));
  const Run ep = run_attnfc("predict" + em), eraw = run_attnfc("predict" + em + " --uncalibrated");
  REQUIRE_MESSAGE(ep.code == 0, ep.out);
  REQUIRE_MESSAGE(eraw.code == 0, eraw.out);
  CHECK(ep.out != eraw.out);
  // ... and not each member's: a member's file holds no calibration.
  CHECK(run_attnfc("predict -m " + s.dir + "/ce/members/1/model.safetensors -i " + csv +
                   " --uncalibrated")
            .code == 2);
  // plot draws the fan: one shaded band per interval.
  const Run plot = run_attnfc("plot -m " + s.dir + "/c/model.safetensors -i " + csv + " -o " +
                              s.dir + "/fan.html");
  REQUIRE_MESSAGE(plot.code == 0, plot.out);
  const std::string html = cli_test::slurp(s.dir + "/fan.html");
  CHECK(contains(html, "<polygon"));
  CHECK(contains(html, "80% interval"));
  const struct {
    std::string sets, expect;
  } refused[] = {
      {"--set 'model.quantiles=[0.3,0.5]' --set train.calibrate=conformal",
       "train.calibrate: \"conformal\" calibrates intervals"},
      {"--set 'model.quantiles=[0.3,0.5]' --set train.calibrate=conformal_scaled",
       "train.calibrate: \"conformal_scaled\" calibrates intervals"},
      {"--set train.calibrate=isotonic", "train.calibrate"},
  };
  for (const auto& r : refused) {
    const Run e = run_attnfc("train --config " + s.dir + "/micro.json " + r.sets + " --out " +
                             s.dir + "/bad_cal");
    CHECK(e.code == 2);
    CHECK_MESSAGE(contains(e.out, r.expect), e.out);
  }
  for (const char* bad : {"[0.1,0.9]", "[0.5,0.5]", "[0.9,0.5]", "[0,0.5]", "[0.5,1.5]"}) {
    const Run r =
        run_attnfc("train --config " + s.dir + "/micro.json --set 'model.quantiles=" + bad +
                   "' --out " + s.dir + "/bad");
    CAPTURE(bad);
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.out, "model.quantiles"), r.out);
  }
}
