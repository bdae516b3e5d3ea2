// The run folder and the phases around the loop: one validation metric, the lock, a run
// stopped before its first checkpoint, a tampered train_state, and failures that must come
// before training rather than after it.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/base/safetensors.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/run_folder.hpp"
#include "attnfc/train/trainer.hpp"
#include "train_test_util.hpp"

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;

using train_test::check_same_tensors;
using train_test::config_for;
using train_test::temp_dir;
using train_test::write_csv;

namespace {

RunConfig small_run(const std::string& csv) {
  nlohmann::json j = config_for(csv);
  j["train"]["epochs"] = 2;
  return parse_run_config(j);
}

// The message of the InputError that `f` throws ("" if none).
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("early stopping's validation metric is metrics.json's, bit for bit") {
  const std::string dir = temp_dir("metric");
  const RunConfig cfg = small_run(write_csv(dir, 700));  // two channels, independent
  const TrainResult r = train::train(cfg, {dir + "/a"});
  REQUIRE(r.status == TrainResult::Status::kFinished);
  const double reported = r.metrics["val"]["models"]["attnfc"]["scaled"]["mse"].get<double>();
  CHECK(r.best_val_loss == reported);  // the same function on the same model: the same bits
  CHECK(r.metrics["best_val_loss"].get<double>() == reported);
  fs::remove_all(dir);
}

TEST_CASE("a run folder is locked for the whole run") {
  const std::string dir = temp_dir("lock");
  const RunConfig cfg = small_run(write_csv(dir, 700));
  const RunFolder held(dir + "/a");  // as another training would hold it
  const std::string e = input_error([&] { train::train(cfg, {dir + "/a"}); });
  CHECK(e.find("another training is writing this run folder") != std::string::npos);
  CHECK(e.find("(process ") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/a/config.json"));  // nothing was written
  fs::remove_all(dir);
}

TEST_CASE("a run stopped before its first checkpoint is named, and --resume restarts it") {
  const std::string dir = temp_dir("stuck");
  const RunConfig cfg = small_run(write_csv(dir, 700));
  REQUIRE(train::train(cfg, {dir + "/a"}).status == TrainResult::Status::kFinished);
  // What a kill during epoch 1 leaves: the resolved config and the epoch-0 model only.
  fs::create_directories(dir + "/b");
  fs::copy_file(dir + "/a/config.json", dir + "/b/config.json");
  fs::copy_file(dir + "/a/model.safetensors", dir + "/b/model.safetensors");
  const std::string e = input_error([&] { train::train(cfg, {dir + "/b"}); });
  CHECK(e.find("stopped before its first checkpoint") != std::string::npos);
  TrainOptions resume{dir + "/b"};
  resume.resume = true;
  REQUIRE(train::train(cfg, resume).status == TrainResult::Status::kFinished);
  check_same_tensors(dir + "/a/model.safetensors", dir + "/b/model.safetensors");
  // An empty folder has nothing to resume.
  fs::create_directories(dir + "/c");
  CHECK(input_error([&] {
          train::train(cfg, {dir + "/c", true});
        }).find("nothing to resume") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a tampered train_state is an InputError naming the key, never a runaway loop") {
  const std::string dir = temp_dir("tamper");
  const RunConfig cfg = small_run(write_csv(dir, 700));
  TrainOptions stop{dir + "/a"};
  stop.interrupt_after_steps = 3;
  REQUIRE(train::train(cfg, stop).status == TrainResult::Status::kInterrupted);
  const std::string ckpt = dir + "/a/checkpoint.safetensors";
  const safetensors::File original = safetensors::read(ckpt);
  const nlohmann::json state = nlohmann::json::parse(original.metadata.at("train_state"));
  struct Case {
    const char* what;
    std::string train_state;
    const char* expect;
  };
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json s = state;
    s[key] = v;
    return s.dump();
  };
  const Case cases[] = {
      {"epoch -2^31", with("epoch", -2147483648LL), "train_state.epoch"},
      {"epoch 1e10", with("epoch", 1e10), "train_state.epoch"},
      {"global step past the run", with("global_step", 1LL << 40), "train_state.global_step"},
      {"a string step", with("step_in_epoch", "3"), "train_state.step_in_epoch"},
      {"negative seconds", with("epoch_seconds", -1.0), "train_state.epoch_seconds"},
      {"not JSON", "{epoch: 1", "train_state"},
      {"missing", "", "train_state"},
      {"records of another length", with("records", nlohmann::json::array({1})),
       "train_state.records"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    safetensors::File f = original;
    if (c.train_state.empty())
      f.metadata.erase("train_state");
    else
      f.metadata["train_state"] = c.train_state;
    safetensors::write(ckpt, f);
    TrainOptions resume{dir + "/a"};
    resume.resume = true;
    const std::string e = input_error([&] { train::train(cfg, resume); });
    CHECK(e.find(ckpt) != std::string::npos);
    CHECK(e.find(c.expect) != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("what could only fail after training fails before it, and writes no model") {
  const std::string dir = temp_dir("early");
  // 100 rows: training and validation windows exist, but NLinear, a baseline every run is
  // scored against, cannot be fit on 70 training rows with a context of 32 (31 windows for
  // 33 unknowns).
  nlohmann::json j = config_for(write_csv(dir, 100));
  j["data"]["split"] = "custom";
  j["data"]["columns"] = {"load"};
  const std::string e = input_error([&] { train::train(parse_run_config(j), {dir + "/a"}); });
  CHECK(e.find("baselines") != std::string::npos);
  CHECK(e.find("model.context_length") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/a/model.safetensors"));
  fs::remove_all(dir);
}

TEST_CASE("temporary files of a killed training are removed when the folder is opened") {
  const std::string dir = temp_dir("stale");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  ::waitpid(child, nullptr, 0);  // a process id that no longer runs
  fs::create_directories(dir + "/a");
  const std::string dead = dir + "/a/.model.safetensors.tmp." + std::to_string(child) + ".Ab12Cd";
  const std::string alive =
      dir + "/a/.model.safetensors.tmp." + std::to_string(::getpid()) + ".Xy34Zw";
  std::ofstream(dead) << "partial";
  std::ofstream(alive) << "being written";
  { const RunFolder folder(dir + "/a"); }
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(alive));  // its writer still runs
  fs::remove_all(dir);
}

TEST_CASE("a huge linear lookback and a model file's bad column names are named, not bad_alloc") {
  const std::string dir = temp_dir("named");
  const std::string csv = write_csv(dir, 700);
  nlohmann::json j = config_for(csv);
  j["model"]["linear_lookback"] = 65536;  // inside the documented range
  const std::string e = input_error([&] { train::train(parse_run_config(j), {dir + "/a"}); });
  CHECK(e.find("model.linear_lookback: found 65536") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/a/model.safetensors"));

  REQUIRE(train::train(small_run(csv), {dir + "/b"}).status == TrainResult::Status::kFinished);
  safetensors::File f = safetensors::read(dir + "/b/model.safetensors");
  f.metadata["columns"] = "[1]";
  safetensors::write(dir + "/b/bad.safetensors", f);
  const std::string m = input_error([&] { LoadedModel::load(dir + "/b/bad.safetensors"); });
  CHECK(m.find("metadata 'columns'") != std::string::npos);
  CHECK(m.find("expected a non-empty column name") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("an interrupt during the final scoring keeps the model, and --resume scores it") {
  const std::string dir = temp_dir("score_int");
  const RunConfig cfg = small_run(write_csv(dir, 700));
  const TrainResult whole = train::train(cfg, {dir + "/a"});
  REQUIRE(whole.status == TrainResult::Status::kFinished);
  TrainOptions stop{dir + "/b"};
  stop.interrupt_before_scoring = true;  // as a Ctrl-C that lands once training is done
  CHECK(train::train(cfg, stop).status == TrainResult::Status::kInterrupted);
  CHECK(fs::exists(dir + "/b/model.safetensors"));
  CHECK_FALSE(fs::exists(dir + "/b/metrics.json"));
  TrainOptions resume{dir + "/b"};
  resume.resume = true;
  const TrainResult r = train::train(cfg, resume);
  REQUIRE(r.status == TrainResult::Status::kFinished);
  CHECK(r.steps_this_call == 0);  // nothing trained again
  check_same_tensors(dir + "/a/model.safetensors", dir + "/b/model.safetensors");
  for (const char* part : {"val", "test"})
    CHECK(r.metrics[part]["models"] == whole.metrics[part]["models"]);
  // An ensemble too: its members are kept, and resuming scores their mean.
  RunConfig ens = cfg;
  ens.train.ensemble = 2;
  TrainOptions stop_ens{dir + "/e"};
  stop_ens.interrupt_before_scoring = true;
  CHECK(train::train(ens, stop_ens).status == TrainResult::Status::kInterrupted);
  CHECK(fs::exists(dir + "/e/members/2/metrics.json"));
  CHECK_FALSE(fs::exists(dir + "/e/metrics.json"));
  TrainOptions resume_ens{dir + "/e"};
  resume_ens.resume = true;
  CHECK(train::train(ens, resume_ens).status == TrainResult::Status::kFinished);
  CHECK(fs::exists(dir + "/e/metrics.json"));
  fs::remove_all(dir);
}
