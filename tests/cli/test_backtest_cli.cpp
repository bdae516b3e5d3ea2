// attnfc backtest as a user runs it: the table, the files, resuming, and bad flags.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::ScratchDir;
using cli_test::slurp;

namespace {

// A micro config on the first 701 rows of ETTh1, with a least-squares linear start.
std::string write_micro_config(const std::string& dir) {
  const std::string csv = cli_test::write_etth1_head(dir, 701);
  const std::string path = dir + "/micro.json";
  std::ofstream(path) << R"({
  "data": {"path": ")" + csv +
                             R"(", "columns": ["OT"],
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "linear_lookback": 32},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3}
})";
  return path;
}

}  // namespace

TEST_CASE("backtest prints each fold and the pooled row, writes its files, and resumes") {
  const ScratchDir s("attnfc_backtest_cli_");
  const std::string config = write_micro_config(s.dir), out = s.dir + "/bt";
  Run r = run_attnfc("backtest --config " + config + " --folds 3 --step 4 --quiet --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CAPTURE(r.out);
  for (const char* part : {"fold  first origin", "linear-start", "nlinear", "fine-tuned", "\nall ",
                           "pooled", "folds   -> ", "summary -> "})
    CHECK(contains(r.out, part));
  CHECK(std::filesystem::exists(out + "/fold-3/metrics.json"));
  const std::string csv = slurp(out + "/folds.csv");
  CHECK(contains(csv, "\n3,"));
  CHECK(contains(csv, "\nall,,pooled,,attnfc,12,"));  // 3 folds x 4 origins

  // Finished: resuming shows the same table again, from the saved plan.
  const Run again = run_attnfc("backtest --out " + out + " --resume --quiet");
  REQUIRE_MESSAGE(again.code == 0, again.out);
  CHECK(again.out == r.out);

  // A fresh backtest over it, or a resume that changes the plan, is refused by name.
  Run bad = run_attnfc("backtest --config " + config + " --folds 3 --step 4 --out " + out);
  CHECK(bad.code == 2);
  CHECK(contains(bad.out, "holds a backtest; pass --resume to continue it"));
  bad = run_attnfc("backtest --out " + out + " --resume --folds 4");
  CHECK(bad.code == 2);
  CHECK(contains(bad.out, "--resume without --config continues the saved plan"));
  bad = run_attnfc("backtest --config " + config + " --folds 4 --step 4 --resume --out " + out);
  CHECK(bad.code == 2);
  CHECK(contains(bad.out, "(key 'folds'); resume with the same config and flags"));
}

TEST_CASE("backtest: bad flags exit 2 naming the flag") {
  const ScratchDir s("attnfc_backtest_flags_");
  const std::string config = write_micro_config(s.dir);
  const std::string base = "backtest --config " + config + " --out " + s.dir + "/bt ";
  Run r = run_attnfc(base + "--refit sometimes");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--refit: found 'sometimes', expected every, once or a number"));
  r = run_attnfc(base + "--finetune-epochs 1.5");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--finetune-epochs: found 1.5"));
  r = run_attnfc(base + "--folds 0");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--folds"));
  r = run_attnfc(base + "--folds 200");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--folds 200 --step 8: fold 1 does not fit"));
  r = run_attnfc("backtest --resume");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "--resume needs --out"));
  r = run_attnfc("backtest --out " + s.dir + "/none --resume");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "backtest.json: not found; nothing to resume"));
}
