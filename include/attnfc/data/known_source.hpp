#pragma once
// What a series knows about its future, assembled for the cross-attention decoder
// (base/sample.hpp KnownInputs): per target step the future covariates' values, calendar
// features and a holiday flag; per series its encoded static values. A TimeSeries holds
// the recipe (TimeSeries::known, shared by its scaled copies) and its series' encoded
// statics; the window sampler and predict fill samples from them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/base/sample.hpp"
#include "attnfc/data/known.hpp"
#include "attnfc/data/series.hpp"

namespace attnfc::data {

struct KnownSource {
  // The series' last future_channels channels are future covariates: known beyond the
  // forecast origin (read, scaled, from the values of each target row).
  size_t future_channels = 0;
  std::vector<CalendarFeature> calendar;
  Holidays holidays;      // empty: no holiday flag
  StaticEncoder statics;  // the static columns' encoding (no columns: no statics)

  // K: future_channels, then 2 per calendar feature, then 1 when there are holidays.
  size_t width() const;
  size_t numeric_width() const { return statics.numeric_width(); }
  size_t category_width() const { return statics.categorical_width(); }
  // The K features of a step at time t whose future covariates are future[0..F).
  void step(int64_t t, const float* future, float* out) const;
  // One name per feature, e.g. "temp", "hour_of_day.sin", "holiday".
  std::vector<std::string> names(const std::vector<std::string>& channels) const;

  // The recipe for the model file (the holiday dates included, so predict needs no file).
  nlohmann::json to_json() const;
  // InputError starting with `what` and naming the key on a malformed object.
  static KnownSource from_json(const nlohmann::json& j, const std::string& what);
};

// Sizes `out`'s known buffers for `series` (nothing when it has no KnownSource).
void reserve_known(const TimeSeries& series, SampleBuffers& out);
// Sample b of `out`: the known features of rows [target_row, target_row + H) and the
// statics of the series holding row target_row - 1 (the forecast origin). No allocation.
void fill_known(const TimeSeries& series, size_t target_row, size_t b, SampleBuffers& out);

}  // namespace attnfc::data
