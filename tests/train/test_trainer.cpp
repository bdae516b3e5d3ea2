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
#include "attnfc/model/safetensors.hpp"
#include "attnfc/train/linear_init.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/trainer.hpp"

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;

namespace {

std::string temp_dir(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("attnfc_train_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// Hourly rows with a daily cycle and a little deterministic wiggle, two columns.
std::string write_csv(const std::string& dir, int rows) {
  const std::string path = dir + "/series.csv";
  std::ofstream f(path);
  f << "date,load,temp\n";
  for (int t = 0; t < rows; ++t) {
    const int day = 1 + t / 24, hour = t % 24;
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "2020-01-%02d %02d:00:00", day, hour);
    f << stamp << "," << 10 + 3 * std::sin(2 * M_PI * t / 24) + 0.3 * std::sin(0.37 * t) << ","
      << 5 + std::cos(2 * M_PI * t / 12) << "\n";
  }
  return path;
}

nlohmann::json config_for(const std::string& csv) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "data": {"path": "", "columns": ["load", "temp"],
             "split": {"train_rows": 400, "val_rows": 120, "test_rows": 120}},
    "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 16, "n_heads": 2,
              "n_layers": 1, "ff_mult": 2, "dropout": 0.1},
    "train": {"epochs": 3, "batch_size": 32, "lr": 0.003, "warmup_steps": 4, "patience": 0,
              "seed": 7}
  })");
  j["data"]["path"] = csv;
  return j;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Loss columns of train_log.csv (epoch, steps, train_loss, val_loss, lr), without timings.
std::string log_losses(const std::string& dir) {
  std::istringstream in(slurp(dir + "/train_log.csv"));
  std::string line, out;
  while (std::getline(in, line)) {
    size_t cut = 0;
    for (int commas = 0; commas < 5 && cut != std::string::npos; ++commas)
      cut = line.find(',', cut + 1);
    out += line.substr(0, cut) + "\n";
  }
  return out;
}

void check_same_tensors(const std::string& a, const std::string& b) {
  const auto fa = model::safetensors::read(a), fb = model::safetensors::read(b);
  REQUIRE(fa.tensors.size() == fb.tensors.size());
  for (size_t i = 0; i < fa.tensors.size(); ++i) {
    CAPTURE(fa.tensors[i].name);
    CHECK(fa.tensors[i].name == fb.tensors[i].name);
    CHECK(fa.tensors[i].values == fb.tensors[i].values);  // bit for bit
  }
}

}  // namespace

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
  range["train"]["epochs"] = 0;
  CHECK_THROWS_WITH_AS(parse_run_config(range), doctest::Contains("train.epochs"), InputError);
  nlohmann::json freq = config_for("x.csv");
  freq["data"]["frequency"] = "fortnightly";
  CHECK_THROWS_WITH_AS(parse_run_config(freq),
                       doctest::Contains("config key 'data.frequency': found 'fortnightly', "
                                         "expected a frequency such as 1h"),
                       InputError);
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

  // Interrupt twice (mid-epoch, and again after resuming), then finish.
  TrainOptions b{dir + "/b"};
  b.interrupt_after_steps = 5;
  CHECK(train::train(cfg, b).status == TrainResult::Status::kInterrupted);
  CHECK_THROWS_WITH_AS(train::train(cfg, b), doctest::Contains("--resume"), InputError);
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
  CHECK(train::train(cfg, b).status == TrainResult::Status::kAlreadyFinished);

  // A different config cannot resume this run.
  RunConfig other = cfg;
  other.train.lr = 0.001;
  TrainOptions c{dir + "/c"};
  c.interrupt_after_steps = 2;
  train::train(cfg, c);
  c.resume = true;
  CHECK_THROWS_WITH_AS(train::train(other, c), doctest::Contains("differs"), InputError);
  fs::remove_all(dir);
}
