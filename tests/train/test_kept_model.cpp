// What a run kept, beside its linear start: metrics.json names it, scores the linear
// start as its own row, and warns when training added nothing or a baseline wins.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnfc/train/kept_model.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/trainer.hpp"
#include "train_test_util.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;

using train_test::check_same_tensors;
using train_test::config_for;
using train_test::slurp;
using train_test::temp_dir;
using train_test::write_csv;

namespace {

// The parts of metrics.json this file checks, for a run kept at its linear start.
void check_kept_linear_start(const std::string& run_dir) {
  const auto m = nlohmann::json::parse(slurp(run_dir + "/metrics.json"));
  CHECK(m["kept"] == nlohmann::json({{"epoch", 0}, {"model", "linear start"}}));
  REQUIRE(m["warnings"].size() == 1);
  CHECK(contains(m["warnings"][0].get<std::string>(), "the kept model is its linear start"));
  CHECK(contains(m["warnings"][0].get<std::string>(), "train.lr"));
  for (const char* part : {"val", "test"}) {
    CAPTURE(part);
    const auto& models = m[part]["models"];
    REQUIRE(models.contains("linear-start"));
    // The kept model is the linear start: the same forecasts, so the same score, bit for bit.
    CHECK(models["linear-start"]["scaled"]["mse"].get<double>() ==
          models["attnfc"]["scaled"]["mse"].get<double>());
    CHECK(models.contains("nlinear"));
  }
  CHECK(fs::exists(run_dir + "/linear_start.safetensors"));
}

}  // namespace

TEST_CASE("a run that keeps its linear start says so: the kept entry, its row, a warning") {
  const std::string dir = temp_dir("kept_start");
  nlohmann::json j = config_for(write_csv(dir, 700));
  j["model"]["linear_lookback"] = 32;  // the least-squares start
  j["train"]["epochs"] = 2;
  j["train"]["min_delta"] = 1e6;  // no epoch can count as better than the start
  const RunConfig cfg = parse_run_config(j);
  const TrainResult r = train::train(cfg, {dir + "/one"});
  REQUIRE(r.status == TrainResult::Status::kFinished);
  CHECK(r.best_epoch == 0);
  check_kept_linear_start(dir + "/one");
  check_same_tensors(dir + "/one/model.safetensors", dir + "/one/linear_start.safetensors");
  CHECK(LoadedModel::load(dir + "/one/model.safetensors").epoch == 0);
  CHECK(r.metrics["warnings"] ==
        nlohmann::json::parse(slurp(dir + "/one/metrics.json"))["warnings"]);

  // An ensemble whose members all keep their start: the same record, and the start file
  // beside the ensemble's model (member 1's: the least-squares fit has no seed).
  RunConfig ens = cfg;
  ens.train.ensemble = 2;
  ens.train.epochs = 1;
  REQUIRE(train::train(ens, {dir + "/ens"}).status == TrainResult::Status::kFinished);
  check_kept_linear_start(dir + "/ens");
  CHECK(slurp(dir + "/ens/linear_start.safetensors") ==
        slurp(dir + "/ens/members/1/linear_start.safetensors"));
  fs::remove_all(dir);
}

TEST_CASE("a run without a least-squares start has no linear-start row, and names its epoch") {
  const std::string dir = temp_dir("kept_trained");
  const RunConfig cfg = parse_run_config(config_for(write_csv(dir, 700)));  // zero start
  const TrainResult r = train::train(cfg, {dir + "/run"});
  REQUIRE(r.status == TrainResult::Status::kFinished);
  const auto m = nlohmann::json::parse(slurp(dir + "/run/metrics.json"));
  CHECK(!m["test"]["models"].contains("linear-start"));
  CHECK(!fs::exists(dir + "/run/linear_start.safetensors"));
  CHECK(m["kept"]["epoch"].get<int>() == r.best_epoch);
  CHECK(m["kept"]["model"] == (r.best_epoch == 0 ? "initial model" : "trained"));
  CHECK(LoadedModel::load(dir + "/run/model.safetensors").epoch == r.best_epoch);
  fs::remove_all(dir);
}

TEST_CASE("kept_model_warnings: a baseline that wins on validation is named, with both MSEs") {
  auto metrics = [](double own, double nlinear, double start) {
    nlohmann::json m;
    m["val"]["models"]["attnfc"]["scaled"]["mse"] = own;
    m["val"]["models"]["linear-start"]["scaled"]["mse"] = start;
    m["val"]["models"]["nlinear"]["scaled"]["mse"] = nlinear;
    m["val"]["models"]["repeat-last"]["scaled"]["mse"] = 2.0;
    return m;
  };
  const KeptModel trained{3, false, true, false};
  CHECK(kept_model_warnings(metrics(0.5, 0.6, 0.55), trained).empty());
  const auto w = kept_model_warnings(metrics(0.5, 0.4, 0.45), trained);
  REQUIRE(w.size() == 1);
  CHECK(contains(w[0],
                 "on validation the kept model (epoch 3, MSE 0.50000) loses to nlinear "
                 "(MSE 0.40000)"));
  // The lowest of those that beat it is the one named.
  CHECK(contains(kept_model_warnings(metrics(0.5, 0.45, 0.4), trained)[0], "linear-start"));
  // No validation part (nothing to compare): no claim either way.
  CHECK(kept_model_warnings(nlohmann::json::object(), trained).empty());
  // Kept at the start without a least-squares fit: the untrained model is named.
  const auto u = kept_model_warnings(metrics(0.5, 0.6, 0.55), {0, true, false, false});
  REQUIRE(u.size() == 1);
  CHECK(contains(u[0], "the untrained initial model"));
  CHECK(kept_entry({0, true, false, false}) ==
        nlohmann::json({{"epoch", 0}, {"model", "initial model"}}));
  CHECK(kept_entry(trained)["model"] == "trained");
  // A warm start (a backtest fold's previous model) that fine-tuning did not beat: named as
  // such, and no "adds nothing" warning, but a baseline that beats it still is.
  const KeptModel warm{0, true, true, true};
  CHECK(kept_entry(warm)["model"] == "warm start");
  CHECK(kept_model_warnings(metrics(0.5, 0.6, 0.55), warm).empty());
  REQUIRE(kept_model_warnings(metrics(0.5, 0.4, 0.55), warm).size() == 1);
}
