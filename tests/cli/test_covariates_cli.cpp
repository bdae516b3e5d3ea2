// Past covariates (data.past_covariates): columns a mixed model reads but never forecasts or
// scores. Trained, predicted and evaluated as a user runs them, and the config mistakes
// refused with the key named and exit 2.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

struct Covariates : cli_test::ScratchDir {
  std::string csv;
  Covariates() : ScratchDir("attnfc_covariates_") { csv = cli_test::write_etth1_head(dir, 701); }
  // A micro mixed model: OT the target, HUFL and MUFL past covariates, plus `extra` data keys.
  std::string config(const std::string& extra, const std::string& mode = "mixed") const {
    const std::string path = dir + "/cov.json";
    std::ofstream(path) << R"({
  "data": {"path": ")" + csv + R"(", "targets": ["OT"], "past_covariates": ["HUFL", "MUFL"], )" +
                               extra + R"(
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "channel_mode": ")" +
                               mode + R"(", "linear_lookback": 0},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3,
            "linear_init": "zero"}
})";
    return path;
  }
};

}  // namespace

TEST_CASE("covariates: read, never forecast or scored; predict writes the targets only") {
  Covariates s;
  const Run train = run_attnfc("train --config " + s.config("") + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const std::string resolved = slurp(s.dir + "/run/config.json");
  CHECK(contains(resolved, "\"target_channels\": 1"));
  CHECK(contains(resolved, "\"channels\": 3"));
  const std::string model = s.dir + "/run/model.safetensors";
  const Run predict = run_attnfc("predict -m " + model + " -i " + s.csv);
  REQUIRE_MESSAGE(predict.code == 0, predict.out);
  CHECK(contains(predict.out, "date,OT\n"));
  CHECK(!contains(predict.out, "HUFL"));
  const Run eval =
      run_attnfc("evaluate -m " + model + " -i " + s.csv + " --json " + s.dir + "/e.json");
  REQUIRE_MESSAGE(eval.code == 0, eval.out);
  // The test split: 113 windows x 8 steps x 1 target: the covariates add no scored values.
  CHECK(contains(slurp(s.dir + "/e.json"), "\"values\": 904"));
}

TEST_CASE("covariates: config mistakes name the key, exit 2") {
  Covariates s;
  // Each mistake: the channel mode, an override, and what the one-line error says. The
  // config file is written per case (Covariates::config reuses one path).
  const struct {
    std::string mode, set, expect;
  } mistakes[] = {
      {"independent", "", "data.past_covariates: a channel-independent model"},
      {"mixed", "'data.past_covariates=[\"OT\"]'", "'OT' is also in data.targets"},
      {"mixed", "data.targets=[]", "data.past_covariates: expected data.targets too"},
      {"mixed", "'data.past_covariates=[\"nope\"]'", "nope"},
  };
  int k = 0;
  for (const auto& m : mistakes) {
    const std::string set = m.set.empty() ? "" : " --set " + m.set;
    const Run r = run_attnfc("train --config " + s.config("", m.mode) + set + " --out " + s.dir +
                             "/m" + std::to_string(k++));
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.out, m.expect), r.out);
  }
}

TEST_CASE("covariates: one missing across whole contexts leaves every window scored and drawn") {
  Covariates s;
  {  // HUFL (the second column) empty on data rows 600..650, longer than the context of 32
    std::ifstream in(s.csv);
    std::string text, line;
    for (int row = -1; std::getline(in, line); ++row) {
      const size_t a = line.find(','), b = line.find(',', a + 1);
      text += (row >= 600 && row <= 650 ? line.substr(0, a + 1) + line.substr(b) : line) + "\n";
    }
    std::ofstream(s.csv) << text;
  }
  const Run train = run_attnfc("train --config " + s.config(R"("missing": "interpolate",)") +
                               " --out " + s.dir + "/run");
  // Before, repeat-last's NaN for HUFL ended the run: "non-finite forecast ..., channel 1".
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const std::string metrics = slurp(s.dir + "/run/metrics.json");
  CHECK(contains(metrics, "\"values\": 904"));  // all 113 test windows
  CHECK_FALSE(contains(metrics, "unscored_windows"));
  const Run plot = run_attnfc("plot -m " + s.dir + "/run/model.safetensors -i " + s.csv +
                              " --window 70 -o " + s.dir + "/p.html");  // context rows 608..639
  CHECK_MESSAGE(plot.code == 0, plot.out);
}
