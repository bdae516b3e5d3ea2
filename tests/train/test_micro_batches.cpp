// train.micro_batches (grad_sum.hpp): the parts of a step, the ranks' shares, the summed
// gradient against the whole batch's, and training with parts (the rule an mpirun run
// relies on for the single-process model, bit for bit; tests/mpi checks the processes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/splitmix.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/grad_sum.hpp"
#include "attnfc/train/part_workers.hpp"
#include "attnfc/train/run_config.hpp"
#include "attnfc/train/run_folder.hpp"
#include "attnfc/train/trainer.hpp"
#include "train_test_util.hpp"

using namespace attnfc;
using namespace attnfc::train;
using namespace train_test;

TEST_CASE("micro-batches: contiguous parts of near-equal size; ranks share them in order") {
  for (int64_t n : {1, 2, 7, 32, 33}) {
    for (int K : {1, 2, 3, 5, 7}) {
      CAPTURE(n);
      CAPTURE(K);
      int64_t next = 0;
      for (int k = 0; k < K; ++k) {
        const auto [offset, size] = micro_batch_range(n, k, K);
        CHECK(offset == next);
        CHECK(size >= n / K);
        CHECK(size <= n / K + 1);
        if (k > 0 && size > 0) CHECK(micro_batch_range(n, k - 1, K).second >= size);
        next = offset + size;
      }
      CHECK(next == n);
      CHECK(micro_batch_range(n, 0, K).second >= 1);  // part 0 is never empty
    }
  }
  CHECK(micro_batch_range(7, 0, 3) == std::pair<int64_t, int64_t>{0, 3});
  CHECK(micro_batch_range(7, 1, 3) == std::pair<int64_t, int64_t>{3, 2});
  CHECK(micro_batch_range(7, 2, 3) == std::pair<int64_t, int64_t>{5, 2});
  for (int K : {3, 4, 6, 7}) {
    for (int N = 1; N <= K; ++N) {
      int next = 0;
      for (int r = 0; r < N; ++r) {
        const auto [first, end] = parts_of_rank(r, N, K);
        CHECK(first == next);
        CHECK(end > first);  // N <= K: every rank has a part
        next = end;
      }
      CHECK(next == K);
    }
  }
  CHECK(parts_of_rank(1, 2, 6) == std::pair<int, int>{3, 6});
  CHECK(parts_of_rank(2, 3, 7) == std::pair<int, int>{4, 7});
}

namespace {

// A small model and 7 samples of random context and targets (no dropout).
struct SmallModel {
  ag::ParameterSet params;
  model::PatchTransformer net;
  SampleBuffers batch{7, 32, 8, 1};
  ag::Graph graph;
  explicit SmallModel(const model::ModelConfig& cfg) : net(cfg, params, 5) {
    uint64_t state = 11;
    const auto uniform = [&state] {  // in [-1, 1)
      state = splitmix64(state);
      return static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0);
    };
    for (float& v : batch.context_values) v = uniform();
    for (float& v : batch.target_values) v = uniform();
    std::fill(batch.context_observed.begin(), batch.context_observed.end(), 1);
    std::fill(batch.target_observed.begin(), batch.target_observed.end(), 1);
  }
  // The gradient of the mean loss over samples [first, first + n), weighted by `weight`.
  double gradient(int64_t first, int64_t n, float weight) {
    SampleBuffers part(n, 32, 8, 1);
    for (int64_t i = 0; i < n * 32; ++i) {
      part.context_values[i] = batch.context_values[first * 32 + i];
      part.context_observed[i] = 1;
    }
    for (int64_t i = 0; i < n * 8; ++i) {
      part.target_values[i] = batch.target_values[first * 8 + i];
      part.target_observed[i] = 1;
    }
    graph.reset();
    ag::GraphScope scope(graph);
    params.zero_grad();
    const ag::Tensor loss = ag::scale(net.loss(part.view(n), {}), weight);
    graph.backward(loss);
    return loss.item();
  }
  std::vector<float> grads() const {
    std::vector<float> out;
    for (const auto& p : params.all())
      out.insert(out.end(), p.tensor.grad(), p.tensor.grad() + p.tensor.numel());
    return out;
  }
};

model::ModelConfig small_config() {
  nlohmann::json j = config_for("unused.csv");
  j["model"]["dropout"] = 0.0;
  model::ModelConfig cfg = parse_run_config(j).model;
  cfg.channels = 1;
  return cfg;
}

}  // namespace

TEST_CASE("micro-batches: the summed parts give the whole batch's gradient and loss") {
  SmallModel m(small_config());
  const double whole_loss = m.gradient(0, 7, 1.0f);
  const std::vector<float> whole = m.grads();
  GradientSum sum(m.params, dist::Comm::world(), 3);
  sum.begin();
  for (int k = 0; k < 3; ++k) {
    const auto [offset, size] = micro_batch_range(7, k, 3);
    const double loss = m.gradient(offset, size, static_cast<float>(size) / 7.0f);
    sum.add(m.params, loss);
  }
  m.params.zero_grad();  // the sum arrives in the gradients
  const double loss = sum.finish(m.params);
  CHECK(sum.floats() == whole.size());
  CHECK(loss == doctest::Approx(whole_loss).epsilon(1e-6));
  const std::vector<float> parts = m.grads();
  double worst = 0, scale = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(parts[i] - whole[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(whole[i])));
  }
  CHECK(scale > 1e-3);  // a gradient worth comparing
  CHECK(worst <= 1e-5 * scale);
}

TEST_CASE("part workers: side by side, the one-thread loop's sum bit for bit; errors rethrown") {
  SmallModel m(small_config());
  GradientSum sum(m.params, dist::Comm::world(), 3);
  sum.begin();
  for (int k = 0; k < 3; ++k) {  // the one-thread loop: parts one after another
    const auto [offset, size] = micro_batch_range(7, k, 3);
    sum.add(m.params, m.gradient(offset, size, static_cast<float>(size) / 7.0f));
  }
  m.params.zero_grad();
  const double one_loss = sum.finish(m.params);
  const std::vector<float> one = m.grads();

  PartWorkers workers(m.params, m.batch, 2);
  bool fail = false;
  auto part_loss = [&](int k, SampleBuffers& buf) -> ag::Tensor {
    if (fail && k == 2) throw std::runtime_error("part 2 failed");
    const auto [offset, size] = micro_batch_range(7, k, 3);
    std::copy_n(&m.batch.context_values[offset * 32], size * 32, buf.context_values.begin());
    std::copy_n(&m.batch.target_values[offset * 8], size * 8, buf.target_values.begin());
    return ag::scale(m.net.loss(buf.view(size), {}), static_cast<float>(size) / 7.0f);
  };
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    kernels::set_threads(threads);
    m.params.zero_grad();
    sum.begin();
    workers.run(0, 3, threads, part_loss, sum);  // at 2 threads: parts 0 and 1, then 2
    CHECK(m.grads() == std::vector<float>(one.size(), 0.0f));  // workers wrote their own
    CHECK(sum.finish(m.params) == one_loss);
    CHECK(m.grads() == one);
  }
  fail = true;
  sum.begin();
  CHECK_THROWS_WITH_AS(workers.run(0, 3, 2, part_loss, sum), "part 2 failed", std::runtime_error);
}

TEST_CASE(
    "training with micro-batches: the same run as the whole batch, same bits at 1 and 2 "
    "threads, and a resumed run equals an uninterrupted one") {
  const std::string dir = temp_dir("micro");
  nlohmann::json j = config_for(write_csv(dir, 700));
  j["train"]["batch_size"] = 7;  // parts of 3, 2 and 2 windows
  j["train"]["epochs"] = 2;
  j["train"]["max_steps_per_epoch"] = 12;
  j["model"]["dropout"] = 0.0;
  j["train"]["micro_batches"] = 1;  // the batch at once (the trainer's other path)
  const RunConfig whole = parse_run_config(j);
  j["train"]["micro_batches"] = 3;
  const RunConfig parts = parse_run_config(j);
  REQUIRE(train::train(whole, TrainOptions{dir + "/whole"}).status ==
          TrainResult::Status::kFinished);
  REQUIRE(train::train(parts, TrainOptions{dir + "/parts"}).status ==
          TrainResult::Status::kFinished);
  // Rounding apart, the same losses: a part's weight (its share of the batch) is right.
  const auto a = nlohmann::json::parse(slurp(dir + "/whole/metrics.json"));
  const auto b = nlohmann::json::parse(slurp(dir + "/parts/metrics.json"));
  CHECK(b["best_val_loss"].get<double>() ==
        doctest::Approx(a["best_val_loss"].get<double>()).epsilon(1e-3));

  // With dropout, at 1 and 2 threads, interrupted and resumed: the same bits.
  j["model"]["dropout"] = 0.1;
  const RunConfig dropout = parse_run_config(j);
  kernels::set_threads(1);
  REQUIRE(train::train(dropout, TrainOptions{dir + "/one"}).status ==
          TrainResult::Status::kFinished);
  kernels::set_threads(2);
  TrainOptions two{dir + "/two"};
  two.interrupt_after_steps = 5;
  CHECK(train::train(dropout, two).status == TrainResult::Status::kInterrupted);
  two.resume = true;
  two.interrupt_after_steps = 0;
  REQUIRE(train::train(dropout, two).status == TrainResult::Status::kFinished);
  check_same_tensors(dir + "/one/model.safetensors", dir + "/two/model.safetensors");
  CHECK(log_losses(dir + "/one") == log_losses(dir + "/two"));

  j["train"]["micro_batches"] = 8;  // more parts than samples in a batch
  CHECK_THROWS_WITH_AS(parse_run_config(j),
                       "train.micro_batches: found 8, expected at most train.batch_size (7): "
                       "each part of a batch needs a sample",
                       InputError);
  fs::remove_all(dir);
}

TEST_CASE("micro-batches: two parts unless the config says otherwise or the batch is one window") {
  nlohmann::json j = config_for("unused.csv");
  j["train"].erase("micro_batches");
  j["train"]["batch_size"] = 32;
  const RunConfig by_default = parse_run_config(j);
  CHECK(by_default.train.micro_batches == 2);
  // Written into config.json, so a resumed or re-run folder keeps its parts whatever a
  // later default says.
  CHECK(to_json(by_default)["train"]["micro_batches"] == 2);
  j["train"]["batch_size"] = 1;
  CHECK(parse_run_config(j).train.micro_batches == 1);
  j["train"]["batch_size"] = 32;
  j["train"]["micro_batches"] = 1;
  CHECK(parse_run_config(j).train.micro_batches == 1);
  j["train"]["micro_batches"] = 5;
  CHECK(parse_run_config(j).train.micro_batches == 5);
}

TEST_CASE("micro-batches: a run folder from before the key resumes in one part, as it trained") {
  const std::string dir = temp_dir("saved_parts");
  nlohmann::json j = config_for("data.csv");
  j["train"].erase("micro_batches");
  nlohmann::json old_file = to_json(parse_run_config(j));
  old_file["train"].erase("micro_batches");  // as config.json was written before 2026-12-02
  {
    std::ofstream out(RunPaths{dir}.config());
    out << old_file.dump(2);
  }
  nlohmann::json filled = old_file;
  fill_saved_defaults(filled);
  CHECK(parse_run_config(filled).train.micro_batches == 1);
  // The same config given again now means two parts: not the run in the folder.
  CHECK_THROWS_WITH_AS(check_resume_config(dir, to_json(parse_run_config(j))),
                       (RunPaths{dir}.config() +
                        " differs from the config given: train.micro_batches is 1 there and 2 "
                        "in the config given; resume with the config the run started with "
                        "(its config.json)")
                           .c_str(),
                       RunFolderError);
  j["train"]["micro_batches"] = 1;
  CHECK_NOTHROW(check_resume_config(dir, to_json(parse_run_config(j))));
  // A value the file gives is kept.
  nlohmann::json two = old_file;
  two["train"]["micro_batches"] = 2;
  fill_saved_defaults(two);
  CHECK(two["train"]["micro_batches"] == 2);
  fs::remove_all(dir);
}

TEST_CASE("micro-batches: workers for every rung of the thread governor's ladder") {
  CHECK(PartWorkers::most_side_by_side(2, 1) == 1);
  CHECK(PartWorkers::most_side_by_side(2, 2) == 2);
  CHECK(PartWorkers::most_side_by_side(2, 3) == 1);  // the ladder from 3 is 3, 1
  CHECK(PartWorkers::most_side_by_side(2, 4) == 2);  // at the rung of 2 threads
  CHECK(PartWorkers::most_side_by_side(2, 16) == 2);
  CHECK(PartWorkers::most_side_by_side(3, 8) == 2);
  CHECK(PartWorkers::most_side_by_side(4, 8) == 4);
  CHECK(PartWorkers::most_side_by_side(1, 8) == 1);
}
