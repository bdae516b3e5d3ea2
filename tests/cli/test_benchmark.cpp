// scripts/benchmark.sh on one micro cell of the ILI suite: the table row carries the model,
// its linear start, the baselines, the published number and the epochs kept; the second
// table scores the same runs on the windows the published number was scored on.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli_run.hpp"

namespace fs = std::filesystem;

namespace {

// The line of `md` that starts with `prefix`; empty when there is none.
std::string line_starting(const std::string& md, const std::string& prefix) {
  const size_t at = md.find(prefix);
  return at == std::string::npos ? "" : md.substr(at, md.find('\n', at) - at);
}

}  // namespace

TEST_CASE("scripts/benchmark.sh: a cell shows the model beside its linear start and baselines") {
  if (cli_test::sh("command -v jq && command -v parallel").code != 0) {
    MESSAGE("jq or GNU parallel is not installed (apt-get install jq parallel); not tested");
    return;
  }
  const std::string out =
      (fs::temp_directory_path() / ("attnfc_bench_" + std::to_string(::getpid()))).string();
  fs::remove_all(out);
  const cli_test::Run r = cli_test::sh(
      std::string(ATTNFC_SOURCE_DIR) + "/scripts/benchmark.sh --suites ili --seeds 1,2 " +
      "--horizons 24 --set train.epochs=1 --set train.max_steps_per_epoch=2 --set " +
      "model.d_model=16 -j 2 --bin " + ATTNFC_BINARY + " --out " + out);
  CAPTURE(r.out);
  REQUIRE(r.code == 0);
  const std::string md = cli_test::slurp(out + "/RESULTS.md");
  CHECK(md.find("| attnfc MSE | linear start | beats start | NLinear (ours) |") !=
        std::string::npos);
  // dataset, setting, horizon, then "mean ± std" of the two seeds.
  const std::string line = line_starting(md, "| ili | M | 24 | ");
  REQUIRE(!line.empty());
  CAPTURE(line);
  CHECK(line.find(" ± ") != std::string::npos);
  CHECK(line.find("1.319 (PatchTST/64)") != std::string::npos);
  CHECK(line.find("/2 |") != std::string::npos);     // seeds that beat their linear start
  CHECK(line.find("| 170 |") != std::string::npos);  // 193 - 24 + 1 test windows, all of them
  CHECK(line.find("| - |") == std::string::npos);    // every column filled
  CHECK(fs::exists(out + "/ili_M.csv"));

  // The second table: the same runs on the 160 windows PatchTST's loader (batch 16,
  // drop_last) scored. Repeat-last there is the DLinear paper's "Repeat" to the digit.
  const std::string subset = line_starting(md, "| ili | M | 24 | 16 | 160 (170) |");
  REQUIRE(!subset.empty());
  CAPTURE(subset);
  CHECK(subset.find("| 6.5871 |") != std::string::npos);
  CHECK(subset.find(" ± ") != std::string::npos);
  CHECK(subset.find("| - |") == std::string::npos);
  fs::remove_all(out);
}
