// LR schedules and early stopping: pure functions of step and loss history.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "attnfc/train/schedule.hpp"

using namespace attnfc::train;

TEST_CASE("LR schedules: warm-up, cosine, step") {
  LrSchedule s{ScheduleKind::kCosine, 1.0, 0.1, 4, 104, 1, 0.5};
  CHECK(s.lr_at(0) == doctest::Approx(0.25));
  CHECK(s.lr_at(3) == doctest::Approx(1.0));
  CHECK(s.lr_at(4) == doctest::Approx(1.0));
  CHECK(s.lr_at(54) == doctest::Approx(0.55));
  CHECK(s.lr_at(104) == doctest::Approx(0.1));
  CHECK(s.lr_at(500) == doctest::Approx(0.1));
  LrSchedule st{ScheduleKind::kStep, 1.0, 0, 0, 100, 10, 0.5};
  CHECK(st.lr_at(9) == 1.0);
  CHECK(st.lr_at(10) == 0.5);
  CHECK(st.lr_at(25) == 0.25);
}

TEST_CASE("early stopping counts epochs without improvement and ignores NaN") {
  EarlyStopping e(2, 0.0);
  CHECK(e.update(1.0));
  CHECK(e.update(0.5));
  CHECK_FALSE(e.update(0.6));
  CHECK_FALSE(e.should_stop());
  CHECK_FALSE(e.update(std::nan("")));
  CHECK(e.should_stop());
  CHECK(e.best() == 0.5);
  CHECK(e.best_epoch() == 1);
  EarlyStopping copy;
  copy.load_json(e.to_json());
  CHECK(copy.best_epoch() == 1);
}
