// Per-channel z-score fit on training rows only; JSON form for checkpoints.
#include "attnfc/data/scaler.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "internal.hpp"

namespace attnfc::data {

Scaler::Scaler(std::vector<std::string> channels, std::vector<double> mean,
               std::vector<double> scale)
    : channels_(std::move(channels)), mean_(std::move(mean)), scale_(std::move(scale)) {
  if (mean_.size() != scale_.size() || channels_.size() != mean_.size()) {
    throw InputError("scaler: found " + std::to_string(channels_.size()) + " channels, " +
                     std::to_string(mean_.size()) + " means and " + std::to_string(scale_.size()) +
                     " scales; expected the same number of each");
  }
  for (size_t c = 0; c < scale_.size(); ++c) {
    if (!std::isfinite(mean_[c]) || !std::isfinite(scale_[c]) || !(scale_[c] > 0.0)) {
      throw InputError("scaler: channel " + std::to_string(c) +
                       " has a non-finite mean or a scale that is not positive; expected finite "
                       "mean and scale > 0");
    }
  }
}

Scaler Scaler::fit(const TimeSeries& series, RowRange rows) {
  const size_t nc = series.num_channels();
  if (rows.end > series.rows() || rows.begin >= rows.end) {
    throw InputError(series.source + ": scaler: row range [" + std::to_string(rows.begin) + ", " +
                     std::to_string(rows.end) + ") is empty or outside the " +
                     std::to_string(series.rows()) + " rows; expected training rows");
  }
  std::vector<double> mean(nc, 0.0), scale(nc, 1.0);
  for (size_t c = 0; c < nc; ++c) {
    // Two passes in double: exact enough for 1e6 rows and order-fixed.
    double sum = 0.0;
    size_t count = 0;
    for (size_t r = rows.begin; r < rows.end; ++r) {
      if (!series.is_observed(r, c)) continue;
      sum += series.value(r, c);
      ++count;
    }
    if (count == 0) {
      throw InputError(series.source + ": scaler: channel '" +
                       detail::quote_token(series.channels[c]) +
                       "' has no observed value in the training rows; expected at least one");
    }
    const double m = sum / static_cast<double>(count);
    double ss = 0.0;
    for (size_t r = rows.begin; r < rows.end; ++r) {
      if (!series.is_observed(r, c)) continue;
      const double d = series.value(r, c) - m;
      ss += d * d;
    }
    const double sd = std::sqrt(ss / static_cast<double>(count));
    mean[c] = m;
    scale[c] = sd > 0.0 && std::isfinite(sd) ? sd : 1.0;  // a constant channel is only centred
  }
  return Scaler(series.channels, std::move(mean), std::move(scale));
}

void Scaler::transform(float* v, size_t n_rows) const {
  const size_t nc = mean_.size();
  for (size_t r = 0; r < n_rows; ++r) {
    for (size_t c = 0; c < nc; ++c) {
      v[r * nc + c] = static_cast<float>((v[r * nc + c] - mean_[c]) / scale_[c]);
    }
  }
}

void Scaler::inverse_transform(float* v, size_t n_rows) const {
  const size_t nc = mean_.size();
  for (size_t r = 0; r < n_rows; ++r) {
    for (size_t c = 0; c < nc; ++c) {
      v[r * nc + c] = static_cast<float>(v[r * nc + c] * scale_[c] + mean_[c]);
    }
  }
}

void Scaler::transform_channel(float* v, size_t n, size_t c) const {
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((v[i] - mean_[c]) / scale_[c]);
}

void Scaler::inverse_transform_channel(float* v, size_t n, size_t c) const {
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] * scale_[c] + mean_[c]);
}

void Scaler::apply(TimeSeries& series) const {
  if (series.num_channels() != num_channels()) {
    throw InputError(series.source + ": scaler has " + std::to_string(num_channels()) +
                     " channels, the series " + std::to_string(series.num_channels()) +
                     "; expected the channels the scaler was fit on");
  }
  transform(series.values.data(), series.rows());
}

nlohmann::json Scaler::to_json() const {
  return {{"type", "zscore"}, {"channels", channels_}, {"mean", mean_}, {"scale", scale_}};
}

Scaler Scaler::from_json(const nlohmann::json& j) {
  const auto need = [&](const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key)) {
      throw InputError(std::string("scaler.") + key +
                       ": missing; expected a z-score scaler with "
                       "type, channels, mean and scale");
    }
    return j.at(key);
  };
  const nlohmann::json& type = need("type");
  if (!type.is_string() || type.get<std::string>() != "zscore") {
    throw InputError("scaler.type: found " + type.dump() + ", expected \"zscore\"");
  }
  std::vector<std::string> channels;
  std::vector<double> mean, scale;
  try {
    channels = need("channels").get<std::vector<std::string>>();
    mean = need("mean").get<std::vector<double>>();
    scale = need("scale").get<std::vector<double>>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("scaler: ") + e.what() +
                     "; expected channels as strings and mean/scale as numbers");
  }
  return Scaler(std::move(channels), std::move(mean), std::move(scale));
}

}  // namespace attnfc::data
