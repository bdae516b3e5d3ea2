// A long-format file of several series through train, predict and evaluate as a user runs
// them: one global model, one long forecast CSV for every series, per-series scores, and
// clear refusals (a series too short is left out and counted, no series long enough or an
// unknown --id is exit 2).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "attnfc/base/safetensors.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

// Series "a" (300 rows), "b,x" (a quoted id with a comma, 250 rows, 10x the scale) and "c"
// (30 rows: too short).
std::string write_panel(const std::string& dir) {
  const double scale[] = {1, 10, 2};
  return cli_test::write_long_panel(
      dir + "/panel.csv", {"a", "\"b,x\"", "c"}, {300, 250, 30}, [&](int k, int t) {
        return scale[k] * (5 + std::sin(2 * M_PI * t / 24) + 0.1 * std::sin(0.7 * t));
      });
}

std::string write_config(const std::string& dir, const std::string& csv) {
  return cli_test::write_panel_config(dir, "panel.json", csv);
}

struct Scratch : cli_test::ScratchDir {
  Scratch() : ScratchDir("attnfc_panel_") {}
};

}  // namespace

TEST_CASE("panel: one global model, every series forecast in one long CSV, scored per series") {
  Scratch s;
  const std::string csv = write_panel(s.dir), config = write_config(s.dir, csv);
  const Run train = run_attnfc("train --config " + config + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  CHECK(contains(train.out, "1 of 3 series left out"));
  CHECK(contains(train.out, "series 'c' (30 rows)"));
  const std::string model = s.dir + "/run/model.safetensors";

  const Run predict = run_attnfc("predict -m " + model + " -i " + csv + " -o " + s.dir + "/f.csv");
  REQUIRE_MESSAGE(predict.code == 0, predict.out);
  const std::string fc = slurp(s.dir + "/f.csv");
  CHECK(fc.rfind("id,time,load\n", 0) == 0);
  CHECK(contains(fc, "a,2021-03-13 12:00:00,"));        // the hour after a's last (row 299)
  CHECK(contains(fc, "\"b,x\",2021-03-11 10:00:00,"));  // after b's 250 rows
  CHECK(contains(fc, "c,2021-03-02 06:00:00,"));        // a short history is still forecast
  CHECK(contains(predict.out, "series 'c'"));           // ... with its warning
  CHECK(contains(predict.out, "1 series the model was not trained on"));

  // Series are forecast in batches; one series alone (a batch of one) gets the same
  // digits as beside the others.
  const Run one =
      run_attnfc("predict -m " + model + " -i " + csv + " --id a -o " + s.dir + "/a.csv");
  REQUIRE_MESSAGE(one.code == 0, one.out);
  const std::string alone = slurp(s.dir + "/a.csv");
  CHECK(!contains(alone, "b,x"));
  size_t rows = 0;
  for (size_t at = alone.find("\na,"); at != std::string::npos; at = alone.find("\na,", at + 1)) {
    const std::string row = alone.substr(at, alone.find('\n', at + 1) - at);
    CHECK_MESSAGE(contains(fc, row + "\n"), row);
    ++rows;
  }
  CHECK(rows == 8);
  const Run unknown = run_attnfc("predict -m " + model + " -i " + csv + " --id zz");
  CHECK(unknown.code == 2);
  CHECK(contains(unknown.out, "--id: found 'zz'"));

  // Each series comes back at its own scale: "b,x" is "a" x 10 (its mean over the horizon
  // near 50, a's near 5). A sanity check of the output only: the causal norm and the delta
  // target make a forecast nearly indifferent to which scaler is used, so the choice of the
  // series' own scaler is tested where it is made (test_panel.cpp, PanelScaler).
  const auto mean_of = [&](const std::string& lead) {
    double sum = 0;
    int n = 0;
    for (size_t at = fc.find("\n" + lead); at != std::string::npos;
         at = fc.find("\n" + lead, at + 1)) {
      const size_t value = fc.find(',', at + 1 + lead.size()) + 1;
      sum += std::stod(fc.substr(value, fc.find('\n', value) - value));
      ++n;
    }
    return n > 0 ? sum / n : 0.0;
  };
  CHECK(mean_of("a,") == doctest::Approx(5).epsilon(0.25));
  CHECK(mean_of("\"b,x\",") == doctest::Approx(50).epsilon(0.25));

  // A hand-edited model whose series scalers cover other columns is refused, not obeyed.
  auto file = attnfc::safetensors::read(model);
  file.metadata["series_scalers"] =
      R"({"ids":["a"],"scalers":[{"type":"zscore","channels":["x","y","z"],"mean":[0,0,0],)"
      R"("scale":[1,1,1]}]})";
  attnfc::safetensors::write(s.dir + "/hostile.safetensors", file);
  const Run hostile = run_attnfc("predict -m " + s.dir + "/hostile.safetensors -i " + csv);
  CHECK(hostile.code == 2);
  CHECK(contains(hostile.out, "series_scalers"));

  // plot and attention read one series: a panel of several is refused, a file holding one
  // series of it is read (and scaled by that series' own scaler).
  const Run attention = run_attnfc("attention --model " + model + " --input " + csv);
  CHECK(attention.code == 2);
  CHECK(contains(attention.out, "attention reads one series, found 3"));
  const Run plot =
      run_attnfc("plot --model " + model + " --input " + csv + " --output " + s.dir + "/p.html");
  CHECK(plot.code == 2);
  CHECK(contains(plot.out, "3 series"));
  {
    std::ofstream b(s.dir + "/b.csv");
    const std::string all = slurp(csv);
    for (size_t at = 0, nl; (nl = all.find('\n', at)) != std::string::npos; at = nl + 1) {
      const std::string line = all.substr(at, nl - at);
      if (at == 0 || line.rfind("\"b,x\"", 0) == 0) b << line << "\n";
    }
  }
  const Run one_series = run_attnfc("attention --model " + model + " --input " + s.dir + "/b.csv");
  CHECK_MESSAGE(one_series.code == 0, one_series.out);

  const Run eval =
      run_attnfc("evaluate -m " + model + " -i " + csv + " --json " + s.dir + "/e.json");
  REQUIRE_MESSAGE(eval.code == 0, eval.out);
  CHECK(contains(eval.out, "test split: 2 windows over 2 series"));
  const std::string per = slurp(s.dir + "/e_series.csv");
  CHECK(per.rfind("part,id,model,unit,mse,mae,rmse,smape,mase,windows\n", 0) == 0);
  CHECK(contains(per, "test,a,attnfc,original,"));
  CHECK(contains(per, "test,\"b,x\",nlinear,scaled,"));
  // The LTSF loaders' drop_last cuts one series' windows: a panel is refused, exit 2.
  const Run drop = run_attnfc("evaluate -m " + model + " -i " + csv + " --drop-last 2");
  CHECK(drop.code == 2);
  CHECK_MESSAGE(contains(drop.out, "holds 3 series; expected one (a wide file)"), drop.out);
}

TEST_CASE("panel: no series long enough is one clear error, exit 2") {
  Scratch s;
  const std::string csv = write_panel(s.dir), config = write_config(s.dir, csv);
  const Run r = run_attnfc("train --config " + config + " --set model.context_length=400 --out " +
                           s.dir + "/run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "none of the 3 series is long enough"));
}

TEST_CASE(
    "panel: the same bits at 1 and 2 threads, drawn by window or by series; bad keys exit 2") {
  Scratch s;
  const std::string csv = write_panel(s.dir), config = write_config(s.dir, csv);
  for (const char* weighting : {"window", "series"}) {
    const std::string set = std::string(" --set train.series_weighting=") + weighting;
    const Run one = run_attnfc("--threads 1 train --config " + config + set + " --out " + s.dir +
                               "/t1_" + weighting);
    const Run two = run_attnfc("--threads 2 train --config " + config + set + " --out " + s.dir +
                               "/t2_" + weighting);
    REQUIRE_MESSAGE(one.code == 0, one.out);
    REQUIRE_MESSAGE(two.code == 0, two.out);
    CHECK(slurp(s.dir + "/t1_" + weighting + "/model.safetensors") ==
          slurp(s.dir + "/t2_" + weighting + "/model.safetensors"));
  }
  // The two orders train on different windows: their training losses differ.
  const auto train_loss = [&](const std::string& run) {
    const std::string log = slurp(s.dir + "/" + run + "/train_log.csv");
    const size_t row = log.find('\n') + 1;
    const size_t a = log.find(',', log.find(',', row) + 1) + 1;
    return log.substr(a, log.find(',', a) - a);
  };
  CHECK(train_loss("t1_window") != train_loss("t1_series"));
  const Run bad_id = run_attnfc("train --config " + config + " --set data.id_column=store --out " +
                                s.dir + "/bad");
  CHECK(bad_id.code == 2);
  CHECK(contains(bad_id.out, "store"));
  const Run bad_weight = run_attnfc("train --config " + config +
                                    " --set train.series_weighting=equal --out " + s.dir + "/bad2");
  CHECK(bad_weight.code == 2);
  CHECK(contains(bad_weight.out, "train.series_weighting"));
}

TEST_CASE("panel: a series with no value in the model's context is left out, the rest forecast") {
  Scratch s;
  const std::string csv = write_panel(s.dir);
  const std::string config =
      cli_test::write_panel_config(s.dir, "gap.json", csv, R"("missing": "interpolate",)");
  const Run train = run_attnfc("train --config " + config + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const std::string model = s.dir + "/run/model.safetensors";
  // a's last 60 loads empty: the model reads 48.
  const std::string dead =
      cli_test::write_long_panel(s.dir + "/dead.csv", {"a", "b"}, {300, 250}, [](int k, int t) {
        return k == 0 && t >= 240 ? std::nan("") : 5 + std::sin(2 * M_PI * t / 24);
      });
  const Run r = run_attnfc("predict -m " + model + " -i " + dead + " -o " + s.dir + "/f.csv");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK_MESSAGE(contains(r.out, dead +
                                    ": series 'a': column 'load' is missing in all of the last "
                                    "48 rows, which " +
                                    model + " reads; that series is not forecast"),
                r.out);
  const std::string fc = slurp(s.dir + "/f.csv");
  CHECK_FALSE(contains(fc, "\na,"));
  CHECK(contains(fc, "\nb,"));
  // Refused with --strict; and when no chosen series is left, one line and exit 2.
  CHECK(run_attnfc("predict --strict -m " + model + " -i " + dead).code == 2);
  const Run only = run_attnfc("predict -m " + model + " -i " + dead + " --id a");
  CHECK(only.code == 2);
  CHECK(
      contains(only.out, dead + ": none of the 1 series has a value in the rows the model reads"));
}
