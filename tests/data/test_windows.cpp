// Splits, the train-only scaler and the window sampler.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/data/window.hpp"

using namespace attnfc::data;
using attnfc::ChannelMode;
using attnfc::SampleBuffers;

namespace {
// rows x 2 channels: a = row, b = 1000 + 10 * row; b is missing on `missing_rows`.
TimeSeries synthetic(size_t rows, std::vector<size_t> missing_rows = {},
                     MissingPolicy policy = MissingPolicy::kMask) {
  std::string text = "date,a,b\n";
  for (size_t r = 0; r < rows; ++r) {
    const bool miss = std::find(missing_rows.begin(), missing_rows.end(), r) != missing_rows.end();
    text += std::to_string(1700000000 + 3600 * r) + "," + std::to_string(r) + "," +
            (miss ? std::string("NA") : std::to_string(1000 + 10 * r)) + "\n";
  }
  CsvOptions opt;
  opt.missing = policy;
  return load_series(CsvTable::parse(text, "syn.csv"), opt);
}
}  // namespace

TEST_CASE("splits: rows, fractions and dates keep targets apart and begin context early") {
  const Split r = split_by_rows(100, 60, 20, 20, 10);
  CHECK(r.train.begin == 0);
  CHECK(r.train.end == 60);
  CHECK(r.val.begin == 50);
  CHECK(r.val.end == 80);
  CHECK(r.val_targets().begin == 60);
  CHECK(r.test.begin == 70);
  CHECK(r.test_targets().begin == 80);
  CHECK_THROWS_WITH(split_by_rows(100, 60, 30, 20, 10),
                    doctest::Contains("needs 110 rows, found 100"));
  CHECK_THROWS_WITH(split_by_rows(100, 5, 30, 20, 10),
                    doctest::Contains("fewer than the context length 10"));

  const Split f = split_by_fractions(2820, 0.7, 0.2, 0);
  CHECK(f.train.end == 1973);
  CHECK(f.test.begin == 2820 - 564);
  CHECK_THROWS(split_by_fractions(100, 0.9, 0.2, 0));
  CHECK_THROWS(split_by_fractions(100, -0.1, 0.2, 0));

  const TimeSeries s = synthetic(48);
  const Split d = split_by_dates(s, s.timestamps[30], s.timestamps[40] - 1, 5);
  CHECK(d.val_targets().begin == 30);
  CHECK(d.test_targets().begin == 40);
  CHECK(d.test.end == 48);

  CHECK_NOTHROW(validate_split(r, 10, 5, "x"));
  CHECK_THROWS_WITH(validate_split(r, 10, 25, "x.csv"),
                    doctest::Contains("x.csv: the val part has 30 rows (50 to 80), 5 too few"));
}

TEST_CASE(
    "split_from_end counts from the last row: test, then val, then train; last_horizon agrees") {
  const Split e = split_from_end(100, 20, 15, 5, 10);  // test targets 80..95, val 60..80
  CHECK(e.test_targets().begin == 80);
  CHECK(e.test.end == 95);
  CHECK(e.val_targets().begin == 60);
  CHECK(e.val.end == 80);
  CHECK(e.train.begin == 0);
  CHECK(e.train.end == 60);
  // (H, H, 0) is the M4 protocol, row for row.
  const Split a = split_from_end(100, 8, 8, 0, 10), b = split_last_horizons(100, 8, 10);
  CHECK(a.train.end == b.train.end);
  CHECK(a.val.begin == b.val.begin);
  CHECK(a.test.begin == b.test.begin);
  CHECK(a.test.end == b.test.end);
  // The tail and one context of training rows must fit; the message gives both counts.
  CHECK_THROWS_WITH(split_from_end(100, 40, 40, 15, 10), doctest::Contains("needs 105 rows"));
  CHECK_THROWS_WITH(split_from_end(100, 40, 40, 15, 10), doctest::Contains("found 100"));
}

TEST_CASE("the scaler is fit on training rows only and inverts exactly; JSON round trip") {
  const TimeSeries s = synthetic(100, {3, 4});
  const Scaler sc = Scaler::fit(s, {0, 60});
  // Channel a over rows 0..59: mean 29.5, population sd sqrt((60^2 - 1) / 12).
  CHECK(sc.mean(0) == doctest::Approx(29.5));
  CHECK(sc.scale(0) == doctest::Approx(std::sqrt((3600.0 - 1.0) / 12.0)));
  // Channel b skips the two missing rows instead of counting their filled values.
  double sum = 0;
  for (size_t r = 0; r < 60; ++r) sum += (r == 3 || r == 4) ? 0.0 : 1000.0 + 10.0 * r;
  CHECK(sc.mean(1) == doctest::Approx(sum / 58.0));
  // A scaler fit on all rows would differ: val/test rows must not leak in.
  CHECK(Scaler::fit(s, {0, 100}).mean(0) != doctest::Approx(sc.mean(0)));

  std::vector<float> block(s.values.begin(), s.values.begin() + 10);
  sc.transform(block.data(), 5);
  CHECK(block[0] == doctest::Approx((0.0 - 29.5) / sc.scale(0)));
  sc.inverse_transform(block.data(), 5);
  for (size_t i = 0; i < 10; ++i) CHECK(block[i] == doctest::Approx(s.values[i]));

  const Scaler back = Scaler::from_json(nlohmann::json::parse(sc.to_json().dump()));
  CHECK(back.mean(1) == sc.mean(1));  // bit-exact through text
  CHECK(back.scale(1) == sc.scale(1));
  CHECK(back.channels() == s.channels);
  CHECK_THROWS_WITH(Scaler::from_json({{"type", "minmax"}}), doctest::Contains("scaler.type"));
  CHECK_THROWS_WITH(Scaler::from_json({{"type", "zscore"}}), doctest::Contains("scaler.channels"));
  CHECK_THROWS(Scaler::from_json(
      {{"type", "zscore"}, {"channels", {"a"}}, {"mean", {0.0}}, {"scale", {0.0}}}));
}

TEST_CASE("windows: count without drop_last, contents, masks, both channel modes") {
  const TimeSeries s = synthetic(30, {20}, MissingPolicy::kMask);
  const size_t L = 4, H = 3;
  WindowSampler mixed(s, {5, 30}, L, H, ChannelMode::kMixed);
  CHECK(mixed.num_windows() == 25 - 7 + 1);
  CHECK(mixed.width() == 2);
  CHECK(mixed.num_batches(5) == 4);  // 19 windows: 5 + 5 + 5 + 4, nothing dropped
  SampleBuffers batch(5, L, H, 2);
  const auto& ctx = batch.context_values;
  const auto& tgt = batch.target_values;
  const auto& cmask = batch.context_observed;
  const auto& tmask = batch.target_observed;
  CHECK(mixed.fill_batch(3, batch) == 4);
  // Batch 3 starts at window 15 = row 20; its context holds the missing b at row 20.
  CHECK(ctx[0] == 20.0f);
  CHECK(cmask[1] == 0);
  CHECK(cmask[0] == 1);
  CHECK(tgt[0] == 24.0f);
  CHECK(tgt[1] == 1240.0f);
  CHECK(mixed.fill_batch(4, batch) == 0);
  // Window 9 (start row 14) has row 20 as its third target: masked out of the loss.
  CHECK(mixed.fill_batch(1, batch) == 5);
  CHECK(tmask[4 * H * 2 + 2 * 2 + 1] == 0);  // sample 4, target t=2 (row 20), channel b
  CHECK(tmask[4 * H * 2 + 2 * 2 + 0] == 1);
  CHECK(std::count(tmask.begin(), tmask.end(), 0) == 1);  // only window 9 targets row 20
  SampleBuffers wrong_shape(5, L, H, 1);
  CHECK_THROWS(mixed.fill_batch(0, wrong_shape));

  WindowSampler ci(s, {0, 30}, L, H, ChannelMode::kIndependent);
  CHECK(ci.num_windows() == 2 * (30 - 7 + 1));
  CHECK(ci.width() == 1);
  SampleBuffers one(2, L, H, 1);
  CHECK(ci.fill_batch(0, one) == 2);
  CHECK(one.context_values == std::vector<float>{0, 1, 2, 3, 1000, 1010, 1020, 1030});
  CHECK(one.target_values == std::vector<float>{4, 5, 6, 1040, 1050, 1060});

  // Under ffill, a filled target still counts (the user chose to trust it).
  const TimeSeries f = synthetic(30, {20}, MissingPolicy::kFfill);
  WindowSampler fm(f, {0, 30}, L, H, ChannelMode::kMixed);
  SampleBuffers two(1, L, H, 2);
  fm.fill_batch(18 - L + 2, two);
  CHECK(std::all_of(two.target_observed.begin(), two.target_observed.end(),
                    [](uint8_t v) { return v == 1; }));

  CHECK_THROWS(WindowSampler(s, {0, 31}, L, H, ChannelMode::kMixed));
  CHECK_THROWS(WindowSampler(s, {0, 30}, 0, H, ChannelMode::kMixed));
  WindowSampler too_short(s, {0, 5}, L, H, ChannelMode::kMixed);
  CHECK(too_short.num_windows() == 0);
}

TEST_CASE("shuffling is a seeded permutation, reproducible and seed-dependent") {
  const TimeSeries s = synthetic(200);
  WindowSampler a(s, {0, 200}, 8, 4, ChannelMode::kIndependent);
  WindowSampler b(s, {0, 200}, 8, 4, ChannelMode::kIndependent);
  const auto order = [](const WindowSampler& w) {
    std::vector<std::pair<size_t, size_t>> o;
    for (size_t i = 0; i < w.num_windows(); ++i)
      o.emplace_back(w.window(i).start_row, w.window(i).channel);
    return o;
  };
  const auto chrono = order(a);
  a.shuffle(42);
  b.shuffle(7);
  b.shuffle(42);  // depends on the seed only, not on the previous order
  CHECK(order(a) == order(b));
  CHECK(order(a) != chrono);
  const auto shuffled = order(a);
  const std::set<std::pair<size_t, size_t>> seen(shuffled.begin(), shuffled.end());
  CHECK(seen.size() == a.num_windows());  // a permutation: every window exactly once
  b.shuffle(43);
  CHECK(order(a) != order(b));
  a.reset_order();
  CHECK(order(a) == chrono);
  // The first shuffled positions for seed 42 are pinned, so a change of
  // generator (which would change every training run) is caught.
  a.shuffle(42);
  CHECK(a.window(0).start_row == 130);
  CHECK(a.window(0).channel == 1);
  CHECK(a.window(1).start_row == 11);
  CHECK(a.window(2).start_row == 122);
  CHECK(a.window(3).start_row == 150);
}

TEST_CASE("windows: scoring keeps the windows with a target to score, and uncounts blind lanes") {
  // b missing on rows 10..19: a 6-step context inside them sees nothing of b.
  std::vector<size_t> gap;
  for (size_t r = 10; r < 20; ++r) gap.push_back(r);
  const TimeSeries s = synthetic(40, gap, MissingPolicy::kInterpolate);
  const auto blind = [](size_t start) { return start >= 10 && start + 6 <= 20; };  // 10..14
  // Channel-independent windows: b's own windows there are removed (5 of 33 per lane).
  WindowSampler own(s, RowRange{0, 40}, 6, 2, ChannelMode::kIndependent);
  const size_t all = own.num_windows();
  CHECK(own.keep_windows_with_context() == 5);
  CHECK(own.num_windows() == all - 5);
  for (size_t p = 0; p < own.num_windows(); ++p) {
    const WindowRef r = own.window(p);
    CHECK_FALSE((r.channel == 1 && blind(r.start_row)));
    if (p > 0) CHECK(own.window(p - 1).start_row <= r.start_row);  // still in time order
  }
  own.reset_order();
  CHECK(own.num_windows() == all);
  own.keep_windows_with_context();
  own.shuffle(3);
  CHECK(own.num_windows() == all);
  own.keep_windows_with_context();
  own.draw_by_series(3);
  CHECK(own.num_windows() == all);
  // Mixed windows keep a to score: none is removed, and b's targets do not count in 10..14.
  WindowSampler mixed_all(s, RowRange{0, 40}, 6, 2, ChannelMode::kMixed);
  CHECK(mixed_all.keep_windows_with_context() == 0);
  SampleBuffers batch(33, 6, 2, 2);
  REQUIRE(mixed_all.fill_batch(0, batch) == 33);
  CHECK(uncount_unreadable_lanes(batch, 33) == 5);
  for (size_t w = 0; w < 33; ++w)
    for (size_t t = 0; t < 2; ++t) {
      CHECK(batch.target_observed[(w * 2 + t) * 2 + 0] == 1);
      CHECK(batch.target_observed[(w * 2 + t) * 2 + 1] == (blind(w) ? 0 : 1));
    }
  // Both columns missing on 10..19: then the mixed windows there have nothing to score.
  std::string text = "date,a,b\n";
  for (size_t r = 0; r < 40; ++r) {
    const bool miss = r >= 10 && r < 20;
    text += std::to_string(1700000000 + 3600 * r) + "," +
            (miss ? std::string("NA,NA") : std::to_string(r) + "," + std::to_string(r)) + "\n";
  }
  CsvOptions opt;
  opt.missing = MissingPolicy::kInterpolate;
  const TimeSeries both = load_series(CsvTable::parse(text, "both.csv"), opt);
  WindowSampler mixed_both(both, RowRange{0, 40}, 6, 2, ChannelMode::kMixed);
  CHECK(mixed_both.keep_windows_with_context() == 5);
  // With b a past covariate (target_channels 1), only a must be seen: nothing is removed.
  TimeSeries with_covariate = s;
  with_covariate.target_channels = 1;
  WindowSampler mixed(with_covariate, RowRange{0, 40}, 6, 2, ChannelMode::kMixed);
  CHECK(mixed.keep_windows_with_context() == 0);
  const TimeSeries complete = synthetic(40);  // the sampler keeps a pointer to it
  WindowSampler full(complete, RowRange{0, 40}, 6, 2, ChannelMode::kMixed);
  CHECK(full.keep_windows_with_context() == 0);
}
