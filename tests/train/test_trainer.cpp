// The training loop end to end on a tiny synthetic series: run files, resumption
// bit for bit, and config errors.
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/base/safetensors.hpp"
#include "attnfc/train/linear_init.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/trainer.hpp"
#include "train_test_util.hpp"

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;

using train_test::check_same_tensors;
using train_test::config_for;
using train_test::log_losses;
using train_test::slurp;
using train_test::temp_dir;
using train_test::write_csv;

TEST_CASE("run config: overrides, strict keys, resolved JSON round trip") {
  nlohmann::json j = config_for("x.csv");
  apply_overrides(j, {"train.lr=0.01", "model.d_model=32", "train.schedule=step"});
  const RunConfig r = parse_run_config(j);
  CHECK(r.train.lr == 0.01);
  CHECK(r.model.d_model == 32);
  CHECK(r.train.schedule == ScheduleKind::kStep);
  CHECK(to_json(parse_run_config(to_json(r))) == to_json(r));
  CHECK_THROWS_AS(apply_overrides(j, {"novalue"}), InputError);
  nlohmann::json typo = config_for("x.csv");
  typo["train"]["learning_rate"] = 0.1;
  CHECK_THROWS_WITH_AS(parse_run_config(typo), doctest::Contains("train.learning_rate"),
                       InputError);
  nlohmann::json range = config_for("x.csv");
  range["train"]["epochs"] = -1;  // 0 is allowed: the starting point, scored untrained
  CHECK_THROWS_WITH_AS(parse_run_config(range), doctest::Contains("train.epochs"), InputError);
  nlohmann::json freq = config_for("x.csv");
  freq["data"]["frequency"] = "fortnightly";
  CHECK_THROWS_WITH_AS(parse_run_config(freq),
                       doctest::Contains("config key 'data.frequency': found 'fortnightly', "
                                         "expected a frequency such as 1h"),
                       InputError);
  // A config string pasted into a message cannot break it over two lines (make fuzz found
  // "delimiter": "a\nb" aborting the config fuzzer's one-line check).
  nlohmann::json newline = config_for("x.csv");
  newline["data"]["delimiter"] = "a\nb";
  CHECK_THROWS_WITH_AS(parse_run_config(newline),
                       "data.delimiter: found \"a\\x0ab\", expected one character", InputError);
}

TEST_CASE("training writes its run folder, and a resumed run equals an uninterrupted one") {
  const std::string dir = temp_dir("resume");
  const std::string csv = write_csv(dir, 700);
  nlohmann::json with_shortcut = config_for(csv);  // least-squares start, ridge "auto"
  with_shortcut["model"]["linear_lookback"] = 32;
  const RunConfig cfg = parse_run_config(with_shortcut);

  TrainOptions a{dir + "/a"};
  const TrainResult ra = train::train(cfg, a);
  REQUIRE(ra.status == TrainResult::Status::kFinished);
  for (const char* f : {"config.json", "model.safetensors", "checkpoint.safetensors",
                        "train_log.csv", "metrics.json"})
    CHECK(fs::exists(dir + "/a/" + f));
  const auto metrics = nlohmann::json::parse(slurp(dir + "/a/metrics.json"));
  for (const char* m : {"attnfc", "repeat-last", "nlinear"})
    CHECK(metrics["test"]["models"].contains(m));
  CHECK(metrics["test"]["windows"].get<int>() == 120 - 8 + 1);
  CHECK(std::isfinite(metrics["test"]["models"]["attnfc"]["scaled"]["mse"].get<double>()));
  // The start the run began from is on record: the ridge validation picked, and its MSE.
  REQUIRE(metrics.contains("linear_start"));
  const double ridge = metrics["linear_start"]["ridge"].get<double>();
  CHECK(std::count(std::begin(kRidgeCandidates), std::end(kRidgeCandidates), ridge) == 1);
  CHECK(metrics["linear_start"]["windows"].get<int>() == 2 * (400 - 32 - 8 + 1));  // 2 channels
  CHECK(metrics["linear_start"]["val_mse"].get<double>() > 0);
  // Epoch 0 (here the least-squares start) is on record for the training curve.
  CHECK(metrics["initial_val_loss"].get<double>() ==
        doctest::Approx(metrics["linear_start"]["val_mse"].get<double>()).epsilon(1e-6));

  // Interrupt twice (mid-epoch, and again after resuming), then finish.
  TrainOptions b{dir + "/b"};
  b.interrupt_after_steps = 5;
  CHECK(train::train(cfg, b).status == TrainResult::Status::kInterrupted);
  CHECK_THROWS_WITH_AS(train::train(cfg, b), doctest::Contains("already holds a run"), InputError);
  b.resume = true;
  b.interrupt_after_steps = 9;
  CHECK(train::train(cfg, b).status == TrainResult::Status::kInterrupted);
  b.interrupt_after_steps = 0;
  const TrainResult rb = train::train(cfg, b);
  CHECK(rb.status == TrainResult::Status::kFinished);
  CHECK(rb.steps == ra.steps);
  check_same_tensors(dir + "/a/checkpoint.safetensors", dir + "/b/checkpoint.safetensors");
  check_same_tensors(dir + "/a/model.safetensors", dir + "/b/model.safetensors");
  CHECK(log_losses(dir + "/a") == log_losses(dir + "/b"));
  // Resuming does not fit the start again; the record comes from the checkpoint.
  CHECK(nlohmann::json::parse(slurp(dir + "/b/metrics.json"))["linear_start"] ==
        metrics["linear_start"]);
  CHECK(nlohmann::json::parse(slurp(dir + "/b/metrics.json"))["initial_val_loss"] ==
        metrics["initial_val_loss"]);
  CHECK(train::train(cfg, b).status == TrainResult::Status::kAlreadyFinished);

  // A different config cannot resume this run.
  RunConfig other = cfg;
  other.train.lr = 0.001;
  TrainOptions c{dir + "/c"};
  c.interrupt_after_steps = 2;
  train::train(cfg, c);
  c.resume = true;
  CHECK_THROWS_WITH_AS(train::train(other, c), doctest::Contains("differs"), InputError);
  // A config.json written before a key existed (here: train.ensemble) still resumes: the
  // saved config is compared key by key, with defaults filled in.
  auto saved = nlohmann::json::parse(slurp(dir + "/c/config.json"));
  saved["train"].erase("ensemble");
  std::ofstream(dir + "/c/config.json") << saved.dump(2) << "\n";
  c.interrupt_after_steps = 0;
  CHECK(train::train(cfg, c).status == TrainResult::Status::kFinished);
  fs::remove_all(dir);
}

TEST_CASE("the linear start beside a model: found when it matches, refused when it does not") {
  const std::string dir = temp_dir("start_beside");
  const std::string csv = write_csv(dir, 700);
  nlohmann::json j = config_for(csv);
  j["model"]["linear_lookback"] = 32;
  j["train"]["epochs"] = 1;
  j["train"]["max_steps_per_epoch"] = 2;
  REQUIRE(train::train(parse_run_config(j), TrainOptions{dir + "/a"}).status ==
          TrainResult::Status::kFinished);
  bool mismatch = true;
  const LoadedModel model = LoadedModel::load(dir + "/a/model.safetensors");
  CHECK_FALSE(model.linear_start_beside(&mismatch).networks.empty());
  CHECK_FALSE(mismatch);
  // The linear start itself has no other start beside it.
  CHECK(LoadedModel::load(dir + "/a/linear_start.safetensors")
            .linear_start_beside()
            .networks.empty());
  // Another run's start, of another horizon, put beside the model: not used, and said so.
  j["model"]["horizon"] = 4;
  REQUIRE(train::train(parse_run_config(j), TrainOptions{dir + "/b"}).status ==
          TrainResult::Status::kFinished);
  fs::copy_file(dir + "/b/linear_start.safetensors", dir + "/a/linear_start.safetensors",
                fs::copy_options::overwrite_existing);
  CHECK(model.linear_start_beside(&mismatch).networks.empty());
  CHECK(mismatch);
  fs::remove_all(dir);
}
