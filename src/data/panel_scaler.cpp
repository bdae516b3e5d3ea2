// Per-series scaling of a panel (panel_scaler.hpp).
#include "attnfc/data/panel_scaler.hpp"

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"

namespace attnfc::data {

PanelScaler::PanelScaler(std::vector<std::string> ids, std::vector<Scaler> scalers)
    : ids_(std::move(ids)), scalers_(std::move(scalers)) {
  if (ids_.size() != scalers_.size())
    throw InputError("series_scalers: found " + std::to_string(ids_.size()) + " ids and " +
                     std::to_string(scalers_.size()) + " scalers; expected one scaler per id");
  for (size_t k = 0; k < ids_.size(); ++k) {
    if (!index_.emplace(ids_[k], k).second)
      throw InputError("series_scalers: the id '" + ids_[k] +
                       "' appears twice; expected each series once");
    if (scalers_[k].channels() != scalers_.front().channels())
      throw InputError("series_scalers: series '" + ids_[k] +
                       "' is scaled over other channels than series '" + ids_.front() +
                       "'; expected the same channels for every series");
  }
}

PanelScaler PanelScaler::fit(const TimeSeries& series, const PanelSplit& split,
                             const ValueTransform& power) {
  const std::vector<SeriesSegment> segments = series.series_segments();
  std::vector<std::string> ids;
  std::vector<Scaler> scalers;
  for (size_t k = 0; k < split.splits.size(); ++k) {
    const SeriesSegment& seg = segments.at(split.series[k]);
    try {
      scalers.push_back(Scaler::fit(series, split.splits[k].train, power));
    } catch (const InputError& e) {
      if (segments.size() == 1) throw;
      throw InputError("series '" + seg.id + "': " + e.what());
    }
    ids.push_back(seg.id);
  }
  return PanelScaler(std::move(ids), std::move(scalers));
}

const Scaler* PanelScaler::find(std::string_view id) const {
  const auto it = index_.find(std::string(id));
  return it == index_.end() ? nullptr : &scalers_[it->second];
}

nlohmann::json PanelScaler::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Scaler& s : scalers_) list.push_back(s.to_json());
  return {{"ids", ids_}, {"scalers", std::move(list)}};
}

PanelScaler PanelScaler::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("ids") || !j.contains("scalers") || !j.at("ids").is_array() ||
      !j.at("scalers").is_array())
    throw InputError("series_scalers: expected {\"ids\": [...], \"scalers\": [...]}");
  std::vector<std::string> ids;
  for (const auto& id : j.at("ids")) {
    if (!id.is_string())
      throw InputError("series_scalers.ids: found " + id.dump() +
                       ", expected series ids as strings");
    ids.push_back(id.get<std::string>());
  }
  std::vector<Scaler> scalers;
  for (const auto& s : j.at("scalers")) scalers.push_back(Scaler::from_json(s));
  return PanelScaler(std::move(ids), std::move(scalers));
}

void scale_panel(const TimeSeries& series, const PanelSplit& split, const PanelScaler& scalers,
                 float* values) {
  const std::vector<SeriesSegment> segments = series.series_segments();
  const size_t nc = series.num_channels();
  for (size_t k = 0; k < split.splits.size(); ++k) {
    const SeriesSegment& seg = segments.at(split.series[k]);
    scalers.at(k).transform(values + seg.begin * nc, seg.rows());
  }
}

}  // namespace attnfc::data
