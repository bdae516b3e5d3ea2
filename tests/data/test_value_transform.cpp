// data.transform: the targets' power transform inside the Scaler, and the reader's check of
// its domain (CsvOptions::domain).
#include <doctest/doctest.h>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"

using namespace attnfc;
using namespace attnfc::data;

namespace {

// Two channels: a = 2^(r mod 5) (positive, multiplicative), b = r (0 on the first row).
TimeSeries powers(size_t rows) {
  std::string text = "date,a,b\n";
  for (size_t r = 0; r < rows; ++r)
    text += std::to_string(1700000000 + 3600 * r) + "," + std::to_string(1 << (r % 5)) + "," +
            std::to_string(r) + "\n";
  return load_series(CsvTable::parse(text, "pow.csv"), CsvOptions());
}

}  // namespace

TEST_CASE("a log scaler standardises log values, inverts them, and leaves other channels alone") {
  const TimeSeries s = powers(50);
  const Scaler plain = Scaler::fit(s, {0, 40});
  const Scaler sc = Scaler::fit(s, {0, 40}, ValueTransform{0.0, 1});
  CHECK(sc.power(0) == 0.0);
  CHECK(sc.power(1) == ValueTransform::kNone);
  CHECK(plain.power(0) == ValueTransform::kNone);
  // log2 of a cycles 0..4 evenly over 40 rows: mean 2 ln 2, population sd sqrt(2) ln 2.
  CHECK(sc.mean(0) == doctest::Approx(2.0 * std::log(2.0)));
  CHECK(sc.scale(0) == doctest::Approx(std::sqrt(2.0) * std::log(2.0)));
  // Channel b is untouched by the transform: the same statistics, the same bits.
  CHECK(sc.mean(1) == plain.mean(1));
  CHECK(sc.scale(1) == plain.scale(1));

  std::vector<float> block(s.values.begin(), s.values.begin() + 20), ref = block;
  sc.transform(block.data(), 10);
  plain.transform(ref.data(), 10);
  CHECK(block[0] == doctest::Approx((0.0 - 2.0 * std::log(2.0)) / sc.scale(0)));  // a = 1
  for (size_t r = 0; r < 10; ++r) CHECK(block[2 * r + 1] == ref[2 * r + 1]);
  sc.inverse_transform(block.data(), 10);
  for (size_t i = 0; i < 20; ++i) CHECK(block[i] == doctest::Approx(s.values[i]).epsilon(1e-6));
}

TEST_CASE("a power scaler (sqrt) takes 0, and reads a value below its range as 0") {
  const TimeSeries s = powers(30);
  const Scaler sc = Scaler::fit(s, {0, 30}, ValueTransform{0.5, 2});
  CHECK(sc.power(1) == 0.5);
  std::vector<float> b(30);
  for (size_t r = 0; r < 30; ++r) b[r] = s.value(r, 1);
  sc.transform_channel(b.data(), b.size(), 1);
  sc.inverse_transform_channel(b.data(), b.size(), 1);
  for (size_t r = 0; r < 30; ++r) CHECK(b[r] == doctest::Approx(static_cast<double>(r)));
  // sqrt(b) is in [0, sqrt 29]; a forecast far below its mean is outside that range.
  float low = -50.0f;
  sc.inverse_transform_channel(&low, 1, 1);
  CHECK(low == 0.0f);
  // Monotone: ordered quantiles stay ordered after the inverse.
  std::vector<float> q{-3.0f, -1.0f, 0.0f, 1.0f, 3.0f};
  sc.inverse_transform_channel(q.data(), q.size(), 0);
  for (size_t i = 1; i < q.size(); ++i) CHECK(q[i - 1] < q[i]);
}

TEST_CASE("a log scaler refuses a training value <= 0, naming the channel") {
  const TimeSeries s = powers(20);
  CHECK_THROWS_WITH(Scaler::fit(s, {0, 20}, ValueTransform{0.0, 2}),
                    doctest::Contains("channel 'b' holds 0.000000 in the training rows; expected "
                                      "values > 0 (data.transform \"log\")"));
  CHECK_NOTHROW(Scaler::fit(s, {0, 20}, ValueTransform{0.5, 2}));
}

TEST_CASE("the scaler's power survives JSON; files without it read as untransformed") {
  const TimeSeries s = powers(30);
  const Scaler sc = Scaler::fit(s, {0, 30}, ValueTransform{0.0, 1});
  const nlohmann::json j = nlohmann::json::parse(sc.to_json().dump());
  CHECK(j.at("power") == nlohmann::json::parse("[0.0, null]"));
  // Its own type: an attnfc from before transforms refuses it rather than misreading it.
  CHECK(j.at("type") == "power_zscore");
  const Scaler back = Scaler::from_json(j);
  CHECK(back.power(0) == 0.0);
  CHECK(back.power(1) == ValueTransform::kNone);
  CHECK(back.mean(0) == sc.mean(0));
  // Untransformed scalers write no "power": the checkpoints of before, byte for byte.
  CHECK_FALSE(Scaler::fit(s, {0, 30}).to_json().contains("power"));
  nlohmann::json bad = j;
  bad["power"] = {2.0, nullptr};
  CHECK_THROWS_WITH(Scaler::from_json(bad), doctest::Contains("scaler.power: found 2.0"));
  bad["power"] = {0.0};
  CHECK_THROWS_WITH(Scaler::from_json(bad), doctest::Contains("found 1 entries for 2 channels"));
  bad["power"] = "log";
  CHECK_THROWS_WITH(Scaler::from_json(bad), doctest::Contains("scaler.power"));
  bad.erase("power");
  CHECK_THROWS_WITH(Scaler::from_json(bad), doctest::Contains("scaler.power: missing"));
  bad = j;
  bad["type"] = "zscore";
  CHECK_THROWS_WITH(Scaler::from_json(bad), doctest::Contains("scaler.power: present"));
}

TEST_CASE("the reader refuses a target outside the transform's domain: file, line, column") {
  const std::string text = "date,y,x\n2024-01-01,3,-1\n2024-01-02,0,2\n2024-01-03,NA,-4\n";
  CsvOptions opt;
  opt.missing = MissingPolicy::kInterpolate;
  opt.domain = ValueTransform{0.0, 1};  // log of the first column
  opt.domain_setting = "data.transform takes the logarithm of the targets";
  // y's 0 on line 3; x (not a target) may be negative; the NA is filled, not checked.
  CHECK_THROWS_WITH(load_series(CsvTable::parse(text, "t.csv"), opt),
                    doctest::Contains("t.csv:3:2"));
  CHECK_THROWS_WITH(
      load_series(CsvTable::parse(text, "t.csv"), opt),
      doctest::Contains("column 'y': found 0, expected a value > 0 (data.transform takes the "
                        "logarithm of the targets)"));
  opt.domain.lambda = 0.5;  // a power takes 0
  CHECK_NOTHROW(load_series(CsvTable::parse(text, "t.csv"), opt));
  opt.domain.channels = SIZE_MAX;  // every column: x's -1 on line 2 is the first
  CHECK_THROWS_WITH(load_series(CsvTable::parse(text, "t.csv"), opt),
                    doctest::Contains("t.csv:2:3"));
}
