// Rolling-origin backtests (train/backtest.hpp): where each fold's windows lie, warm starts,
// scored-only folds, pooling, resuming bit for bit, and the folder and plan checks.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/backtest.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/run_folder.hpp"
#include "train_test_util.hpp"

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;

using train_test::check_same_tensors;
using train_test::config_for;
using train_test::slurp;
using train_test::temp_dir;
using train_test::write_csv;

namespace {

constexpr int kRows = 640;  // 3 folds of 8 origins, 120 val rows, the rest to train on

RunConfig micro_config(const std::string& dir) {
  nlohmann::json j = config_for(write_csv(dir, kRows));
  j["train"]["epochs"] = 2;
  j["model"]["channel_mode"] = "independent";  // with a least-squares linear start to show
  j["model"]["linear_lookback"] = 32;
  return parse_run_config(j);
}

BacktestOptions options(const std::string& out, int refit_every) {
  BacktestOptions o;
  o.out_dir = out;
  o.folds = 3;
  o.refit_every = refit_every;
  return o;
}

nlohmann::json fold_file(const std::string& out, int k, const char* name) {
  return nlohmann::json::parse(slurp(out + "/fold-" + std::to_string(k) + "/" + name));
}

}  // namespace

TEST_CASE("backtest folds: consecutive origins from the end, warm-started, pooled by windows") {
  const std::string dir = temp_dir("backtest_every");
  const std::string out = dir + "/bt";
  const BacktestResult r = backtest(micro_config(dir), options(out, 1));
  REQUIRE(r.status == BacktestResult::Status::kFinished);
  REQUIRE(r.folds.size() == 3);
  const int64_t H = 8, step = 8, T = step + H - 1;
  for (int k = 1; k <= 3; ++k) {
    CAPTURE(k);
    const nlohmann::json split = fold_file(out, k, "config.json")["data"]["split"];
    // Fold k's test targets end (3 - k) steps before the last row; val and train before.
    CHECK(split ==
          nlohmann::json({{"val_rows", 120}, {"test_rows", T}, {"end_offset", (3 - k) * step}}));
    const nlohmann::json m = fold_file(out, k, "metrics.json");
    CHECK(m["test"]["windows"] == step);  // one window per origin
    CHECK(m["test"]["models"].contains("linear-start"));
    CHECK(r.folds[static_cast<size_t>(k - 1)].how == (k == 1 ? "trained" : "fine-tuned"));
    if (k > 1) {
      // The fine-tuned fold started from the previous fold's kept model.
      CHECK(m["warm_start"] == out + "/fold-" + std::to_string(k - 1) + "/model.safetensors");
      CHECK(m["epochs_run"] == 1);
      // A quarter of an epoch (the default): steps rounded up; fold 1 ran 2 whole epochs.
      const int64_t s1 = fold_file(out, 1, "metrics.json")["steps"].get<int64_t>() / 2;
      CHECK(m["steps"].get<int64_t>() >= (s1 + 3) / 4);
      CHECK(m["steps"].get<int64_t>() <= (s1 + 4) / 4);
    }
  }
  // Fold 3's first test target is row kRows - T = 625 (hourly from 01-01 00:00), fold 1's
  // two steps earlier, row 609.
  CHECK(r.folds[2].origin == "2020-01-27 01:00:00");
  CHECK(r.folds[0].origin == "2020-01-26 09:00:00");
  // Pooled = each fold's mean weighted by its windows (equal here: the plain mean).
  double sum = 0;
  for (const FoldResult& f : r.folds)
    sum += f.metrics["test"]["models"]["attnfc"]["scaled"]["mse"].get<double>();
  CHECK(r.pooled["attnfc"]["windows"] == 3 * step);
  CHECK(r.pooled["attnfc"]["scaled"]["mse"].get<double>() ==
        doctest::Approx(sum / 3).epsilon(1e-12));
  const std::string csv = slurp(out + "/folds.csv");
  CHECK(csv.rfind("fold,origin,how,kept,forecaster,windows,mse,mae,mse_original,", 0) == 0);
  CHECK(csv.find("\nall,,pooled,,attnfc,24,") != std::string::npos);
  const auto saved = nlohmann::json::parse(slurp(out + "/backtest.json"));
  CHECK(saved["folds"].size() == 3);
  CHECK(saved["pooled"] == r.pooled);
  CHECK(saved["warnings"] == r.warnings);
  // A fold's final scoring is of its test windows (its validation chose the epoch).
  CHECK_FALSE(fold_file(out, 2, "metrics.json").contains("val"));
  fs::remove_all(dir);
}

TEST_CASE("pool_folds weights each fold's mean by its windows") {
  auto fold = [](int windows, double mse) {
    const nlohmann::json part = {{"scaled", {{"mse", mse}, {"mae", 1.0}}},
                                 {"original", {{"mse", 2 * mse}, {"mae", 2.0}}}};
    const nlohmann::json m = {{"test", {{"windows", windows}, {"models", {{"attnfc", part}}}}}};
    return FoldResult{1, "", "trained", m, 0};
  };
  const nlohmann::json p = pool_folds({fold(1, 4.0), fold(3, 0.0)});
  CHECK(p["attnfc"]["windows"] == 4);
  CHECK(p["attnfc"]["scaled"]["mse"].get<double>() == doctest::Approx(1.0));
  CHECK(p["attnfc"]["original"]["mse"].get<double>() == doctest::Approx(2.0));
}

TEST_CASE("pooled_warnings names a forecaster that beats the model and linear-start folds") {
  BacktestResult r;
  auto entry = [](double mse) {
    return nlohmann::json{{"windows", 8}, {"scaled", {{"mse", mse}, {"mae", 0.0}}}};
  };
  r.pooled = {{"attnfc", entry(0.5)}, {"nlinear", entry(0.4)}, {"repeat-last", entry(0.9)}};
  r.folds.push_back({1, "", "trained", {{"kept", {{"epoch", 0}, {"model", "linear start"}}}}, 0});
  r.folds.push_back({2, "", "scored", {{"kept", {{"epoch", 0}, {"model", "warm start"}}}}, 0});
  const std::vector<std::string> w = pooled_warnings(r);
  REQUIRE(w.size() == 2);
  CHECK(w[0] ==
        "on the pooled test windows of all folds the model (MSE 0.50000) loses to "
        "nlinear (MSE 0.40000)");
  CHECK(w[1].rfind("1 of 2 folds kept the linear start", 0) == 0);
  r.pooled["attnfc"] = entry(0.3);
  r.folds.front().metrics["kept"]["model"] = "trained";
  CHECK(pooled_warnings(r).empty());
}

TEST_CASE("--refit once scores fold 1's parameters on the later folds, untouched") {
  const std::string dir = temp_dir("backtest_once");
  const std::string out = dir + "/bt";
  const BacktestResult r = backtest(micro_config(dir), options(out, 0));
  REQUIRE(r.status == BacktestResult::Status::kFinished);
  for (int k = 2; k <= 3; ++k) {
    CAPTURE(k);
    CHECK(r.folds[static_cast<size_t>(k - 1)].how == "scored");
    const nlohmann::json m = fold_file(out, k, "metrics.json");
    CHECK(m["epochs_run"] == 0);
    CHECK(m["kept"] == nlohmann::json({{"epoch", 0}, {"model", "warm start"}}));
    // A warm start kept is not the linear start: no "adds nothing" warning for it.
    for (const auto& w : m["warnings"])
      CHECK(w.get<std::string>().find("linear start (the") == std::string::npos);
    check_same_tensors(out + "/fold-1/model.safetensors",
                       out + "/fold-" + std::to_string(k) + "/model.safetensors");
  }
  fs::remove_all(dir);
}

TEST_CASE("an interrupted backtest resumes to the same models, bit for bit") {
  const std::string dir = temp_dir("backtest_resume");
  const RunConfig cfg = micro_config(dir);
  const BacktestResult whole = backtest(cfg, options(dir + "/whole", 1));
  REQUIRE(whole.status == BacktestResult::Status::kFinished);

  BacktestOptions o = options(dir + "/cut", 1);
  o.interrupt_after_steps = 5;  // inside fold 1's first epoch
  const BacktestResult cut = backtest(cfg, o);
  REQUIRE(cut.status == BacktestResult::Status::kInterrupted);
  CHECK(cut.interrupted_fold == 1);
  // Starting afresh over it is refused; resuming with another plan too.
  o.interrupt_after_steps = 0;
  CHECK_THROWS_AS(backtest(cfg, o), RunFolderError);
  o.resume = true;
  BacktestOptions other = o;
  other.folds = 2;
  CHECK_THROWS_WITH_AS(backtest(cfg, other), doctest::Contains("key 'folds'"), RunFolderError);
  const BacktestResult resumed = backtest(cfg, o);
  REQUIRE(resumed.status == BacktestResult::Status::kFinished);
  for (int k = 1; k <= 3; ++k)
    check_same_tensors(dir + "/whole/fold-" + std::to_string(k) + "/model.safetensors",
                       dir + "/cut/fold-" + std::to_string(k) + "/model.safetensors");
  CHECK(resumed.pooled == whole.pooled);
  fs::remove_all(dir);
}

TEST_CASE("a backtest that cannot be planned says which flag or key to change") {
  const std::string dir = temp_dir("backtest_plan");
  const RunConfig cfg = micro_config(dir);
  BacktestOptions o = options(dir + "/bt", 1);
  o.folds = 60;  // 60 x 8 origins leave no training rows
  CHECK_THROWS_WITH_AS(backtest(cfg, o),
                       doctest::Contains("--folds 60 --step 8: fold 1 does not fit"), InputError);
  CHECK_FALSE(fs::exists(dir + "/bt"));  // refused before the folder was made
  RunConfig ens = cfg;
  ens.train.ensemble = 2;
  CHECK_THROWS_WITH_AS(backtest(ens, options(dir + "/bt", 1)), doctest::Contains("--cold"),
                       InputError);
  fs::remove_all(dir);
}

TEST_CASE("a split counted from the end parses, round-trips and names a missing key") {
  nlohmann::json j = config_for("x.csv");
  j["data"]["split"] = {{"val_rows", 50}, {"test_rows", 20}, {"end_offset", 7}};
  j["train"]["epochs"] = 0;  // scoring the start alone is allowed
  const RunConfig r = parse_run_config(j);
  CHECK(r.data.split_protocol == "from_end");
  CHECK(r.data.end_offset == 7);
  CHECK(r.train.epochs == 0);
  CHECK(to_json(parse_run_config(to_json(r))) == to_json(r));
  j["train"]["epoch_fraction"] = 0.0;  // (0, 1]: an epoch of no steps is refused
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("train.epoch_fraction"), InputError);
  j["train"]["epoch_fraction"] = 0.5;
  CHECK(parse_run_config(j).train.epoch_fraction == 0.5);
  j["data"]["split"] = {{"test_rows", 20}};
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("data.split.val_rows: missing"),
                       InputError);
  j["data"]["split"] = {{"val_rows", 50}, {"test_rows", 20}, {"end_offset", -1}};
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("data.split.end_offset"), InputError);
}
