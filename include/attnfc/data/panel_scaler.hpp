#pragma once
// The scaling of a panel: one z-score Scaler per series, each fit on that series' own
// training rows only (no series lends its statistics to another, no val/test row to any),
// so a global model sees every series on a comparable scale. A wide file is a panel of one
// series whose id is "". Stored with the model by id, so predict and evaluate scale a known
// series exactly as training did.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnfc/data/scaler.hpp"
#include "attnfc/data/split.hpp"

namespace attnfc::data {

class PanelScaler {
 public:
  PanelScaler() = default;
  // InputError when the counts differ, an id repeats, or the scalers' channels differ.
  PanelScaler(std::vector<std::string> ids, std::vector<Scaler> scalers);

  // One scaler per series of split (split.series[k] is its segment), fit on
  // split.splits[k].train, after the targets' power transform `power` (Scaler::fit).
  static PanelScaler fit(const TimeSeries& series, const PanelSplit& split,
                         const ValueTransform& power = {});

  size_t size() const { return scalers_.size(); }
  const std::vector<std::string>& ids() const { return ids_; }
  const Scaler& at(size_t k) const { return scalers_[k]; }
  // The scaler of the series with this id; nullptr when the panel had no such series.
  const Scaler* find(std::string_view id) const;

  // {"ids": [...], "scalers": [Scaler::to_json, ...]}; from_json checks it and throws an
  // InputError naming the key.
  nlohmann::json to_json() const;
  static PanelScaler from_json(const nlohmann::json& j);

 private:
  std::vector<std::string> ids_;
  std::vector<Scaler> scalers_;
  std::unordered_map<std::string, size_t> index_;  // id -> k: predict looks up every series
};

// values [series.rows() x channels] (series.values or a copy of it): the rows of segment
// split.series[k] scaled by scalers.at(k), in place; rows of series left out are untouched.
void scale_panel(const TimeSeries& series, const PanelSplit& split, const PanelScaler& scalers,
                 float* values);

}  // namespace attnfc::data
