// attnfc train / predict / evaluate as a user runs them: end to end on a slice of ETTh1,
// Ctrl-C and --resume, and every error path with its message and exit code.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "attnfc/base/safetensors.hpp"

namespace fs = std::filesystem;

namespace {

using cli_test::Run;
using cli_test::sh;
using cli_test::slurp;

using cli_test::run_attnfc;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A scratch folder holding the first 700 rows of ETTh1 and a micro config that trains in
// a few seconds.
struct Fixture {
  std::string dir, csv, config;
  Fixture() {
    dir = (fs::temp_directory_path() / ("attnfc_cli_train_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir);
    fs::create_directories(dir);
    csv = cli_test::write_etth1_head(dir, 701);
    config = dir + "/micro.json";
    write(config, R"({
  "data": {"path": ")" +
                      csv + R"(", "columns": ["OT"],
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 16, "n_heads": 2,
            "n_layers": 1, "ff_mult": 2, "dropout": 0.1},
  "train": {"epochs": 2, "batch_size": 16, "max_steps_per_epoch": 12, "lr": 0.003, "seed": 3}
})");
  }
  ~Fixture() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("train, predict and evaluate end to end on a slice of ETTh1") {
  Fixture f;
  const std::string run = f.dir + "/run";
  Run r = run_attnfc("train --config " + f.config + " --out " + run);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.find("best epoch") != std::string::npos);
  for (const char* file : {"config.json", "model.safetensors", "train_log.csv", "metrics.json"})
    CHECK(fs::exists(run + "/" + file));
  CHECK(slurp(run + "/train_log.csv").rfind("epoch,steps,train_loss,val_loss", 0) == 0);

  // Forecast to stdout: header, then 8 rows continuing hourly after the last row.
  r = run_attnfc("predict --model " + run + "/model.safetensors --input " + f.csv);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.rfind("date,OT\n2016-07-30 04:00:00,", 0) == 0);  // row 700 was 03:00
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 1 + 8);
  // Beyond the model's horizon by rollout, to a file.
  r = run_attnfc("predict --model " + run + "/model.safetensors --input " + f.csv +
                 " --horizon 20 --output " + f.dir + "/fc.csv");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const std::string fc = slurp(f.dir + "/fc.csv");
  CHECK(fc.find("2016-07-30 23:00:00,") != std::string::npos);  // the 20th step
  CHECK(fc.find("nan") == std::string::npos);

  r = run_attnfc("evaluate --model " + run + "/model.safetensors --input " + f.csv +
                 " --split all --json " + f.dir + "/eval.json");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  for (const char* name : {"attnfc", "repeat-last", "seasonal-naive", "nlinear", "MASE"})
    CHECK(r.out.find(name) != std::string::npos);
  const std::string json = slurp(f.dir + "/eval.json");
  CHECK(json.find("\"windows\": 113") != std::string::npos);  // 120 - 8 + 1, none dropped
  // Per horizon step and per column, beside the pooled numbers: 2 parts x 4 models (this
  // run's linear start is not scored: no shortcut) x 2 units rows, times 8 steps or 1 column.
  const std::string steps = slurp(f.dir + "/eval_steps.csv");
  CHECK(steps.rfind("part,model,unit,step,mse,mae,windows\n", 0) == 0);
  CHECK(steps.find("\ntest,attnfc,original,8,") != std::string::npos);
  int step_rows = -1;
  for (char c : steps) step_rows += c == '\n';
  CHECK(step_rows == 2 * 4 * 2 * 8);
  CHECK(slurp(f.dir + "/eval_columns.csv").find("\nval,nlinear,scaled,OT,") != std::string::npos);
  CHECK(r.out.find("pool") == std::string::npos);  // one column: nothing pooled

  // A self-contained page: forecast vs actual, the training curves, attention maps.
  r = run_attnfc("plot --model " + run + "/model.safetensors --input " + f.csv + " --output " +
                 f.dir + "/plot.html");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const std::string html = slurp(f.dir + "/plot.html");
  for (const char* part : {"<svg", "Forecast vs actual", "Training curves", "Attention", "</html>"})
    CHECK(html.find(part) != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  r = run_attnfc("plot --model " + run + "/model.safetensors --input " + f.csv + " --window 500");
  CHECK(r.code == 2);
  CHECK(r.out.find("--window: found 500, expected 0..112") != std::string::npos);

  // The same run again refuses to overwrite it.
  r = run_attnfc("train --config " + f.config + " --out " + run);
  CHECK(r.code == 2);
  CHECK(r.out.find("--resume") != std::string::npos);
}

// The scaled MSE of `model` in part `part` of an evaluation JSON.
double scaled_mse(const std::string& json, const std::string& part, const std::string& model) {
  return nlohmann::json::parse(json).at(part).at("models").at(model).at("scaled").at("mse");
}

TEST_CASE("evaluate --drop-last scores the windows the published LTSF runs scored") {
  Fixture f;
  const std::string run = f.dir + "/run";
  Run r = run_attnfc("train --config " + f.config + " --out " + run);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const std::string model = " --model " + run + "/model.safetensors --input " + f.csv;
  const std::string all = f.dir + "/all.json", d113 = f.dir + "/d.json";
  REQUIRE(run_attnfc("evaluate" + model + " --json " + all).code == 0);
  r = run_attnfc("evaluate" + model + " --drop-last 16");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  // 113 test windows, batches of 16: the last one (113 - 7 * 16) is left out. The default
  // JSON is its own file: the every-window evaluation is not overwritten.
  CHECK(cli_test::contains(r.out, "scoring the first 112 of 113 test windows"));
  const std::string d16 = run + "/evaluation_test_drop16.json";
  REQUIRE(fs::exists(d16));
  const nlohmann::json j = nlohmann::json::parse(slurp(d16));
  CHECK(j.at("test").at("windows") == 112);
  CHECK(j.at("drop_last").at("batch") == 16);
  CHECK(j.at("drop_last").at("dropped_windows") == 1);
  for (const char* m : {"attnfc", "repeat-last", "nlinear"})
    CHECK(scaled_mse(slurp(d16), "test", m) != scaled_mse(slurp(all), "test", m));
  // A batch that divides the count drops nothing: the same scores as every window.
  REQUIRE(run_attnfc("evaluate" + model + " --drop-last 113 --json " + d113).code == 0);
  for (const char* m : {"attnfc", "repeat-last", "nlinear"})
    CHECK(scaled_mse(slurp(d113), "test", m) == scaled_mse(slurp(all), "test", m));
  // Refusals: exit 2 and a message naming the flag, what was found and what was expected.
  auto refused = [&](const std::string& args, const std::string& message) {
    const Run bad = run_attnfc("evaluate" + model + args);
    CHECK(bad.code == 2);
    CHECK_MESSAGE(cli_test::contains(bad.out, message), bad.out);
  };
  refused(" --drop-last 114", "has 113 windows, fewer than one batch; expected at least 114");
  // Validation rows also fit baselines (NLinear's conformal intervals): never shortened.
  refused(" --split all --drop-last 16",
          "--drop-last 16: found --split all, expected --split test");
}

TEST_CASE("a run kept at its linear start ends with a warning; evaluate scores the start too") {
  Fixture f;
  const std::string run = f.dir + "/start";
  // min_delta: no trained epoch can count as better than the least-squares start.
  Run r = run_attnfc("train --config " + f.config + " --set model.linear_lookback=32" +
                     " --set train.min_delta=1e6 --out " + run);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CAPTURE(r.out);
  CHECK(r.out.find("best epoch 0 (the model before training)") != std::string::npos);
  CHECK(r.out.find("linear-start") != std::string::npos);
  std::string last = r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  last = last.substr(last.rfind('\n') + 1);
  CHECK(last.find("warn") != std::string::npos);
  CHECK(last.find("the kept model is its linear start") != std::string::npos);
  CHECK(fs::exists(run + "/linear_start.safetensors"));

  r = run_attnfc("evaluate --model " + run + "/model.safetensors --input " + f.csv +
                 " --split test --json " + f.dir + "/eval.json");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.find("model: epoch 0 (the model before training)") != std::string::npos);
  CHECK(r.out.find("linear-start") != std::string::npos);
  CHECK(slurp(f.dir + "/eval.json").find("\"kept_epoch\": 0") != std::string::npos);
}

TEST_CASE("an ensemble trains, predicts, evaluates, plots and shows a chosen member") {
  Fixture f;
  const std::string run = f.dir + "/ens";
  Run r = run_attnfc("train --config " + f.config + " --out " + run + " --set train.ensemble=2");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.find("trained an ensemble of 2 networks") != std::string::npos);
  CHECK(r.out.find("members/*/train_log.csv") != std::string::npos);
  const std::string model = run + "/model.safetensors";
  r = run_attnfc("predict --model " + model + " --input " + f.csv);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.rfind("date,OT\n2016-07-30 04:00:00,", 0) == 0);
  r = run_attnfc("evaluate --model " + model + " --input " + f.csv + " --split test");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.find("attnfc") != std::string::npos);
  r = run_attnfc("plot --model " + model + " --input " + f.csv + " --output " + f.dir + "/e.html");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const std::string html = slurp(f.dir + "/e.html");
  CHECK(html.find("val MSE, member 2") != std::string::npos);
  CHECK(html.find("member 1 of the ensemble of 2") != std::string::npos);
  r = run_attnfc("attention --model " + model + " --input " + f.csv + " --member 2 --no-heatmap");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.find("these are member 2's maps") != std::string::npos);
  r = run_attnfc("attention --model " + model + " --input " + f.csv + " --member 3");
  CHECK(r.code == 2);
  CHECK(r.out.find("--member: found 3, expected 1..2") != std::string::npos);
}

TEST_CASE("an interrupted run resumes to the same parameters, bit for bit") {
  Fixture f;
  Run r = run_attnfc("train --config " + f.config + " --out " + f.dir + "/a");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  // Interrupted mid-epoch (the path Ctrl-C takes), twice, then resumed to the end.
  r = run_attnfc("train --config " + f.config + " --out " + f.dir + "/b --stop-after-steps 5");
  CHECK(r.code == 130);
  CHECK(r.out.find("attnfc train --out " + f.dir + "/b --resume") != std::string::npos);
  CHECK(fs::exists(f.dir + "/b/checkpoint.safetensors"));
  CHECK_FALSE(fs::exists(f.dir + "/b/metrics.json"));
  r = run_attnfc("train --out " + f.dir + "/b --resume --stop-after-steps 13");
  CHECK(r.code == 130);
  r = run_attnfc("train --out " + f.dir + "/b --resume");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(slurp(f.dir + "/a/model.safetensors") == slurp(f.dir + "/b/model.safetensors"));
  // The last state too: parameters and AdamW moments (its metadata holds timings).
  const auto ca = attnfc::safetensors::read(f.dir + "/a/checkpoint.safetensors");
  const auto cb = attnfc::safetensors::read(f.dir + "/b/checkpoint.safetensors");
  REQUIRE(ca.tensors.size() == cb.tensors.size());
  for (size_t i = 0; i < ca.tensors.size(); ++i) {
    CAPTURE(ca.tensors[i].name);
    CHECK(ca.tensors[i].values == cb.tensors[i].values);
  }
  r = run_attnfc("train --out " + f.dir + "/b --resume");
  CHECK(r.code == 0);
  CHECK(r.out.find("already finished") != std::string::npos);
}

TEST_CASE("a real SIGINT stops training with a resumable checkpoint and exit code 130") {
  Fixture f;
  // Long enough that it cannot finish before the signal; config.json is written after the
  // handler is installed and just before the first step.
  const std::string run = f.dir + "/sig";
  const Run r = sh(std::string(ATTNFC_BINARY) + " train --config " + f.config +
                   " --set train.epochs=100000 --set train.patience=0 --out " + run + " > " +
                   f.dir + "/sig.log 2>&1 & pid=$!; i=0; while [ ! -f " + run +
                   "/config.json ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; "
                   "sleep 0.2; kill -INT $pid; wait $pid; echo rc=$?");
  const std::string log = slurp(f.dir + "/sig.log");
  CAPTURE(log);
  CHECK(r.out.find("rc=130") != std::string::npos);
  CHECK(log.find("saved a resumable checkpoint") != std::string::npos);
  const auto ck = attnfc::safetensors::read(run + "/checkpoint.safetensors");
  CHECK(ck.metadata.count("train_state") == 1);
  CHECK_FALSE(fs::exists(run + "/metrics.json"));
}

TEST_CASE("every subcommand has --help with an example") {
  for (const char* sub : {"train", "predict", "evaluate", "plot"}) {
    CAPTURE(sub);
    const Run r = run_attnfc(std::string(sub) + " --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("Example") != std::string::npos);
  }
}

TEST_CASE("bad usage and bad input exit with 2 and say what is wrong") {
  Fixture f;
  auto expect = [](const Run& r, const std::string& text) {
    CAPTURE(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(text) != std::string::npos);
  };
  // Missing files.
  expect(run_attnfc("train --config " + f.dir + "/nope.json"), "nope.json: config file not found");
  expect(run_attnfc("train --config " + f.config + " --set data.path=" + f.dir +
                    "/none.csv --out " + f.dir + "/r1"),
         "none.csv");
  expect(run_attnfc("predict --model " + f.dir + "/none.safetensors --input " + f.csv),
         "model file not found");
  expect(run_attnfc("predict --input " + f.csv), "--model");
  // Bad config: syntax, unknown key, out of range, bad override.
  write(f.dir + "/syntax.json", "{\n  \"train\": {\"epochs\": 2,}\n}\n");
  expect(run_attnfc("train --config " + f.dir + "/syntax.json"), "syntax.json:2:");
  expect(run_attnfc("train --config " + f.config + " --set train.learning_rate=0.1 --out " + f.dir +
                    "/r2"),
         "train.learning_rate");
  expect(run_attnfc("train --config " + f.config + " --set train.epochs=-1 --out " + f.dir + "/r3"),
         "train.epochs");
  expect(run_attnfc("train --config " + f.config + " --set nonsense --out " + f.dir + "/r4"),
         "expected section.key=value");
  // Bad CSV: a ragged row names the file and line.
  write(f.dir + "/ragged.csv", "date,OT\n2020-01-01 00:00:00,1\n2020-01-01 01:00:00,2,3\n");
  expect(run_attnfc("train --config " + f.config + " --set data.path=" + f.dir +
                    "/ragged.csv --out " + f.dir + "/r5"),
         "ragged.csv:3");
  // Incompatible checkpoints: not a safetensors file; a model for other columns.
  write(f.dir + "/junk.safetensors", "this is not a model");
  expect(run_attnfc("predict --model " + f.dir + "/junk.safetensors --input " + f.csv),
         "junk.safetensors");
  Run r = run_attnfc("train --config " + f.config + " --out " + f.dir + "/ok");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  write(f.dir + "/other.csv", "date,load\n2020-01-01 00:00:00,1\n2020-01-01 01:00:00,2\n");
  expect(run_attnfc("predict --model " + f.dir + "/ok/model.safetensors --input " + f.dir +
                    "/other.csv"),
         "OT");
  // Unwritable outputs.
  expect(run_attnfc("predict --model " + f.dir + "/ok/model.safetensors --input " + f.csv +
                    " --output " + f.dir + "/no/such/dir/fc.csv"),
         "cannot write");
  write(f.dir + "/afile", "x");
  expect(run_attnfc("train --config " + f.config + " --out " + f.dir + "/afile/run"),
         "cannot create the output folder");
  // Nothing to resume.
  expect(run_attnfc("train --out " + f.dir + "/empty --resume"), "no saved config");
}

TEST_CASE("a non-finite loss stops training with the step named and no NaN model saved") {
  Fixture f;
  const std::string run = f.dir + "/nan";
  Run r = run_attnfc("train --config " + f.config + " --out " + run + " --stop-after-steps 3");
  REQUIRE_MESSAGE(r.code == 130, r.out);
  // Poison one weight of the resumable checkpoint, as a diverged step would have left it.
  auto ck = attnfc::safetensors::read(run + "/checkpoint.safetensors");
  bool poisoned = false;
  for (auto& t : ck.tensors) {
    if (t.name.find("weight") == std::string::npos || t.values.empty()) continue;
    t.values[0] = std::numeric_limits<float>::quiet_NaN();
    poisoned = true;
    break;
  }
  REQUIRE(poisoned);
  attnfc::safetensors::write(run + "/checkpoint.safetensors", ck);
  r = run_attnfc("train --out " + run + " --resume");
  CHECK(r.code == 1);
  CHECK_MESSAGE(r.out.find("training diverged at step 4") != std::string::npos, r.out);
  CHECK_FALSE(fs::exists(run + "/metrics.json"));
  if (fs::exists(run + "/model.safetensors")) {
    for (const auto& t : attnfc::safetensors::read(run + "/model.safetensors").tensors)
      for (float v : t.values) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("evaluate of several columns says the original units pool them and shows each") {
  Fixture f;
  const std::string run = f.dir + "/mixed";
  Run r = run_attnfc("train --config " + f.config + " --out " + run +
                     " --set data.columns='[\"HUFL\",\"OT\"]' --set model.channel_mode=mixed");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  r = run_attnfc("evaluate --model " + run + "/model.safetensors --input " + f.csv +
                 " --split test");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(r.out.find("(original units pool 2 columns of different scales; per column below)") !=
        std::string::npos);
  CHECK(r.out.find("original units per column, MSE:") != std::string::npos);
  const std::string columns = slurp(run + "/evaluation_test_columns.csv");
  CHECK(columns.find("\ntest,attnfc,original,HUFL,") != std::string::npos);
  CHECK(columns.find("\ntest,attnfc,original,OT,") != std::string::npos);
}
