#pragma once
// A one-channel hourly series for the scoring tests: channel "y", timestamps 0, 3600, ...,
// every value observed, value(t) for t = 0 .. rows - 1 (called in that order, so a
// generator may keep a running state, as a random walk does).
#include <cstddef>
#include <cstdint>

#include "attnfc/data/series.hpp"

namespace attnfc_test {

template <typename Value>
attnfc::data::TimeSeries hourly_series(size_t rows, Value value) {
  attnfc::data::TimeSeries s;
  s.channels = {"y"};
  for (size_t t = 0; t < rows; ++t) {
    s.timestamps.push_back(static_cast<int64_t>(3600 * t));
    s.values.push_back(value(t));
  }
  s.observed.assign(rows, 1);
  return s;
}

}  // namespace attnfc_test
