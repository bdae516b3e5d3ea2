// Future covariates, calendar and holiday features read by the cross-attention decoder
// (data.future_covariates, data.calendar, data.holidays): trained, predicted (future rows in
// the input, or --future FILE) and evaluated as a user runs them, and every input mistake
// refused with one line and exit 2.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

// etth1_head.csv holds 700 hourly rows from 2016-07-01 00:00, so the history ends at
// 2016-07-30 03:00 and the model's 8 forecast steps are 04:00 .. 11:00 that day.
std::string step_time(int h) {
  return "2016-07-30 " + std::string(h + 3 < 10 ? "0" : "") + std::to_string(h + 3) + ":00:00";
}

struct Known : cli_test::ScratchDir {
  std::string csv, holidays;
  Known() : ScratchDir("attnfc_known_") {
    csv = cli_test::write_etth1_head(dir, 701);
    holidays = dir + "/holidays.csv";
    std::ofstream(holidays) << "date,name\n2016-07-04,Independence Day\n2016-07-30,test day\n";
  }
  // OT the target, HUFL a past and MUFL a future covariate, calendar and holidays, read by a
  // micro cross-attention decoder; `model_extra` and `data_extra` are appended keys.
  std::string config(const std::string& data_extra = "", const std::string& model_extra = "") {
    const std::string path = dir + "/known.json";
    std::ofstream(path) << R"({
  "data": {"path": ")" + csv + R"(", "targets": ["OT"], "past_covariates": ["HUFL"],
           "future_covariates": ["MUFL"], "calendar": "auto", "holidays": ")" +
                               holidays + "\", " + data_extra + R"(
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "channel_mode": "mixed",
            "linear_lookback": 0, "decoder": "cross_attention", "loss_positions": "last")" +
                               model_extra + R"(},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3,
            "linear_init": "zero"}
})";
    return path;
  }
  // The history followed by `rows` future rows: OT and HUFL empty, MUFL given (or empty at
  // step `hole`).
  std::string with_future_rows(int rows, int hole = -1) const {
    const std::string path =
        dir + "/with_future_" + std::to_string(rows) + "_" + std::to_string(hole) + ".csv";
    std::ofstream out(path);
    out << slurp(csv);
    for (int h = 1; h <= rows; ++h)
      out << step_time(h) << ",,2.0," << (h == hole ? "" : std::to_string(1.0 + 0.1 * h))
          << ",0.5,4.0,1.3,\n";
    return path;
  }
  // A --future file "date,MUFL" for steps 1..rows, leaving out step `skip`; `shift` is
  // added to the first two steps' values.
  std::string future_file(int rows, int skip = -1, double shift = 0) const {
    const std::string path = dir + "/future_" + std::to_string(rows) + "_" + std::to_string(skip) +
                             "_" + std::to_string(shift) + ".csv";
    std::ofstream out(path);
    out << "date,MUFL\n";
    for (int h = 1; h <= rows; ++h)
      if (h != skip) out << step_time(h) << "," << 1.0 + 0.1 * h + (h <= 2 ? shift : 0) << "\n";
    return path;
  }
};

}  // namespace

TEST_CASE("known features: train, then predict from future rows or --future, the same bits") {
  Known s;
  const Run train = run_attnfc("train --config " + s.config() + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  // 1 future covariate + 5 calendar features (hour, weekday, day of month, month, week of
  // year; 2 each) + the holiday flag.
  CHECK(contains(slurp(s.dir + "/run/config.json"), "\"known_features\": 12"));
  const std::string model = s.dir + "/run/model.safetensors";
  const Run rows = run_attnfc("predict -m " + model + " -i " + s.with_future_rows(8));
  REQUIRE_MESSAGE(rows.code == 0, rows.out);
  CHECK(contains(rows.out, "date,OT\n" + step_time(1) + ","));
  CHECK(contains(rows.out, step_time(8) + ","));
  const Run file =
      run_attnfc("predict -m " + model + " -i " + s.csv + " --future " + s.future_file(8));
  REQUIRE_MESSAGE(file.code == 0, file.out);
  CHECK(file.out == rows.out);
  // Other future covariates give another forecast: the decoder reads them.
  const Run other =
      run_attnfc("predict -m " + model + " -i " + s.csv + " --future " + s.future_file(8, -1, 5.0));
  REQUIRE_MESSAGE(other.code == 0, other.out);
  CHECK(other.out != rows.out);
  const Run eval =
      run_attnfc("evaluate -m " + model + " -i " + s.csv + " --json " + s.dir + "/e.json");
  REQUIRE_MESSAGE(eval.code == 0, eval.out);
  CHECK(contains(slurp(s.dir + "/e.json"), "\"values\": 904"));
  // plot forecasts a test window with the covariates recorded for its steps.
  const Run plot = run_attnfc("plot -m " + model + " -i " + s.csv + " -o " + s.dir + "/p.html");
  REQUIRE_MESSAGE(plot.code == 0, plot.out);
  CHECK(contains(slurp(s.dir + "/p.html"), "forecast"));
  // The encoder's attention maps of a decoder model.
  const Run att = run_attnfc("attention --model " + model + " --input " + s.csv);
  REQUIRE_MESSAGE(att.code == 0, att.out);
  CHECK(contains(att.out, "layer 0 head 1"));
}

TEST_CASE("known features: an ensemble's model file carries them, so it predicts") {
  Known s;
  const Run train = run_attnfc("train --config " + s.config() + " --set train.ensemble=2 --out " +
                               s.dir + "/ens");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const Run p =
      run_attnfc("predict -m " + s.dir + "/ens/model.safetensors -i " + s.with_future_rows(8));
  REQUIRE_MESSAGE(p.code == 0, p.out);
  CHECK(contains(p.out, "date,OT\n" + step_time(1) + ","));
  const Run e = run_attnfc("evaluate -m " + s.dir + "/ens/model.safetensors -i " + s.csv);
  CHECK_MESSAGE(e.code == 0, e.out);
}

TEST_CASE("known features: predict input mistakes name the file and step, exit 2") {
  Known s;
  const Run train = run_attnfc("train --config " + s.config() + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const std::string m = "predict -m " + s.dir + "/run/model.safetensors -i ";
  const struct {
    std::string args, expect;
  } mistakes[] = {
      {s.csv, "reads the future covariates (MUFL) at the 8 steps after the history"},
      {s.with_future_rows(8, 3), "a future covariate is empty on a row after the history"},
      {s.with_future_rows(5), "have no row at " + step_time(6) + " (forecast step 6 of 8)"},
      {s.csv + " --future " + s.future_file(8, 2), "have no row at " + step_time(2)},
      {s.csv + " --future " + s.future_file(8) + " --horizon 16", "forecasts at most 8 steps"},
  };
  for (const auto& c : mistakes) {
    const Run r = run_attnfc(m + c.args + " -o " + s.dir + "/out.csv");
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.out, c.expect), r.out);
    CHECK(!std::ifstream(s.dir + "/out.csv").good());  // nothing written
  }
}

TEST_CASE("known features: config mistakes name the key, exit 2") {
  Known s;
  const struct {
    std::string set, expect;
  } mistakes[] = {
      {"model.decoder=linear", "model.decoder': found \"linear\""},
      {"model.loss_positions=all", "model.loss_positions': found \"all\""},
      {"'data.calendar=[\"fortnight\"]'", "fortnight"},
      {"'data.static=[\"HULL\"]'", "data.static: expected data.id_column"},
      {"model.channel_mode=independent", "data.past_covariates: a channel-independent model"},
      {"'data.future_covariates=[\"OT\"]'", "'OT' is also in data.targets"},
  };
  int k = 0;
  for (const auto& c : mistakes) {
    const Run r = run_attnfc("train --config " + s.config() + " --set " + c.set + " --out " +
                             s.dir + "/m" + std::to_string(k++));
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.out, c.expect), r.out);
  }
  std::ofstream(s.holidays) << "date\n2016-07-04\nnot a date\n";
  const Run bad = run_attnfc("train --config " + s.config() + " --out " + s.dir + "/h");
  CHECK(bad.code == 2);
  CHECK_MESSAGE(contains(bad.out, "holidays.csv:3"), bad.out);
}
