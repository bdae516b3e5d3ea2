// What `attnfc train` prints while it trains when stderr is no terminal (popen, `| tee`):
// timestamped epoch lines, in-epoch lines every ATTNFC_PROGRESS_INTERVAL_S, --quiet, and
// --log-format json.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../utc_stamp.hpp"
#include "cli_run.hpp"

namespace {

using cli_test::contains;
using cli_test::Run;

// "<stamp> epoch 2/3: train loss ... samples/s ..."
bool stamped_epoch(const std::string& l) {
  return test_stamp::starts_with_stamp(l) && l.compare(20, 7, " epoch ") == 0 &&
         l.find(": train loss ") != std::string::npos && l.find("samples/s") != std::string::npos;
}

// "<stamp> epoch 2/3 step 4/6: loss ... samples/s; ETA ..."
bool stamped_step(const std::string& l) {
  return test_stamp::starts_with_stamp(l) && l.compare(20, 7, " epoch ") == 0 &&
         l.find(" step ") != std::string::npos && l.find("/6: loss ") != std::string::npos &&
         l.find(" samples/s; ETA ") != std::string::npos;
}

std::vector<std::string> progress_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int count_matching(const std::string& text, bool (*match)(const std::string&)) {
  int n = 0;
  for (const auto& l : progress_lines(text)) n += match(l) ? 1 : 0;
  return n;
}

// etth1_head.csv and a micro config of 3 epochs of 6 steps, patience 1.
struct ProgressFixture : cli_test::ScratchDir {
  std::string config;
  ProgressFixture() : ScratchDir("attnfc_cli_progress_") {
    const std::string csv = cli_test::write_etth1_head(dir, 701);
    config = dir + "/micro.json";
    std::ofstream(config) << R"({
  "data": {"path": ")" + csv + R"(", "columns": ["OT"],
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0},
  "train": {"epochs": 3, "batch_size": 16, "max_steps_per_epoch": 6, "lr": 0.003, "seed": 3,
            "patience": 1}
})";
  }
  // `attnfc train` into dir/<out> with stdout and stderr combined (stderr is a pipe), or
  // stderr into the file `stderr_to`.
  Run train(const std::string& out, const std::string& flags, const std::string& env = "",
            const std::string& stderr_to = "") {
    const std::string cmd = env + " " + ATTNFC_BINARY + " train --config " + config + " --out " +
                            dir + "/" + out + " " + flags;
    return cli_test::sh(stderr_to.empty() ? cmd : "(" + cmd + " 2>" + stderr_to + ")");
  }
};

}  // namespace

TEST_CASE("piped train: a timestamped line per epoch, and in an epoch only when due") {
  ProgressFixture f;
  // An interval longer than the run: the epoch lines and the end only.
  Run r = f.train("a", "", "ATTNFC_PROGRESS_INTERVAL_S=100000");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CAPTURE(r.out);
  const int epochs = count_matching(r.out, stamped_epoch);
  CHECK(epochs >= 1);  // patience 1 may end it before epoch 3
  CHECK(contains(r.out, "Z epoch 1/3: train loss "));
  CHECK(count_matching(r.out, stamped_step) == 0);
  CHECK(count_matching(r.out, [](const std::string& l) {
          return test_stamp::starts_with_stamp(l) && l.compare(20, 7, " done: ") == 0 &&
                 l.find(" of 3 epochs") != std::string::npos;
        }) == 1);
  CHECK(contains(r.out, "trained "));  // the summary on stdout is unchanged
  // At the default --log-level a piped run still says what it read, stamped like progress.
  CHECK(count_matching(r.out, [](const std::string& l) {
          return test_stamp::starts_with_stamp(l) && l.compare(20, 8, " [info] ") == 0 &&
                 l.find(" training windows, ") != std::string::npos;
        }) == 1);

  // Interval 0: a line after every step (6 an epoch), each with the step, loss and ETA.
  r = f.train("b", "", "ATTNFC_PROGRESS_INTERVAL_S=0");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(count_matching(r.out, stamped_step) == 6 * count_matching(r.out, stamped_epoch));
  CHECK(contains(r.out, "Z epoch 1/3 step 4/6: loss "));

  r = f.train("c", "", "ATTNFC_PROGRESS_INTERVAL_S=soon");
  CHECK(r.code == 2);
  CHECK(contains(r.out, "ATTNFC_PROGRESS_INTERVAL_S: found 'soon', expected a number"));
}

TEST_CASE("train --quiet: no progress, only the summary") {
  ProgressFixture f;
  const Run r = f.train("q", "--quiet", "ATTNFC_PROGRESS_INTERVAL_S=0");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CAPTURE(r.out);
  CHECK_FALSE(contains(r.out, "epoch 1/3"));
  CHECK_FALSE(test_stamp::has_clock(r.out));
  CHECK_FALSE(contains(r.out, "[info]"));
  CHECK(contains(r.out, "trained "));
  CHECK(contains(r.out, "metrics -> "));
  // --quiet wins over a lower --log-level.
  const Run loud = cli_test::sh(std::string(ATTNFC_BINARY) + " --log-level info train --config " +
                                f.config + " --out " + f.dir + "/q2 --quiet");
  REQUIRE_MESSAGE(loud.code == 0, loud.out);
  CHECK_FALSE(contains(loud.out, "[info]"));
  CHECK_FALSE(contains(loud.out, "epoch 1/3"));
}

TEST_CASE("train --log-format json: every stderr line is one JSON object") {
  ProgressFixture f;
  const std::string err = f.dir + "/stderr.txt";
  const Run r = f.train("j", "--log-format json", "ATTNFC_PROGRESS_INTERVAL_S=0", err);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const std::string text = cli_test::slurp(err);
  CAPTURE(text);
  int steps = 0, epochs = 0, done = 0;
  for (const auto& line : progress_lines(text)) {
    CAPTURE(line);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(line));
    REQUIRE(j.is_object());
    CHECK(test_stamp::is_stamp(j.at("time").get<std::string>()));
    const std::string event = j.at("event");
    if (event == "log") continue;  // a warning about the kept model, say
    steps += event == "step", epochs += event == "epoch", done += event == "done";
    for (const char* key : {"epoch", "step", "loss", "val_loss", "samples_per_s", "eta_s"})
      CHECK_MESSAGE(j.contains(key), key);
    CHECK(j["epoch"].is_number_integer());
    CHECK(j["loss"].is_number());
    CHECK(j["val_loss"].is_number());  // the model before training was scored
    if (event == "step" && j["epoch"] == 1)
      CHECK(j["eta_s"].get<double>() < j["eta_max_s"].get<double>());  // patience 1
  }
  CHECK(epochs >= 1);
  CHECK(steps == 6 * epochs);
  CHECK(done == 1);
  CHECK(contains(r.out, "trained "));  // stdout keeps its summary
}

TEST_CASE("train --log-format: a bad value is exit 2 naming the flag and the choices") {
  ProgressFixture f;
  const Run r = f.train("x", "--log-format xml");
  CHECK(r.code == 2);
  CAPTURE(r.out);
  CHECK(contains(r.out, "--log-format"));
  CHECK(contains(r.out, "xml"));
  CHECK(contains(r.out, "text or json"));
}
