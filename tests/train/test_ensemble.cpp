// Seed ensembles (train.ensemble): members are the single runs of their seeds, the
// forecast is their mean, the run resumes bit for bit, and its keys are checked.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/ensemble.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/run_config.hpp"
#include "train_test_util.hpp"

namespace fs = std::filesystem;
using namespace attnfc;
using namespace attnfc::train;
using train_test::check_same_tensors;
using train_test::config_for;
using train_test::slurp;
using train_test::temp_dir;
using train_test::write_csv;

TEST_CASE("ensemble: members are their seeds' single runs, the forecast is their mean") {
  const std::string dir = temp_dir("ensemble");
  const std::string csv = write_csv(dir, 700);
  // No linear shortcut: on this series its least-squares start is nearly exact and every
  // member would keep it, leaving nothing for the seeds to change.
  nlohmann::json j = config_for(csv);
  j["train"]["epochs"] = 2;
  j["train"]["ensemble"] = 2;
  const RunConfig cfg = parse_run_config(j);

  const TrainResult r = train::train(cfg, {dir + "/ens"});
  REQUIRE(r.status == TrainResult::Status::kFinished);
  CHECK(r.members == 2);
  for (const char* f : {"config.json", "model.safetensors", "metrics.json",
                        "members/1/model.safetensors", "members/2/train_log.csv"})
    CHECK(fs::exists(dir + "/ens/" + f));

  // Member k is exactly what a single run with its seed trains; member 1's seed is `seed`.
  RunConfig single = cfg;
  single.train.ensemble = 1;
  CHECK(member_seed(cfg.train.seed, 1) == 7);
  REQUIRE(train::train(single, {dir + "/single1"}).status == TrainResult::Status::kFinished);
  check_same_tensors(dir + "/single1/model.safetensors", dir + "/ens/members/1/model.safetensors");
  single.train.seed = member_seed(cfg.train.seed, 2);
  CHECK(single.train.seed == 7 + kEnsembleSeedStride);
  REQUIRE(train::train(single, {dir + "/single"}).status == TrainResult::Status::kFinished);
  check_same_tensors(dir + "/single/model.safetensors", dir + "/ens/members/2/model.safetensors");

  // The ensemble's forecast is the members' sum divided by two, bit for bit.
  const LoadedModel ens = LoadedModel::load(dir + "/ens/model.safetensors");
  const LoadedModel m1 = LoadedModel::load(dir + "/ens/members/1/model.safetensors");
  const LoadedModel m2 = LoadedModel::load(dir + "/ens/members/2/model.safetensors");
  REQUIRE(ens.networks.size() == 2);
  CHECK(ens.run.train.ensemble == 2);
  CHECK(ens.run.train.seed == 7);
  const int C = 2, L = 32, H = 8, B = 3;
  SampleBuffers ctx(B, L, 0, C);
  for (size_t i = 0; i < ctx.context_values.size(); ++i) {
    ctx.context_values[i] = static_cast<float>(std::sin(0.3 * i));
    ctx.context_observed[i] = 1;
  }
  std::vector<float> fe(B * H * C), f1(fe.size()), f2(fe.size());
  model_forecaster(ens.members(), C)(ctx.view(B), fe.data());
  model_forecaster(m1.members(), C)(ctx.view(B), f1.data());
  model_forecaster(m2.members(), C)(ctx.view(B), f2.data());
  CHECK(f1 != f2);
  for (size_t i = 0; i < fe.size(); ++i) CHECK(fe[i] == (f1[i] + f2[i]) / 2.0f);

  // metrics.json scores the ensemble and lists each member's own scores.
  const auto metrics = nlohmann::json::parse(slurp(dir + "/ens/metrics.json"));
  REQUIRE(metrics["members"].size() == 2);
  CHECK(metrics["members"][1]["seed"].get<uint64_t>() == 7 + kEnsembleSeedStride);
  const auto m2_metrics = nlohmann::json::parse(slurp(dir + "/ens/members/2/metrics.json"));
  CHECK(metrics["members"][1]["test_mse"] ==
        m2_metrics["test"]["models"]["attnfc"]["scaled"]["mse"]);
  CHECK(metrics["best_val_loss"] == metrics["val"]["models"]["attnfc"]["scaled"]["mse"]);
  const auto m1_metrics = nlohmann::json::parse(slurp(dir + "/ens/members/1/metrics.json"));
  CHECK(metrics["steps"] ==
        m1_metrics["steps"].get<int64_t>() + m2_metrics["steps"].get<int64_t>());
  // The step budgets below assume both members take the same number of steps (fixed
  // epochs, no early stopping): say so, so that a change here fails loudly.
  REQUIRE(m1_metrics["steps"] == m2_metrics["steps"]);
  CHECK(metrics["members"][0]["best_epoch"].get<int>() >= 1);
  // A member scores itself only; the ensemble scores the baselines (and its linear start,
  // which this config has not).
  for (const char* model : {"nlinear", "repeat-last"}) {
    CHECK_FALSE(m1_metrics["test"]["models"].contains(model));
    CHECK(metrics["test"]["models"].contains(model));
  }

  // Interrupted inside member 1 and again inside member 2, then resumed: the same model.
  TrainOptions b{dir + "/b"};
  b.interrupt_after_steps = 5;
  CHECK(train::train(cfg, b).status == TrainResult::Status::kInterrupted);
  CHECK_THROWS_WITH_AS(train::train(cfg, b), doctest::Contains("already holds a run"), InputError);
  b.resume = true;
  b.interrupt_after_steps = r.steps / 2 + 3;  // past member 1's end
  CHECK(train::train(cfg, b).status == TrainResult::Status::kInterrupted);
  CHECK(fs::exists(dir + "/b/members/1/metrics.json"));
  CHECK_FALSE(fs::exists(dir + "/b/members/2/metrics.json"));
  // The stopped ensemble's folder is taken: a one-network run needs --resume, and
  // resuming it as one network names the key that differs.
  CHECK_THROWS_WITH_AS(train::train(single, {dir + "/b"}), doctest::Contains("already holds a run"),
                       InputError);
  TrainOptions as_single = b;
  CHECK_THROWS_WITH_AS(train::train(single, as_single),
                       doctest::Contains("train.ensemble: found 1, but the run in"), InputError);
  // A damaged member record is named, not a crash.
  fs::copy(dir + "/b", dir + "/damaged", fs::copy_options::recursive);
  std::ofstream(dir + "/damaged/members/1/metrics.json") << "{}";
  TrainOptions damaged = b;
  damaged.out_dir = dir + "/damaged";
  CHECK_THROWS_WITH_AS(train::train(cfg, damaged),
                       doctest::Contains("members/1/metrics.json: not the metrics.json"),
                       InputError);
  b.interrupt_after_steps = 0;
  const TrainResult rb = train::train(cfg, b);
  REQUIRE(rb.status == TrainResult::Status::kFinished);
  CHECK(rb.steps == r.steps);
  check_same_tensors(dir + "/ens/model.safetensors", dir + "/b/model.safetensors");
  CHECK(train::train(cfg, b).status == TrainResult::Status::kAlreadyFinished);

  // Ctrl-C while member 1, stopped after its last step, resumes only to score itself: the
  // scoring stops too (issue 18: a Ctrl-C during the final evaluation is honoured), member
  // 1's trained model is kept unscored, and member 2 is not started.
  TrainOptions c{dir + "/c"};
  c.interrupt_after_steps = r.steps / 2;
  CHECK(train::train(cfg, c).status == TrainResult::Status::kInterrupted);
  CHECK_FALSE(fs::exists(dir + "/c/members/1/metrics.json"));
  const std::atomic<bool> pressed{true};
  c.resume = true;
  c.interrupt_after_steps = 0;
  c.interrupt = &pressed;
  CHECK(train::train(cfg, c).status == TrainResult::Status::kInterrupted);
  CHECK(fs::exists(dir + "/c/members/1/model.safetensors"));
  CHECK_FALSE(fs::exists(dir + "/c/members/1/metrics.json"));
  CHECK_FALSE(fs::exists(dir + "/c/members/2"));
  c.interrupt = nullptr;
  REQUIRE(train::train(cfg, c).status == TrainResult::Status::kFinished);
  check_same_tensors(dir + "/ens/model.safetensors", dir + "/c/model.safetensors");
  fs::remove_all(dir);
}

TEST_CASE("train.ensemble: range and seed room are named") {
  nlohmann::json j = config_for("x.csv");
  j["train"]["ensemble"] = 0;
  CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains("train.ensemble"), InputError);
  j["train"]["ensemble"] = 3;
  j["train"]["seed"] = int64_t{1} << 53;
  CHECK_THROWS_WITH_AS(parse_run_config(j),
                       doctest::Contains("train.seed: found 9007199254740992, expected at most "
                                         "9007199252740986 with train.ensemble 3"),
                       InputError);
}

TEST_CASE("ensemble_contexts: members read their own lengths of the same windows") {
  const std::string dir = temp_dir("ensemble_contexts");
  const std::string csv = write_csv(dir, 700);
  nlohmann::json j = config_for(csv);
  j["model"]["linear_lookback"] = 32;
  j["train"]["epochs"] = 1;
  j["train"]["ensemble"] = 3;
  j["train"]["ensemble_contexts"] = {32, 16};  // members: 32, 16, 32
  const RunConfig cfg = parse_run_config(j);
  CHECK(member_model(cfg, 2).context_length == 16);
  CHECK(member_model(cfg, 2).linear_lookback == 16);  // min(linear_lookback, its context)
  CHECK(member_model(cfg, 3).context_length == 32);
  REQUIRE(train::train(cfg, {dir + "/ens"}).status == TrainResult::Status::kFinished);

  // Member 2 is the single run of its seed at context 16.
  RunConfig single = cfg;
  single.train.ensemble = 1;
  single.train.ensemble_contexts.clear();
  single.train.seed = member_seed(cfg.train.seed, 2);
  single.model = member_model(cfg, 2);
  REQUIRE(train::train(single, {dir + "/single"}).status == TrainResult::Status::kFinished);
  check_same_tensors(dir + "/single/model.safetensors", dir + "/ens/members/2/model.safetensors");

  // The model file holds each member at its length; the forecast from 32-step contexts is
  // the mean of the members' forecasts, member 2 reading the last 16 steps.
  const LoadedModel ens = LoadedModel::load(dir + "/ens/model.safetensors");
  REQUIRE(ens.networks.size() == 3);
  CHECK(ens.networks[0]->config().context_length == 32);
  CHECK(ens.networks[1]->config().context_length == 16);
  CHECK(ens.context() == 32);
  const int C = 2, L = 32, H = 8, B = 3;
  SampleBuffers ctx(B, L, 0, C), tail(B, 16, 0, C);
  for (size_t i = 0; i < ctx.context_values.size(); ++i) {
    ctx.context_values[i] = static_cast<float>(std::sin(0.3 * i));
    ctx.context_observed[i] = 1;
  }
  for (int b = 0; b < B; ++b)  // the last 16 of each window, [B, 16, C]
    for (size_t i = 0; i < 16 * C; ++i) {
      tail.context_values[b * 16 * C + i] = ctx.context_values[(b * L + 16) * C + i];
      tail.context_observed[b * 16 * C + i] = 1;
    }
  std::vector<float> fe(B * H * C), f[3];
  model_forecaster(ens.members(), C)(ctx.view(B), fe.data());
  for (int k = 0; k < 3; ++k) {
    const LoadedModel m =
        LoadedModel::load(dir + "/ens/members/" + std::to_string(k + 1) + "/model.safetensors");
    f[k].resize(fe.size());
    model_forecaster(m.members(), C)(k == 1 ? tail.view(B) : ctx.view(B), f[k].data());
  }
  CHECK(f[0] != f[1]);
  for (size_t i = 0; i < fe.size(); ++i) CHECK(fe[i] == (f[0][i] + f[1][i] + f[2][i]) / 3.0f);
  const auto metrics = nlohmann::json::parse(slurp(dir + "/ens/metrics.json"));
  CHECK(metrics["members"][1]["context_length"] == 16);
  CHECK(nlohmann::json::parse(slurp(dir + "/ens/config.json"))["train"]["ensemble_contexts"] ==
        nlohmann::json({32, 16}));
  fs::remove_all(dir);
}

TEST_CASE("train.ensemble_contexts: each length is checked and named") {
  nlohmann::json j = config_for("x.csv");
  j["train"]["ensemble"] = 2;
  auto fails = [&](nlohmann::json lengths, const std::string& message) {
    j["train"]["ensemble_contexts"] = lengths;
    CHECK_THROWS_WITH_AS(parse_run_config(j), doctest::Contains(message.c_str()), InputError);
  };
  fails({16, 32}, "train.ensemble_contexts: entry 1 is 16; expected model.context_length (32)");
  fails({32, 40}, "entry 2 is 40; expected at most model.context_length (32)");
  fails({32, 12},
        "entry 2 is 12; expected a length the model accepts (config key "
        "'model.context_length': found 12, expected a multiple of model.patch_len (8)");
  fails({32, 0}, "train.ensemble_contexts");
  fails({32, 16, 8}, "found 3 context lengths for 2 members (train.ensemble)");
  fails("32", "train.ensemble_contexts");
  j["train"]["ensemble"] = 1;
  fails({32}, "expected train.ensemble 2 or more");
  j["train"]["ensemble"] = 2;
  j["train"]["ensemble_contexts"] = {32, 24};
  CHECK(parse_run_config(j).train.ensemble_contexts == std::vector<int>{32, 24});
}

TEST_CASE("ensemble_contexts: a shorter member may keep series too short for member 1") {
  const std::string dir = temp_dir("ensemble_contexts_panel");
  const std::string csv = dir + "/panel.csv";
  {
    std::ofstream out(csv);
    out << "id,time,y\n";
    // 40 rows of C: too few for context 32 + 2 x horizon 8, enough for 16.
    for (const auto& [id, rows] :
         std::vector<std::pair<std::string, int>>{{"A", 200}, {"C", 40}, {"B", 200}})
      for (int t = 0; t < rows; ++t)
        out << id << ",1970-01-" << (1 + t / 24) << (t % 24 < 10 ? " 0" : " ") << t % 24
            << ":00:00," << 5 + std::sin(0.26 * t) + (id == "B" ? 3 : 0) << "\n";
  }
  nlohmann::json j = config_for(csv);
  j["data"] = {{"path", csv},
               {"id_column", "id"},
               {"time_column", "time"},
               {"targets", {"y"}},
               {"split", "last_horizon"}};
  j["train"]["epochs"] = 1;
  j["train"]["ensemble"] = 2;
  j["train"]["ensemble_contexts"] = {32, 16};
  REQUIRE(train::train(parse_run_config(j), {dir + "/ens"}).status ==
          TrainResult::Status::kFinished);
  CHECK(LoadedModel::load(dir + "/ens/members/2/model.safetensors").series_scalers.size() == 3);
  const LoadedModel ens = LoadedModel::load(dir + "/ens/model.safetensors");
  CHECK(ens.series_scalers.ids() == std::vector<std::string>{"A", "B"});  // member 1's
  fs::remove_all(dir);
}

TEST_CASE("ensemble_contexts: sizes chosen from the data are the ensemble's, not a member's") {
  const std::string dir = temp_dir("ensemble_contexts_auto");
  const std::string csv = write_csv(dir, 700);
  nlohmann::json j = config_for(csv);
  j["model"]["patch_len"] = "auto";  // 4 for context 32 (L / 8); a member of 16 alone: 2
  j["train"]["epochs"] = 1;
  j["train"]["ensemble"] = 2;
  j["train"]["ensemble_contexts"] = {32, 16};
  REQUIRE(train::train(parse_run_config(j), {dir + "/ens"}).status ==
          TrainResult::Status::kFinished);
  const LoadedModel ens = LoadedModel::load(dir + "/ens/model.safetensors");
  CHECK(ens.networks[1]->config().context_length == 16);
  CHECK(ens.networks[1]->config().patch_len == ens.networks[0]->config().patch_len);
  fs::remove_all(dir);
}

TEST_CASE("ensemble_contexts: a member that sees no observed value abstains from that sample") {
  const std::string dir = temp_dir("ensemble_contexts_abstain");
  nlohmann::json j = config_for(write_csv(dir, 700));
  j["model"]["quantiles"] = {0.1, 0.5, 0.9};
  j["train"]["epochs"] = 1;
  j["train"]["ensemble"] = 3;
  j["train"]["ensemble_contexts"] = {32, 16};  // members: 32, 16, 32
  REQUIRE(train::train(parse_run_config(j), {dir + "/ens"}).status ==
          TrainResult::Status::kFinished);
  const LoadedModel ens = LoadedModel::load(dir + "/ens/model.safetensors");
  const int C = 2, L = 32, H = 8, B = 3, Q = 3;
  SampleBuffers full(B, L, 0, C), gap(B, L, 0, C);
  for (size_t i = 0; i < full.context_values.size(); ++i) {
    full.context_values[i] = gap.context_values[i] = static_cast<float>(std::sin(0.3 * i));
    full.context_observed[i] = gap.context_observed[i] = 1;
  }
  // Window 1, channel 0: its last 16 steps missing, so member 2 (16 steps) sees nothing.
  for (int t = 16; t < L; ++t) gap.context_observed[(1 * L + t) * C + 0] = 0;
  auto forecast = [&](const Members& members, const SampleBuffers& s, std::vector<float>& lv) {
    std::vector<float> point(B * H * C);
    model_forecaster(members, C, 0, &lv)(s.view(B), point.data());
    return point;
  };
  std::vector<float> lv_full, lv_gap, lv1, lv3;
  const std::vector<float> f_full = forecast(ens.members(), full, lv_full);
  const std::vector<float> f_gap = forecast(ens.members(), gap, lv_gap);  // threw before
  const LoadedModel m1 = LoadedModel::load(dir + "/ens/members/1/model.safetensors");
  const LoadedModel m3 = LoadedModel::load(dir + "/ens/members/3/model.safetensors");
  const std::vector<float> f1 = forecast(m1.members(), gap, lv1),
                           f3 = forecast(m3.members(), gap, lv3);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int c = 0; c < C; ++c) {
        const bool abstained = b == 1 && c == 0;
        const int i = (b * H + h) * C + c;
        CHECK(f_gap[i] == (abstained ? (f1[i] + f3[i]) / 2.0f : f_full[i]));
        for (int q = 0; q < Q; ++q) {
          const int k = ((b * H + h) * Q + q) * C + c;
          CHECK(lv_gap[k] == (abstained ? (0.0f + lv1[k] + lv3[k]) / 2.0f : lv_full[k]));
        }
      }
  // With nothing observed in all 32 steps no member can forecast: one clear error.
  for (int t = 0; t < L; ++t) gap.context_observed[(1 * L + t) * C + 0] = 0;
  CHECK_THROWS_AS(forecast(ens.members(), gap, lv_gap), InputError);
  fs::remove_all(dir);
}
