// Per-channel z-score fit on training rows only; JSON form for checkpoints.
#include "attnfc/data/scaler.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "internal.hpp"

namespace attnfc::data {

namespace {

double to_power(double x, double lambda) {
  return lambda == 0.0 ? std::log(x) : std::pow(x, lambda);
}

// t below 0 is outside x^lambda's range (a forecast under the smallest transformable
// value): read as 0, the bottom of the domain.
double from_power(double t, double lambda) {
  if (lambda == 0.0) return std::exp(t);
  return t > 0.0 ? std::pow(t, 1.0 / lambda) : 0.0;
}

}  // namespace

Scaler::Scaler(std::vector<std::string> channels, std::vector<double> mean,
               std::vector<double> scale, std::vector<double> power)
    : channels_(std::move(channels)),
      mean_(std::move(mean)),
      scale_(std::move(scale)),
      power_(std::move(power)) {
  if (!power_.empty() && power_.size() != mean_.size())
    throw InputError("scaler.power: found " + std::to_string(power_.size()) + " entries for " +
                     std::to_string(mean_.size()) + " channels; expected one per channel");
  for (double p : power_)
    if (p != ValueTransform::kNone && !(p >= 0.0 && p <= 1.0))
      throw InputError("scaler.power: found " + std::to_string(p) +
                       ", expected a lambda in [0, 1] or null");
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

Scaler Scaler::fit(const TimeSeries& series, RowRange rows, const ValueTransform& power) {
  const size_t nc = series.num_channels();
  std::vector<double> lambdas;
  if (power.active()) {
    lambdas.assign(nc, ValueTransform::kNone);
    std::fill_n(lambdas.begin(), std::min(power.channels, nc), power.lambda);
  }
  const auto value = [&](size_t r, size_t c) -> double {
    const double x = series.value(r, c);
    if (lambdas.empty() || lambdas[c] == ValueTransform::kNone) return x;
    if (!power.accepts(x))  // every transformed channel has power.lambda
      throw InputError(
          series.source + ": scaler: channel '" + detail::quote_token(series.channels[c]) +
          "' holds " + std::to_string(x) + " in the training rows; expected values " +
          power.domain() +
          (power.lambda == 0.0 ? " (data.transform \"log\")" : " (data.transform, a power)"));
    return to_power(x, lambdas[c]);
  };
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
      sum += value(r, c);
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
      const double d = value(r, c) - m;
      ss += d * d;
    }
    const double sd = std::sqrt(ss / static_cast<double>(count));
    mean[c] = m;
    scale[c] = sd > 0.0 && std::isfinite(sd) ? sd : 1.0;  // a constant channel is only centred
  }
  return Scaler(series.channels, std::move(mean), std::move(scale), std::move(lambdas));
}

void Scaler::transform(float* v, size_t n_rows) const {
  const size_t nc = mean_.size();
  for (size_t c = 0; c < nc; ++c) transform_strided(v + c, n_rows, nc, c);
}

void Scaler::inverse_transform(float* v, size_t n_rows) const {
  const size_t nc = mean_.size();
  for (size_t c = 0; c < nc; ++c) inverse_transform_strided(v + c, n_rows, nc, c);
}

void Scaler::transform_channel(float* v, size_t n, size_t c) const {
  transform_strided(v, n, 1, c);
}

void Scaler::inverse_transform_channel(float* v, size_t n, size_t c) const {
  inverse_transform_strided(v, n, 1, c);
}

// Out of the domain (log of 0) the result is -inf or NaN: the callers check their inputs
// (data::CsvOptions::domain) and outputs (predict refuses non-finite forecasts).
void Scaler::transform_strided(float* v, size_t n, size_t stride, size_t c) const {
  const double m = mean_[c], s = scale_[c], p = power(c);
  if (p == ValueTransform::kNone) {
    for (size_t i = 0; i < n; ++i) v[i * stride] = static_cast<float>((v[i * stride] - m) / s);
  } else {
    for (size_t i = 0; i < n; ++i)
      v[i * stride] = static_cast<float>((to_power(v[i * stride], p) - m) / s);
  }
}

void Scaler::inverse_transform_strided(float* v, size_t n, size_t stride, size_t c) const {
  const double m = mean_[c], s = scale_[c], p = power(c);
  if (p == ValueTransform::kNone) {
    for (size_t i = 0; i < n; ++i) v[i * stride] = static_cast<float>(v[i * stride] * s + m);
  } else {
    for (size_t i = 0; i < n; ++i)
      v[i * stride] = static_cast<float>(from_power(v[i * stride] * s + m, p));
  }
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
  // A transformed scaler has another type name, so that an attnfc from before transforms
  // refuses the file by its type instead of forecasting in transformed units.
  nlohmann::json j = {{"type", power_.empty() ? "zscore" : "power_zscore"},
                      {"channels", channels_},
                      {"mean", mean_},
                      {"scale", scale_}};
  if (power_.empty()) return j;  // untransformed: the bytes of the files of before
  nlohmann::json power = nlohmann::json::array();
  for (double p : power_)
    power.push_back(p == ValueTransform::kNone ? nlohmann::json() : nlohmann::json(p));
  j["power"] = std::move(power);
  return j;
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
  const bool powered = type == "power_zscore";
  if (!powered && type != "zscore")
    throw InputError("scaler.type: found " + type.dump() +
                     ", expected \"zscore\" or \"power_zscore\"");
  if (powered != j.contains("power"))
    throw InputError(std::string("scaler.power: ") + (powered ? "missing" : "present") +
                     "; expected it with type \"power_zscore\" only");
  std::vector<std::string> channels;
  std::vector<double> mean, scale, power;
  try {
    channels = need("channels").get<std::vector<std::string>>();
    mean = need("mean").get<std::vector<double>>();
    scale = need("scale").get<std::vector<double>>();
    if (powered) {
      if (!j.at("power").is_array())
        throw InputError("scaler.power: found " + j.at("power").dump() +
                         ", expected an array of lambdas (number or null)");
      for (const nlohmann::json& p : j.at("power"))
        power.push_back(p.is_null() ? ValueTransform::kNone : p.get<double>());
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("scaler: ") + e.what() +
                     "; expected channels as strings and mean/scale as numbers");
  }
  return Scaler(std::move(channels), std::move(mean), std::move(scale), std::move(power));
}

}  // namespace attnfc::data
