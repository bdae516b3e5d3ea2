// attnfc attention demo, run as a user would.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <spdlog/spdlog.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/trainer.hpp"
#include "cli_run.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;
using attnfc_test::slurp;

namespace {
using cli_test::Run;
using cli_test::run_attnfc;

// The printed matrix rows: lines starting with a row index, then L cells.
std::vector<std::vector<std::string>> matrix_rows(const std::string& out, int L) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(out);
  std::string line;
  bool in_matrix = false;
  while (std::getline(in, line)) {
    if (contains(line, "Attention weights")) {
      in_matrix = true;
      std::getline(in, line);  // column header
      continue;
    }
    if (!in_matrix) continue;
    if (line.empty()) break;
    std::istringstream cells(line);
    int index = -1;
    cells >> index;
    std::vector<std::string> row;
    std::string c;
    while (cells >> c) row.push_back(c);
    REQUIRE(static_cast<int>(row.size()) == L);
    rows.push_back(row);
  }
  return rows;
}
}  // namespace

TEST_CASE("attention demo prints the 8x8 causal matrix of a period-4 sine, rows summing to one") {
  const Run r = run_attnfc("attention demo");
  CHECK(r.code == 0);
  const auto rows = matrix_rows(r.out, 8);
  REQUIRE(rows.size() == 8u);
  for (int i = 0; i < 8; ++i) {
    double sum = 0;
    for (int j = 0; j < 8; ++j) {
      if (j > i) {
        CHECK(rows[i][j] == "-");
      } else {
        CHECK(rows[i][j].size() == 4u);  // two decimals: "0.33"
        sum += std::stod(rows[i][j]);
      }
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(0.03));  // printed with two decimals
  }
  CHECK(rows[0][0] == "1.00");
  // Same phase four steps back outweighs the opposite phase two steps back.
  CHECK(std::stod(rows[7][3]) > std::stod(rows[7][5]));
  CHECK(contains(r.out, "rows sum to one") == false);
  CHECK(contains(r.out, "Every row sums to one"));
  CHECK(contains(r.out, "OK"));
  CHECK(contains(r.out, "Dominant earlier lag: 4 (series period 4)"));
}

TEST_CASE("attention demo explores other periods, lengths and series") {
  const Run r = run_attnfc("attention demo --period 6 --length 20");
  CHECK(r.code == 0);
  CHECK(matrix_rows(r.out, 20).size() == 20u);
  CHECK(contains(r.out, "Dominant earlier lag: 6 (series period 6)"));
  const Run t = run_attnfc("attention demo --series trend");
  CHECK(t.code == 0);
  CHECK(contains(t.out, "trend"));
  CHECK(contains(t.out, "Dominant earlier lag: 1"));
  const Run n = run_attnfc("attention demo --series noise --seed 3");
  CHECK(n.code == 0);
  CHECK(n.out == run_attnfc("attention demo --series noise --seed 3").out);
  CHECK(n.out != run_attnfc("attention demo --series noise --seed 4").out);
  const Run u = run_attnfc("attention demo --unscaled");
  CHECK(u.code == 0);
  CHECK(contains(u.out, "softmax(Q K^T + causal mask)"));
}

TEST_CASE("attention demo --width shows the softmax saturating without the divisor") {
  const Run r = run_attnfc("attention demo --width 1024");
  CHECK(r.code == 0);
  CHECK(contains(r.out, "sqrt(d_k)"));
  // Rows for D = 1, 4, 16, 64, 256, 1024.
  for (const char* d :
       {"\n     1 |", "\n     4 |", "\n    16 |", "\n    64 |", "\n   256 |", "\n  1024 |"})
    CHECK(contains(r.out, d));
  CHECK(contains(r.out, "At D = 1024"));
}

TEST_CASE("attention demo rejects bad settings with exit code 2") {
  for (const char* args :
       {"attention demo --period 1", "attention demo --length 0", "attention demo --series square",
        "attention demo --width 0", "attention"}) {
    const Run r = run_attnfc(args);
    CHECK_MESSAGE(r.code == 2, args);
  }
  const Run r = run_attnfc("attention demo --series square");
  CHECK(contains(r.out, "square"));
}

// ---------------------------------------------------------------- the trained-model report
namespace {

// A tiny model trained (briefly) on an hourly series with a daily period, once per test run.
struct TrainedModel {
  std::string dir, csv, model;
  explicit TrainedModel(bool mixed) {
    char tmpl[] = "/tmp/attnfc_attention_cli_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    csv = dir + "/hourly.csv";
    std::string text = "date,load,temp\n";
    char line[128];
    std::minstd_rand rng(7);  // fully specified by the standard: same noise everywhere
    for (int t = 0; t < 24 * 30; ++t) {
      const double noise = 0.2 * (static_cast<double>(rng()) / rng.max() - 0.5);
      std::snprintf(line, sizeof line, "2024-01-%02d %02d:00:00,%.4f,%.4f\n", 1 + t / 24, t % 24,
                    10 + 3 * std::sin(2 * M_PI * t / 24) + noise, 5 + 0.01 * t);
      text += line;
    }
    attnfc::write_file_atomic(csv, text);
    const nlohmann::json cfg = {{"data",
                                 {{"path", csv},
                                  {"columns", {"load", "temp"}},
                                  {"split", {{"train_frac", 0.7}, {"test_frac", 0.15}}}}},
                                {"model",
                                 {{"context_length", 48},
                                  {"patch_len", 4},
                                  {"horizon", 8},
                                  {"d_model", 8},
                                  {"n_heads", 2},
                                  {"n_layers", 2},
                                  {"dropout", 0.0},
                                  {"channel_mode", mixed ? "mixed" : "independent"},
                                  {"channels", 2}}},
                                {"train",
                                 {{"epochs", 1},
                                  {"batch_size", 8},
                                  {"max_steps_per_epoch", 3},
                                  {"max_val_windows", 16},
                                  {"evaluate_test", false},
                                  {"seed", 1}}}};
    spdlog::set_level(spdlog::level::warn);  // the trainer's progress is not under test
    attnfc::train::TrainOptions opts;
    opts.out_dir = dir + "/run";
    attnfc::train::train(attnfc::train::parse_run_config(cfg), opts);
    model = attnfc::train::RunPaths{opts.out_dir}.model();
  }
  ~TrainedModel() { std::filesystem::remove_all(dir); }
};

TrainedModel& attention_model() {
  static TrainedModel m(false);
  return m;
}

}  // namespace

TEST_CASE("attention --model reports every layer and head, with CSV and JSON") {
  const TrainedModel& m = attention_model();
  const std::string csv_out = m.dir + "/att.csv", json_out = m.dir + "/att.json";
  const Run r = run_attnfc("attention --model " + m.model + " --input " + m.csv + " --csv " +
                           csv_out + " --json " + json_out);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  for (const char* head : {"layer 0 head 0", "layer 0 head 1", "layer 1 head 0", "layer 1 head 1"})
    CHECK(contains(r.out, head));
  CHECK(contains(r.out, "12 patches of 4"));
  CHECK(contains(r.out, "Series autocorrelation peak: lag 24 steps"));
  CHECK(contains(r.out, "rows 672..719"));  // the last 48 of 720 rows
  CHECK(contains(r.out, "channel load"));

  // CSV: the lower triangle of every head, rows summing to one.
  const std::string csv = slurp(csv_out);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line == "layer,head,query_patch,key_patch,weight");
  std::map<std::tuple<int, int, int>, double> row_sums;
  int n = 0;
  while (std::getline(in, line)) {
    int layer, head, q, k;
    double w;
    REQUIRE(std::sscanf(line.c_str(), "%d,%d,%d,%d,%lf", &layer, &head, &q, &k, &w) == 5);
    CHECK(k <= q);
    row_sums[{layer, head, q}] += w;
    ++n;
  }
  CHECK(n == 2 * 2 * (12 * 13 / 2));
  for (const auto& [key, sum] : row_sums) CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));

  const nlohmann::json j = nlohmann::json::parse(slurp(json_out));
  CHECK(j["autocorrelation_peak_steps"] == 24);
  CHECK(j["autocorrelation_of_differences"].size() == 49u);  // lags 0..context
  REQUIRE(j["layers"].size() == 2u);
  REQUIRE(j["layers"][1]["heads"].size() == 2u);
  const auto& h = j["layers"][1]["heads"][0];
  CHECK(h["weights"].size() == 12u);
  CHECK(h["lag_lift"].size() == 12u);
  CHECK(h["dominant_lag_steps"].get<int>() == 4 * h["dominant_lag_patches"].get<int>());
  CHECK(h["weights"][0][1].get<double>() == 0.0);  // causal: query 0 never sees key 1
}

TEST_CASE("attention --model: --window, --channel and bad input") {
  const TrainedModel& m = attention_model();
  const std::string base = "attention --model " + m.model + " --input " + m.csv;
  const Run w = run_attnfc(base + " --window 100 --channel temp --no-heatmap");
  CHECK(w.code == 0);
  CHECK(contains(w.out, "rows 52..99"));
  CHECK(contains(w.out, "channel temp"));
  CHECK(contains(w.out, "no significant peak"));  // temp is a pure trend
  const Run short_window = run_attnfc(base + " --window 20 --no-heatmap");
  CHECK(short_window.code == 0);
  CHECK(contains(short_window.out, "padded in front"));
  const Run past_end = run_attnfc(base + " --window 721");
  CHECK(past_end.code == 2);
  CHECK(contains(past_end.out, "--window"));
  CHECK(run_attnfc(base + " --channel nosuch").code == 2);
  const Run missing =
      run_attnfc("attention --model " + m.dir + "/nope.safetensors --input " + m.csv);
  CHECK(missing.code == 2);
  CHECK(contains(missing.out, "nope.safetensors"));
  CHECK(run_attnfc("attention --input " + m.csv).code == 2);
}

TEST_CASE("attention --model on a mixed-channel model") {
  const TrainedModel m(true);
  const Run r = run_attnfc("attention --model " + m.model + " --input " + m.csv +
                           " --channel temp --no-heatmap");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(contains(r.out, "layer 1 head 1"));
  CHECK(contains(r.out, "channel temp"));
}
