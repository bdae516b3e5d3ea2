// train.refit_epochs: after validation chose the kept model, it and its least-squares start
// learn the validation rows too (src/train/refit.cpp). What must hold: validation scores and
// the chosen model are those of the same run without a refit, bit for bit; the refit moves
// the weights; no test row reaches it; an interrupted scoring resumes to the same bits.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/base/safetensors.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/trainer.hpp"
#include "train_test_util.hpp"

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;

namespace {

// True when some tensor of the two files differs in some value.
bool differ(const std::string& a, const std::string& b) {
  const auto fa = safetensors::read(a), fb = safetensors::read(b);
  for (size_t i = 0; i < fa.tensors.size() && i < fb.tensors.size(); ++i)
    if (fa.tensors[i].values != fb.tensors[i].values) return true;
  return fa.tensors.size() != fb.tensors.size();
}

// The CSV of train_test::write_csv with every row from `from` on moved by +5 (the test rows
// of config_for's split start at row 520).
std::string shift_rows(const std::string& csv, const std::string& out, int from) {
  std::ifstream in(csv);
  std::ofstream o(out);
  std::string line;
  for (int row = -1; std::getline(in, line); ++row) {
    if (row < from) {
      o << line << "\n";
      continue;
    }
    const size_t a = line.find(','), b = line.find(',', a + 1);
    o << line.substr(0, a) << "," << std::stod(line.substr(a + 1, b - a - 1)) + 5 << ","
      << std::stod(line.substr(b + 1)) + 5 << "\n";
  }
  return out;
}

nlohmann::json metrics_of(const std::string& dir) {
  return nlohmann::json::parse(train_test::slurp(dir + "/metrics.json"));
}

}  // namespace

TEST_CASE("refit: the kept model learns the validation rows and never a test row") {
  const std::string dir = train_test::temp_dir("refit");
  const std::string csv = train_test::write_csv(dir, 700);
  nlohmann::json j = train_test::config_for(csv);
  j["model"]["linear_lookback"] = 32;
  const RunConfig plain = parse_run_config(j);
  j["train"]["refit_epochs"] = 1;
  const RunConfig refit = parse_run_config(j);

  REQUIRE(train::train(plain, TrainOptions{dir + "/a"}).status == TrainResult::Status::kFinished);
  REQUIRE(train::train(refit, TrainOptions{dir + "/b"}).status == TrainResult::Status::kFinished);
  // What validation chose is the run without a refit's, bit for bit, and scored the same.
  train_test::check_same_tensors(dir + "/a/model.safetensors", dir + "/b/selected.safetensors");
  train_test::check_same_tensors(dir + "/a/linear_start.safetensors",
                                 dir + "/b/linear_start_selected.safetensors");
  const nlohmann::json ma = metrics_of(dir + "/a"), mb = metrics_of(dir + "/b");
  CHECK(ma["val"] == mb["val"]);
  CHECK(ma["best_epoch"] == mb["best_epoch"]);
  // The refit moved the model and its start, on windows over the 520 training and
  // validation rows (2 channels, context 32, horizon 8): 2 x (520 - 40 + 1).
  CHECK(differ(dir + "/a/model.safetensors", dir + "/b/model.safetensors"));
  CHECK(differ(dir + "/a/linear_start.safetensors", dir + "/b/linear_start.safetensors"));
  REQUIRE(mb.contains("refit"));
  CHECK(mb["refit"]["windows"].get<int>() == 2 * (520 - 40 + 1));
  CHECK(mb["refit"]["linear_start_windows"].get<int>() == 2 * (520 - 40 + 1));
  CHECK(mb["refit"]["steps"].get<int>() == (962 + 31) / 32);
  CHECK(mb["refit"]["lr"].get<double>() == doctest::Approx(0.0003));  // lr / 10
  CHECK(ma["test"]["models"]["attnfc"] != mb["test"]["models"]["attnfc"]);
  CHECK(!ma.contains("refit"));
  // The refits say so (evaluate notes that their validation scores are in-sample).
  CHECK(LoadedModel::load(dir + "/b/model.safetensors").refit);
  CHECK(LoadedModel::load(dir + "/b/linear_start.safetensors").refit);
  CHECK_FALSE(LoadedModel::load(dir + "/b/selected.safetensors").refit);
  CHECK_FALSE(LoadedModel::load(dir + "/a/model.safetensors").refit);

  // Rows from 520 on (the test rows and after) changed: the same refit, bit for bit.
  j["data"]["path"] = shift_rows(csv, dir + "/shifted.csv", 520);
  REQUIRE(train::train(parse_run_config(j), TrainOptions{dir + "/c"}).status ==
          TrainResult::Status::kFinished);
  train_test::check_same_tensors(dir + "/b/model.safetensors", dir + "/c/model.safetensors");
  train_test::check_same_tensors(dir + "/b/linear_start.safetensors",
                                 dir + "/c/linear_start.safetensors");
  CHECK(metrics_of(dir + "/c")["val"] == mb["val"]);

  // Stopped before the final scoring, resumed: the same refit.
  TrainOptions d{dir + "/d"};
  d.interrupt_before_scoring = true;
  REQUIRE(train::train(refit, d).status == TrainResult::Status::kInterrupted);
  d.interrupt_before_scoring = false;
  d.resume = true;
  REQUIRE(train::train(refit, d).status == TrainResult::Status::kFinished);
  train_test::check_same_tensors(dir + "/b/model.safetensors", dir + "/d/model.safetensors");
  // The whole file, metadata included (no timing in it).
  CHECK(train_test::slurp(dir + "/b/model.safetensors") ==
        train_test::slurp(dir + "/d/model.safetensors"));
  CHECK(metrics_of(dir + "/d")["test"] == mb["test"]);
  fs::remove_all(dir);
}

TEST_CASE("refit: an ensemble scores its chosen members on validation, their refits on test") {
  const std::string dir = train_test::temp_dir("refit_ensemble");
  nlohmann::json j = train_test::config_for(train_test::write_csv(dir, 700));
  j["model"]["linear_lookback"] = 32;
  j["train"]["epochs"] = 2;
  j["train"]["ensemble"] = 2;
  const RunConfig plain = parse_run_config(j);
  j["train"]["refit_epochs"] = 0.5;
  j["train"]["refit_lr"] = 0.001;
  const RunConfig refit = parse_run_config(j);
  REQUIRE(train::train(plain, TrainOptions{dir + "/a"}).status == TrainResult::Status::kFinished);
  REQUIRE(train::train(refit, TrainOptions{dir + "/b"}).status == TrainResult::Status::kFinished);
  const nlohmann::json ma = metrics_of(dir + "/a"), mb = metrics_of(dir + "/b");
  CHECK(ma["val"] == mb["val"]);
  CHECK(ma["test"]["models"]["attnfc"] != mb["test"]["models"]["attnfc"]);
  for (int k = 1; k <= 2; ++k) {
    const std::string member = "/members/" + std::to_string(k);
    train_test::check_same_tensors(dir + "/a" + member + "/model.safetensors",
                                   dir + "/b" + member + "/selected.safetensors");
    CHECK(mb["members"][k - 1]["refit"]["steps"].get<int>() == (962 + 31) / 32 / 2 + 1);
  }
  CHECK(mb["refit"]["lr"].get<double>() == 0.001);
  CHECK(LoadedModel::load(dir + "/b/model.safetensors").refit);
  // The ensemble's linear-start row on test is member 1's refit start.
  train_test::check_same_tensors(dir + "/b/members/1/linear_start.safetensors",
                                 dir + "/b/linear_start.safetensors");
  fs::remove_all(dir);
}

TEST_CASE("refit: the config keys") {
  nlohmann::json j = train_test::config_for("unused.csv");
  CHECK(parse_run_config(j).train.refit_epochs == 0);
  CHECK(!to_json(parse_run_config(j))["train"].contains("refit_epochs"));  // same bytes as before
  j["train"]["refit_epochs"] = 0.25;
  const RunConfig r = parse_run_config(j);
  CHECK(r.train.refit_lr == doctest::Approx(0.0003));
  CHECK(to_json(r)["train"]["refit_epochs"] == 0.25);
  j["train"]["refit_epochs"] = -1;
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("train.refit_epochs"), InputError);
  j["train"]["refit_epochs"] = 1;
  j["train"]["refit_lr"] = 0;
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("train.refit_lr"), InputError);
}
