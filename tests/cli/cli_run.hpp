#pragma once
// Helpers for CLI tests that run commands as a user would: exit code plus the
// combined stdout and stderr.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "../support/text.hpp"

namespace cli_test {

struct Run {
  int code;
  std::string out;
};

// Runs a shell command; -1 when it did not exit normally (e.g. killed by a signal).
inline Run sh(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs the attnfc binary built alongside the tests.
inline Run run_attnfc(const std::string& args) {
  return sh(std::string(ATTNFC_BINARY) + " " + args);
}

using attnfc_test::contains;
using attnfc_test::slurp;

// The header and first rows of the bundled ETTh1.csv copied to dir/etth1_head.csv (a
// file small enough to train on in seconds); returns its path.
inline std::string write_etth1_head(const std::string& dir, int rows) {
  const std::string csv = dir + "/etth1_head.csv";
  std::ifstream in(std::string(ATTNFC_SOURCE_DIR) + "/datasets/ETTh1.csv");
  std::ofstream out(csv);
  std::string line;
  for (int i = 0; i < rows && std::getline(in, line); ++i) out << line << "\n";
  return csv;
}

// A micro model that trains in a few seconds on `csv` (write_etth1_head(dir, 701)):
// dir/micro.json, whose "data" section takes `data_keys` too (each followed by a comma,
// e.g. R"("missing": "ffill",)"), trained into dir/run. Returns the model file.
inline std::string train_micro_model(const std::string& dir, const std::string& csv,
                                     const std::string& data_keys = "") {
  std::ofstream(dir + "/micro.json") << R"({
  "data": {"path": ")" + csv + R"(", "columns": ["OT"], )" +
                                            data_keys + R"(
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3}
})";
  const Run r = run_attnfc("train --config " + dir + "/micro.json --out " + dir + "/run");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  return dir + "/run/model.safetensors";
}

// A long-format panel at `path` (header id,time,load): series k is ids[k] with lengths[k]
// hourly rows from 2021-03-01 00:00 (at most 24 days), value(k, t) at step t, interleaved
// row by row as exports often are. Returns `path`.
inline std::string write_long_panel(const std::string& path, const std::vector<std::string>& ids,
                                    const std::vector<int>& lengths,
                                    const std::function<double(int k, int t)>& value) {
  std::ofstream f(path);
  f << "id,time,load\n";
  int longest = 0;
  for (int n : lengths) longest = std::max(longest, n);
  for (int t = 0; t < longest; ++t)
    for (size_t k = 0; k < ids.size(); ++k) {
      if (t >= lengths[k]) continue;
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "2021-03-%02d %02d:00:00", 1 + t / 24, t % 24);
      f << ids[k] << "," << stamp << "," << value(static_cast<int>(k), t) << "\n";
    }
  return path;
}

// dir/name: a micro model config for a long file (id, time, load; last_horizon split),
// with `data_keys` and `model_keys` added to those sections (each followed by a comma).
inline std::string write_panel_config(const std::string& dir, const std::string& name,
                                      const std::string& csv, const std::string& data_keys = "",
                                      const std::string& model_keys = "", int epochs = 1,
                                      int steps = 4) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << R"({
  "data": {"path": ")" + csv +
                             R"(", "id_column": "id", "targets": ["load"], )" + data_keys + R"(
           "split": "last_horizon"},
  "model": {)" + model_keys + R"( "context_length": 48, "patch_len": 8, "horizon": 8,
            "d_model": 8, "n_heads": 2, "n_layers": 1, "ff_mult": 1, "dropout": 0.0},
  "train": {"epochs": )" + std::to_string(epochs) +
                             R"(, "batch_size": 16, "max_steps_per_epoch": )" +
                             std::to_string(steps) + R"(, "lr": 0.003, "seed": 3}
})";
  return path;
}

// An empty scratch folder temp/<prefix><pid>, removed at the end.
struct ScratchDir {
  std::string dir;
  explicit ScratchDir(const std::string& prefix) {
    namespace fs = std::filesystem;
    dir = (fs::temp_directory_path() / (prefix + std::to_string(::getpid()))).string();
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

// A scratch folder holding etth1_head.csv and the micro model trained on it
// (train_micro_model with `data_keys`).
struct MicroModel : ScratchDir {
  std::string csv, model;
  explicit MicroModel(const std::string& prefix, const std::string& data_keys = "")
      : ScratchDir(prefix) {
    csv = write_etth1_head(dir, 701);
    model = train_micro_model(dir, csv, data_keys);
  }
};

}  // namespace cli_test
