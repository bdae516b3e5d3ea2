#pragma once
// Per-channel z-score scaling, fit on training rows only (never on val/test,
// which would leak their statistics into training). Stored with the model so
// predict applies the same transform and inverts it for output. Optionally a power
// transform first (data.transform): log or x^lambda on the leading channels, so that a
// model of the z-scored result fits relative rather than absolute changes.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "attnfc/data/split.hpp"
#include "attnfc/data/value_transform.hpp"

namespace attnfc::data {

class Scaler {
 public:
  Scaler() = default;
  Scaler(std::vector<std::string> channels, std::vector<double> mean, std::vector<double> scale,
         std::vector<double> power = {});

  // Mean and population standard deviation (ddof = 0, like sklearn's
  // StandardScaler) of the observed values in `rows`, per channel, in double.
  // A constant channel gets scale 1. InputError if a channel has no observed value. With
  // `power` active, mean and deviation are those of the transformed values.
  static Scaler fit(const TimeSeries& series, RowRange rows, const ValueTransform& power = {});

  size_t num_channels() const { return mean_.size(); }
  const std::vector<std::string>& channels() const { return channels_; }
  double mean(size_t channel) const { return mean_[channel]; }
  double scale(size_t channel) const { return scale_[channel]; }
  // The channel's power-transform lambda (ValueTransform), or ValueTransform::kNone.
  double power(size_t channel) const {
    return power_.empty() ? ValueTransform::kNone : power_[channel];
  }

  // In place on a row-major [n x num_channels()] block.
  void transform(float* values, size_t n_rows) const;
  void inverse_transform(float* values, size_t n_rows) const;
  // In place on n values that all belong to one channel.
  void transform_channel(float* values, size_t n, size_t channel) const;
  void inverse_transform_channel(float* values, size_t n, size_t channel) const;
  // Scales series.values in place (observed flags unchanged).
  void apply(TimeSeries& series) const;

  // {"type":"zscore","channels":[...],"mean":[...],"scale":[...]}, plus "power":
  // [lambda or null per channel] when a channel is transformed; doubles round-trip
  // exactly. from_json validates and throws InputError naming the key.
  nlohmann::json to_json() const;
  static Scaler from_json(const nlohmann::json& j);

 private:
  void transform_strided(float* values, size_t n, size_t stride, size_t channel) const;
  void inverse_transform_strided(float* values, size_t n, size_t stride, size_t channel) const;

  std::vector<std::string> channels_;
  std::vector<double> mean_, scale_;
  std::vector<double> power_;  // empty: no channel transformed (the files of before)
};

}  // namespace attnfc::data
