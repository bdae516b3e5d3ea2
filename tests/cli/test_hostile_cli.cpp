// Issue 18, the command-line side: outputs that cannot be written, outputs over inputs,
// non-finite forecasts, times past 9999-12-31 and option ranges, each with its exit code
// (2 bad input, 1 runtime failure) and a one-line message.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/base/safetensors.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

// One micro model hostile_model once for every case below (a few seconds).
struct HostileModel : cli_test::MicroModel {
  HostileModel() : MicroModel("attnfc_cli_hostile_") {}
};

// Runs attnfc with its stdout redirected by `redirect`, keeping stderr in the output.
Run with_stdout(const std::string& args, const std::string& redirect) {
  return cli_test::sh("{ " + std::string(ATTNFC_BINARY) + " " + args + " " + redirect + "; }");
}

const HostileModel& hostile_model() {
  static const HostileModel t;
  return t;
}

}  // namespace

TEST_CASE("cli: predict and inspect report a failed stdout with exit 1 (item 5)") {
  const HostileModel& t = hostile_model();
  Run r = with_stdout("predict --model " + t.model + " --input " + t.csv, "> /dev/full");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "stdout: write failed (No space left on device)"));
  r = with_stdout("predict --model " + t.model + " --input " + t.csv, ">&-");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "stdout: write failed (standard output is closed)"));
  r = with_stdout("inspect " + t.csv, "> /dev/full");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "stdout: write failed"));
  r = with_stdout("--help", "> /dev/full");
  CHECK(r.code == 1);
  // Writing a file to a full device is a runtime failure too, not bad input.
  r = run_attnfc("predict --model " + t.model + " --input " + t.csv + " --output /dev/full");
  CHECK(r.code == 1);
  CHECK(contains(r.out, "/dev/full: write failed (No space left on device)"));
}

TEST_CASE("cli: predict --output equal to --input or --model is refused (item 6)") {
  const HostileModel& t = hostile_model();
  const std::string before = slurp(t.csv), model_before = slurp(t.model);
  Run r = run_attnfc("predict --model " + t.model + " --input " + t.csv + " --output " + t.csv);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "is the same file as --input"));
  // Another spelling of the same file, and a hard link, are the same file too.
  const std::string other =
      fs::path(t.model).parent_path().string() + "/./../run/model.safetensors";
  r = run_attnfc("predict --model " + t.model + " --input " + t.csv + " --output " + other);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "is the same file as --model"));
  fs::create_hard_link(t.csv, t.dir + "/hard.csv");
  r = run_attnfc("predict --model " + t.model + " --input " + t.csv + " --output " + t.dir +
                 "/hard.csv");
  CHECK(r.code == 2);
  CHECK(slurp(t.csv) == before);
  CHECK(slurp(t.model) == model_before);
  r = run_attnfc("plot --model " + t.model + " --input " + t.csv + " --output " + t.csv);
  CHECK(r.code == 2);
}

TEST_CASE("cli: an inf forecast after inverse scaling is exit 2, naming the column (item 4)") {
  const HostileModel& t = hostile_model();
  auto f = attnfc::safetensors::read(t.model);
  f.metadata["scaler"] = R"({"type":"zscore","channels":["OT"],"mean":[0],"scale":[1e300]})";
  const std::string huge = t.dir + "/run/huge_scale.safetensors";
  attnfc::safetensors::write(huge, f);
  Run r = run_attnfc("predict --model " + huge + " --input " + t.csv);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "column 'OT': the forecast at step 1 is infinite"));
  CHECK(!contains(r.out, "inf\n"));
  r = run_attnfc("plot --model " + huge + " --input " + t.csv + " --output " + t.dir + "/p.html");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "column 'OT'"));
  CHECK(!fs::exists(t.dir + "/p.html"));
}

TEST_CASE("cli: a forecast past 9999-12-31 is refused with a message (item 13)") {
  const HostileModel& t = hostile_model();
  const std::string late = t.dir + "/late.csv";
  {
    std::ofstream out(late);
    out << "date,OT\n";
    for (int h = 0; h < 48; ++h) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "9999-12-%02d %02d:00:00,%d\n", 30 + h / 24, h % 24, h % 7);
      out << buf;
    }
  }
  const Run r = run_attnfc("predict --model " + t.model + " --input " + late);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "forecast step 1 of 8 falls after 9999-12-31 23:59:59"));
}

TEST_CASE("cli: option ranges: --threads 0, plot --window -5, plot --log missing (item 13)") {
  const HostileModel& t = hostile_model();
  Run r = run_attnfc("--threads 0 inspect " + t.csv);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "expected a whole number from 1 to 4096"));
  CHECK(r.out.size() < 400);  // no 309-digit range
  r = run_attnfc("plot --model " + t.model + " --input " + t.csv + " --window -5");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--window: found -5"));
  r = run_attnfc("plot --model " + t.model + " --input " + t.csv + " --log " + t.dir +
                 "/missing.csv");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "missing.csv: file not found"));
}

TEST_CASE("cli: hostile configs end in one line and exit 2, not a crash (item 1)") {
  const HostileModel& t = hostile_model();
  const std::string deep = t.dir + "/deep.json";
  std::ofstream(deep) << std::string(100000, '[') + std::string(100000, ']');
  Run r = run_attnfc("train --config " + deep + " --out " + t.dir + "/deep_run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "nested deeper than 64 levels"));
  const std::string dup = t.dir + "/dup.json";
  std::ofstream(dup) << R"({"model": {"d_model": 8, "d_model": 4096}})";
  r = run_attnfc("train --config " + dup + " --out " + t.dir + "/dup_run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "key 'model.d_model' appears twice"));
  // --set values go through the same parser; a bare word is still a string.
  r = run_attnfc("train --config " + t.dir + "/micro.json --set train.lr=1e999 --out " + t.dir +
                 "/set_run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--set 'train.lr=1e999'"));
  CHECK(contains(r.out, "range of a double"));
  r = run_attnfc("train --config " + t.dir + "/micro.json --set 'model={\"d_model\": 8, " +
                 "\"d_model\": 9}' --out " + t.dir + "/set_run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "key 'd_model' appears twice"));
  r = run_attnfc("train --config /dev/zero --out " + t.dir + "/zero_run");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "character device"));
}

namespace {

// The first 701 rows of ETTh1 in dir/gap-FIRST.csv, OT (the last column) empty on data rows
// [first, last].
std::string etth1_with_gap(const std::string& dir, int first, int last) {
  const std::string head = cli_test::write_etth1_head(dir, 701);
  const std::string csv = dir + "/gap-" + std::to_string(first) + ".csv";
  std::ifstream in(head);
  std::ofstream out(csv);
  std::string line;
  for (int row = -1; std::getline(in, line); ++row)
    out << (row >= first && row <= last ? line.substr(0, line.rfind(',') + 1) : line) << "\n";
  return csv;
}

}  // namespace

TEST_CASE("cli: a gap longer than the context leaves its windows unscored, for every forecaster") {
  const cli_test::ScratchDir scratch("attnfc_cli_gap_");
  const std::string csv = etth1_with_gap(scratch.dir, 600, 650);
  // Test windows start at rows 538..650 (context 32, horizon 8): those of 600..619 see no
  // OT. Before, seasonal-naive's NaN there ended the run with exit 1.
  cli_test::train_micro_model(scratch.dir, csv, R"("missing": "interpolate",)");
  const auto metrics = nlohmann::json::parse(slurp(scratch.dir + "/run/metrics.json"));
  CHECK(metrics["test"]["windows"] == 113);
  CHECK(metrics["test"]["unscored_windows"] == 20);
  for (const auto& [name, m] : metrics["test"]["models"].items())
    CHECK_MESSAGE(m["scaled"]["windows"] == 93, name);
  CHECK_FALSE(metrics["val"].contains("unscored_windows"));

  // plot: a window no forecaster can read is refused by name, skipped when merely offered.
  const std::string model = scratch.dir + "/run/model.safetensors";
  const std::string plot = "plot -m " + model + " -o " + scratch.dir + "/p.html -i ";
  Run r = run_attnfc(plot + csv + " --window 70");  // context rows 608..639
  CHECK(r.code == 2);
  CHECK_MESSAGE(contains(r.out,
                         "--window: window 70 cannot be forecast: column 'OT' is missing in "
                         "all of its 32 context rows; expected a window with a value there"),
                r.out);
  r = run_attnfc(plot + csv + " --window 10 --windows 50");  // offers 62..81 too
  CHECK_MESSAGE(r.code == 0, r.out);
  // evaluate: a test split whose every window lacks OT in its context is one line, exit 2.
  const std::string blind = etth1_with_gap(scratch.dir, 530, 700);
  r = run_attnfc("evaluate -m " + model + " -i " + blind);
  CHECK(r.code == 2);
  CHECK_MESSAGE(
      contains(r.out, blind + ": evaluation: rows 538..690 hold 113 complete windows of "
                              "context 32 + horizon 8, and in every one each target column "
                              "is missing in the whole context; expected at least one "
                              "window with a value there"),
      r.out);
  // The forecast after the data is not drawn when the last 32 rows hold no OT.
  const std::string tail = etth1_with_gap(scratch.dir, 660, 700);
  r = run_attnfc(plot + tail + " --window 0");
  CHECK_MESSAGE(r.code == 0, r.out);
  CHECK(contains(slurp(scratch.dir + "/p.html"),
                 "Not drawn: column &#39;OT&#39; is missing in all of the last 32 rows"));
  // attention on that last window: one line naming the rows and the column, exit 2.
  r = run_attnfc("attention --model " + model + " --input " + tail);
  CHECK(r.code == 2);
  CHECK_MESSAGE(contains(r.out, "--window: " + tail +
                                    ": the window of rows 668..700 holds no "
                                    "value of 'OT'; expected a window with one"),
                r.out);
}

TEST_CASE("cli: calibration leaves out the validation windows no forecaster can read") {
  // Validation windows start at rows 418..530 (context 32, horizon 8): those of 460..479 see
  // no OT. Before, the ensemble's calibration pass forecast them and the run ended with
  // "forecast: window 42, channel 0 has no observed value".
  const cli_test::ScratchDir scratch("attnfc_cli_gap_cal_");
  const std::string csv = etth1_with_gap(scratch.dir, 460, 510);
  std::ofstream(scratch.dir + "/q.json") << R"({
  "data": {"path": ")" + csv + R"(", "columns": ["OT"], "missing": "interpolate",
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "quantiles": [0.1, 0.5, 0.9]},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3,
            "ensemble": 2, "calibrate": "conformal_scaled"}
})";
  const Run r =
      run_attnfc("train --config " + scratch.dir + "/q.json --out " + scratch.dir + "/run");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(contains(r.out, "intervals calibrated on 93 validation values a step"));
  const auto metrics = nlohmann::json::parse(slurp(scratch.dir + "/run/metrics.json"));
  CHECK(metrics["val"]["unscored_windows"] == 20);
}

TEST_CASE("cli: one target column missing across a context leaves only its values unscored") {
  // Two targets, channel-independent; OT missing on 600..650: in the test windows starting at
  // 600..619 OT's 8 values are not scored, HUFL's are, for every forecaster.
  const cli_test::ScratchDir scratch("attnfc_cli_gap_two_");
  const std::string csv = etth1_with_gap(scratch.dir, 600, 650);
  std::ofstream(scratch.dir + "/two.json") << R"({
  "data": {"path": ")" + csv + R"(", "columns": ["HUFL", "OT"], "missing": "interpolate",
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3}
})";
  const Run r =
      run_attnfc("train --config " + scratch.dir + "/two.json --out " + scratch.dir + "/run");
  REQUIRE_MESSAGE(r.code == 0, r.out);  // before: exit 2, the model refused OT's empty context
  CHECK(contains(r.out, "0 hold no observed value of any target column"));
  CHECK(contains(r.out, "20 target columns of the others have none there"));
  const auto metrics = nlohmann::json::parse(slurp(scratch.dir + "/run/metrics.json"));
  CHECK_FALSE(metrics["test"].contains("unscored_windows"));
  for (const auto& [name, m] : metrics["test"]["models"].items()) {
    CHECK_MESSAGE(m["scaled"]["windows"] == 113, name);
    CHECK_MESSAGE(m["scaled"]["values"] == 113 * 8 * 2 - 20 * 8, name);
  }
}
