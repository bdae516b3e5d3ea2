// Training progress: the ETA with early stopping (a pure function, worked by hand), the
// UTC timestamps, and what each ProgressStyle writes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../utc_stamp.hpp"
#include "attnfc/train/progress.hpp"

using namespace attnfc::train;

namespace {

// Everything a Progress wrote to a temporary file, one string per line.
struct Captured {
  std::FILE* file = std::tmpfile();
  ~Captured() { std::fclose(file); }
  Captured() = default;
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  std::vector<std::string> lines() const {
    std::fflush(file);
    std::rewind(file);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file)) > 0) text.append(buf, n);
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
};

// A stamped line: the stamp, a space, the rest.
bool stamped(const std::string& line) {
  return test_stamp::starts_with_stamp(line) && line.size() > 20 && line[20] == ' ';
}

EpochRecord record(int epoch, bool best) {
  EpochRecord r;
  r.epoch = epoch;
  r.steps = 3 * epoch;
  r.train_loss = 0.5, r.val_loss = 0.25, r.lr = 1e-3, r.seconds = 1.5, r.samples_per_s = 100;
  r.best = best;
  return r;
}

}  // namespace

TEST_CASE("ETA: the budget's end, and the end if no epoch improves again (patience)") {
  // 100 steps in 10 s: 0.1 s a step. 20 steps left of this epoch, 3 epochs after it.
  EtaInput in;
  in.elapsed_s = 10, in.steps_done = 100, in.steps_per_epoch = 50, in.steps_left_in_epoch = 20,
  in.epochs_left = 3;
  Eta e = estimate_eta(in);
  CHECK(e.budget_s == doctest::Approx(17.0));  // (20 + 3 * 50) * 0.1
  CHECK(e.no_improvement_s == doctest::Approx(17.0));
  in.patience_left = 1;  // one more epoch without improvement after this one, then it stops
  e = estimate_eta(in);
  CHECK(e.budget_s == doctest::Approx(17.0));
  CHECK(e.no_improvement_s == doctest::Approx(7.0));  // (20 + 1 * 50) * 0.1
  in.patience_left = 0;  // stops when this epoch ends unless it improves
  CHECK(estimate_eta(in).no_improvement_s == doctest::Approx(2.0));
  in.patience_left = 5;  // more patience than epochs: the budget ends first
  CHECK(estimate_eta(in).no_improvement_s == doctest::Approx(17.0));
  // At an epoch's end: only whole epochs are left.
  in.steps_left_in_epoch = 0, in.epochs_left = 2, in.patience_left = 1;
  e = estimate_eta(in);
  CHECK(e.budget_s == doctest::Approx(10.0));
  CHECK(e.no_improvement_s == doctest::Approx(5.0));
  // No rate yet.
  in.steps_done = 0;
  CHECK(std::isnan(estimate_eta(in).budget_s));
  in.steps_done = 10, in.elapsed_s = 0;
  CHECK(std::isnan(estimate_eta(in).no_improvement_s));

  CHECK(format_eta({220, 80}) == "1:20 (at most 3:40)");
  CHECK(format_eta({220, 220}) == "3:40");
  CHECK(format_eta({3725, 3725}) == "1:02:05");
  CHECK(format_eta({NAN, NAN}) == "?");
}

TEST_CASE("format_utc: ISO 8601 in UTC to the second") {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1796184603)) +
                 std::chrono::milliseconds(900);
  CHECK(format_utc(t) == "2026-12-02T04:10:03Z");
  CHECK(format_utc(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00Z");
}

TEST_CASE("progress lines: timestamped, in an epoch only every interval, every epoch") {
  const ProgressRun run{2, 3, 16, -1};
  {
    Captured out;
    Progress p({ProgressStyle::kLines, 0, out.file}, run);  // interval 0: every step
    p.step(1, 1, 0.75, NAN);
    p.step(1, 2, 0.5, NAN);
    p.epoch_done(record(1, true), -1);
    p.done({1, 3, 1, 0.25, 0.5, false});
    const auto lines = out.lines();
    REQUIRE(lines.size() == 4);
    for (const auto& l : lines) CHECK_MESSAGE(stamped(l), l);
    CHECK(lines[0].find(" epoch 1/2 step 1/3: loss 0.75000, val loss -, ") != std::string::npos);
    CHECK(lines[0].find("; ETA ") != std::string::npos);
    CHECK(lines[1].find(" epoch 1/2 step 2/3: loss 0.50000") != std::string::npos);
    CHECK(lines[2].find(" epoch 1/2: train loss 0.50000, val loss 0.25000, ") != std::string::npos);
    CHECK(lines[2].find("(best); ETA ") != std::string::npos);  // epoch 2 is still to come
    CHECK(lines[3].find(" done: 1 of 2 epochs, 3 steps") != std::string::npos);
  }
  {
    Captured out;
    Progress p({ProgressStyle::kLines, 1e9, out.file}, run);  // no in-epoch line comes due
    p.step(1, 1, 0.75, NAN);
    p.step(1, 2, 0.5, NAN);
    p.step(1, 3, 0.5, NAN);
    p.epoch_done(record(1, false), -1);
    p.step(2, 1, 0.5, 0.25);
    p.epoch_done(record(2, false), -1);
    const auto lines = out.lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find(" epoch 1/2: ") != std::string::npos);
    CHECK(lines[1].find(" epoch 2/2: ") != std::string::npos);
    CHECK(lines[1].find("ETA") == std::string::npos);  // the last epoch: nothing left
  }
}

TEST_CASE("progress: the ETA says 'at most' only when patience can end the run sooner") {
  // Many steps an epoch, so that the two estimates differ by far more than a second
  // whatever the few microseconds between construction and the step measure.
  auto first_line = [](int patience_left) {
    Captured out;
    Progress p({ProgressStyle::kLines, 0, out.file}, {10, int64_t{1} << 40, 16, patience_left});
    p.step(1, 1, 0.5, NAN);
    const auto lines = out.lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
  };
  CHECK(first_line(1).find(" (at most ") != std::string::npos);
  CHECK(first_line(-1).find(" (at most ") == std::string::npos);
  CHECK(first_line(20).find(" (at most ") == std::string::npos);  // the budget ends first
}

TEST_CASE("progress JSON: one object per line with the event's fields; quiet writes nothing") {
  Captured out;
  Progress p({ProgressStyle::kJson, 0, out.file}, {2, 3, 16, 2});
  p.step(1, 1, 0.75, NAN);
  p.epoch_done(record(1, true), 2);
  p.step(2, 1, 0.5, 0.25);
  p.done({2, 6, 1, 0.25, 0.5, false});
  const auto lines = out.lines();
  REQUIRE(lines.size() == 4);
  const char* events[] = {"step", "epoch", "step", "done"};
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    const auto j = nlohmann::json::parse(lines[i]);
    CHECK(j.at("event") == events[i]);
    for (const char* key :
         {"time", "epoch", "step", "loss", "val_loss", "samples_per_s", "eta_s", "eta_max_s"})
      CHECK_MESSAGE(j.contains(key), key);
    CHECK(test_stamp::is_stamp(j.at("time").get<std::string>()));
  }
  const auto first = nlohmann::json::parse(lines[0]);
  CHECK(first["val_loss"].is_null());  // no validation yet: null, never NaN
  CHECK(first["epoch"] == 1);
  CHECK(first["step"] == 1);
  CHECK(first["loss"] == 0.75);
  const auto epoch = nlohmann::json::parse(lines[1]);
  CHECK(epoch["val_loss"] == 0.25);
  CHECK(epoch["best"] == true);
  CHECK(epoch["patience_left"] == 2);
  CHECK(nlohmann::json::parse(lines[2])["val_loss"] == 0.25);
  const auto done = nlohmann::json::parse(lines[3]);
  CHECK(done["eta_s"] == 0);
  CHECK(done["steps"] == 6);

  Captured quiet;
  Progress q({ProgressStyle::kOff, 0, quiet.file}, {2, 3, 16, 2});
  q.step(1, 1, 0.75, NAN);
  q.epoch_done(record(1, true), 2);
  q.done({1, 3, 1, 0.25, 0.5, false});
  CHECK(quiet.lines().empty());
}

TEST_CASE("progress of an ensemble member: every line and JSON event names the member") {
  const ProgressRun run{2, 3, 16, -1};
  {
    Captured out;
    Progress p({ProgressStyle::kLines, 0, out.file, 2, 5}, run);
    p.step(1, 1, 0.75, NAN);
    p.epoch_done(record(1, true), -1);
    p.done({1, 3, 1, 0.25, 0.5, false});
    const auto lines = out.lines();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].find(" member 2/5 epoch 1/2 step 1/3: ") != std::string::npos);
    CHECK(lines[1].find(" member 2/5 epoch 1/2: train loss ") != std::string::npos);
    CHECK(lines[2].find(" member 2/5 done: 1 of 2 epochs") != std::string::npos);
  }
  {
    Captured out;
    Progress p({ProgressStyle::kJson, 0, out.file, 3, 3}, run);
    p.step(1, 1, 0.75, NAN);
    p.epoch_done(record(1, true), -1);
    p.done({1, 3, 1, 0.25, 0.5, false});
    for (const auto& line : out.lines()) {
      CAPTURE(line);
      const auto j = nlohmann::json::parse(line);
      CHECK(j.at("member") == 3);
      CHECK(j.at("members") == 3);
    }
  }
  Captured single;  // outside an ensemble: no member field, no prefix
  Progress p({ProgressStyle::kJson, 0, single.file}, run);
  p.step(1, 1, 0.75, NAN);
  CHECK_FALSE(nlohmann::json::parse(single.lines().at(0)).contains("member"));
}

TEST_CASE("progress of a backtest fold: every line and JSON event names the fold") {
  const ProgressRun run{2, 3, 16, -1};
  {
    Captured out;
    Progress p({ProgressStyle::kLines, 0, out.file, 2, 5, 4, 5}, run);  // member 2 of fold 4
    p.step(1, 1, 0.75, NAN);
    p.done({1, 3, 1, 0.25, 0.5, false});
    const auto lines = out.lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find(" fold 4/5 member 2/5 epoch 1/2 step 1/3: ") != std::string::npos);
    CHECK(lines[1].find(" fold 4/5 member 2/5 done: ") != std::string::npos);
  }
  Captured out;
  Progress p({ProgressStyle::kJson, 0, out.file, 0, 0, 2, 5}, run);
  p.step(1, 1, 0.75, NAN);
  p.epoch_done(record(1, true), -1);
  p.done({1, 3, 1, 0.25, 0.5, false});
  for (const auto& line : out.lines()) {
    CAPTURE(line);
    const auto j = nlohmann::json::parse(line);
    CHECK(j.at("fold") == 2);
    CHECK(j.at("folds") == 5);
    CHECK_FALSE(j.contains("member"));
  }
}
