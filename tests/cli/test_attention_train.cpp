// attnfc attention demo --train: a head with learnable Q/K/V, trained by our engine. The
// checks are on what training must achieve, so a wrong gradient or mask makes them fail.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <string>

#include "attention_train.hpp"
#include "attnfc/base/error.hpp"
#include "cli_run.hpp"

using namespace attnfc;
using cli::ProbeSeries;

TEST_CASE("attention demo --train: on a period-7 sine the trained head reads one period back") {
  cli::TrainedHeadOptions o;  // sine, period 7, 400 steps, seed 1
  const cli::TrainedHead r = cli::train_attention_head(o);
  CHECK(r.length == 21);
  CHECK(r.test_windows == 1024 - 819 - 21);
  // Lag 6 from query t is x_{t-6} = x_{t+1-7}: one period before the target.
  CHECK(r.dominant_lag + 1 == 7);
  CHECK(r.mse_trained < 0.5 * r.mse_initial);
  CHECK(r.mse_trained < r.mse_repeat_last);
  // Its causal weights: rows of a softmax over j <= i.
  for (int i = 0; i < r.length; ++i) {
    double sum = 0;
    for (int j = 0; j < r.length; ++j) {
      if (j > i) CHECK(r.weights[i * r.length + j] == 0.0f);
      sum += r.weights[i * r.length + j];
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE(
    "attention demo --train: the same seed gives the same bits at 1 and 2 threads; white noise "
    "gives no gain") {
  cli::TrainedHeadOptions o;
  o.steps = 60;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const cli::TrainedHead a = cli::train_attention_head(o);
  omp_set_num_threads(2);
  const cli::TrainedHead b = cli::train_attention_head(o);
  omp_set_num_threads(threads);
  REQUIRE(a.weights.size() == b.weights.size());
  CHECK(std::memcmp(a.weights.data(), b.weights.data(), a.weights.size() * sizeof(float)) == 0);
  CHECK(a.mse_trained == b.mse_trained);
  o.kind = ProbeSeries::Noise;
  o.steps = 200;
  const cli::TrainedHead n = cli::train_attention_head(o);
  CHECK(std::isfinite(n.mse_trained));
  // Nothing is predictable: about the unit variance of the noise, never far below it.
  CHECK(n.mse_trained > 0.8);
}

TEST_CASE("attention demo --train: impossible settings are input errors naming the option") {
  cli::TrainedHeadOptions o;
  o.length = 5;  // shorter than the period 7
  CHECK_THROWS_WITH_AS(cli::train_attention_head(o), doctest::Contains("--length"), InputError);
  o.length = 65;
  CHECK_THROWS_WITH_AS(cli::train_attention_head(o), doctest::Contains("--length"), InputError);
  o.length = 0;
  o.period = 1.5;
  CHECK_THROWS_WITH_AS(cli::train_attention_head(o), doctest::Contains("--period"), InputError);
  o.period = 7;
  o.steps = 0;
  CHECK_THROWS_WITH_AS(cli::train_attention_head(o), doctest::Contains("--steps"), InputError);
}

TEST_CASE("attnfc attention demo --train, run as a user would") {
  const cli_test::Run ok = cli_test::run_attnfc("attention demo --train --period 4 --steps 50");
  CHECK(ok.code == 0);
  CHECK(ok.out.find("dominant lag") != std::string::npos);
  CHECK(ok.out.find("seasonal naive (lag 4)") != std::string::npos);
  const cli_test::Run bad = cli_test::run_attnfc("attention demo --train --period 7 --length 3");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--length") != std::string::npos);
}
