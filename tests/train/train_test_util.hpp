#pragma once
// Helpers for training tests: a scratch folder, a small synthetic CSV, a config that
// trains on it in seconds, and bit-for-bit comparison of saved tensors.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "attnfc/base/safetensors.hpp"

#include "../support/text.hpp"

namespace train_test {

namespace fs = std::filesystem;

inline std::string temp_dir(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("attnfc_train_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// Hourly rows with a daily cycle and a little deterministic wiggle, two columns.
inline std::string write_csv(const std::string& dir, int rows) {
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

inline nlohmann::json config_for(const std::string& csv) {
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

using attnfc_test::slurp;

// Loss columns of train_log.csv (epoch, steps, train_loss, val_loss, lr), without timings.
inline std::string log_losses(const std::string& dir) {
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

inline void check_same_tensors(const std::string& a, const std::string& b) {
  const auto fa = attnfc::safetensors::read(a), fb = attnfc::safetensors::read(b);
  REQUIRE(fa.tensors.size() == fb.tensors.size());
  for (size_t i = 0; i < fa.tensors.size(); ++i) {
    CAPTURE(fa.tensors[i].name);
    CHECK(fa.tensors[i].name == fb.tensors[i].name);
    CHECK(fa.tensors[i].values == fb.tensors[i].values);  // bit for bit
  }
}

}  // namespace train_test
