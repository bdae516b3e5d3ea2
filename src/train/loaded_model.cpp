#include "attnfc/train/loaded_model.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_parse.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/known_setup.hpp"
#include "member_sums.hpp"

namespace attnfc::train {

namespace {

// The known inputs of `batch` windows for the batch * C channel-independent samples made
// from them (sample b * C + c is window b's channel c): each window's repeated C times.
KnownInputs repeat_known(const KnownInputs& k, int64_t batch, int C, int H, SampleBuffers& buf) {
  if (!k.known && !k.static_numeric && !k.static_codes) return k;
  buf.capacity = batch * C;
  buf.horizon = H;
  buf.reserve_known(k.known_width, k.numeric_width, k.category_width);
  const int64_t K = k.known_width * H, S = k.numeric_width, G = k.category_width;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t dst = b * C + c;
      if (K) std::copy_n(k.known + b * K, K, buf.known.data() + dst * K);
      if (S) std::copy_n(k.static_numeric + b * S, S, buf.static_numeric.data() + dst * S);
      if (G) std::copy_n(k.static_codes + b * G, G, buf.static_codes.data() + dst * G);
    }
  return buf.view(batch * C).known;
}

}  // namespace

BatchForecaster model_forecaster(const Members& members, int channels, int horizon,
                                 std::vector<float>* levels, const Calibration* cal,
                                 bool nan_for_unreadable) {
  if (members.empty()) throw std::logic_error("model_forecaster: no networks");
  const model::ModelConfig& cfg = members.front()->config();
  const int L = cfg.context_length;
  const int H = horizon > 0 ? horizon : cfg.horizon;
  const bool mixed = cfg.channel_mode == ChannelMode::kMixed;
  const int C = channels;
  // Scratch buffers are reused across calls (each member's forecast still allocates).
  auto ctx = std::make_shared<std::vector<float>>();
  auto obs = std::make_shared<std::vector<uint8_t>>();
  auto known = std::make_shared<SampleBuffers>();
  const int model_h = cfg.horizon;  // known inputs always cover the model's H steps
  return [members, L, H, C, mixed, ctx, obs, known, model_h, levels, cal, nan_for_unreadable](
             const SampleBatch& s, float* out) {
    if (s.context != L || s.width != C)
      throw std::invalid_argument("model_forecaster: samples of another shape");
    const int64_t batch = s.count, n = batch * L * C;
    const float* values = s.context_values;
    const uint8_t* observed = s.context_observed;
    if (!mixed) {  // sample (b, c) becomes row b * C + c, a [L] series of its own
      ctx->resize(n);
      obs->resize(n);
      for (int64_t b = 0; b < batch; ++b)
        for (int t = 0; t < L; ++t)
          for (int c = 0; c < C; ++c) {
            const int64_t src = (b * L + t) * C + c, dst = (b * C + c) * L + t;
            (*ctx)[dst] = values[src];
            (*obs)[dst] = observed ? observed[src] : 1;
          }
      values = ctx->data();
      observed = obs->data();
    }
    const int64_t samples = mixed ? batch : batch * C;
    const KnownInputs inputs = mixed ? s.known : repeat_known(s.known, batch, C, model_h, *known);
    detail::MemberSums sums;
    try {
      sums = detail::sum_members(members, values, observed, samples, L, mixed ? C : 1, H, inputs,
                                 levels != nullptr, nan_for_unreadable);
    } catch (const model::NonFiniteForecast& e) {
      // Channel-independent: sample b * C + c is channel c of window b.
      throw model::NonFiniteForecast(mixed ? e.window() : e.window() / C);
    } catch (const model::UnobservedContext& e) {
      if (mixed) throw;
      throw model::UnobservedContext(e.window() / C, e.steps(), e.window() % C);
    }
    std::vector<float>& f = sums.point;
    detail::divide_by_count(f, sums.count);
    for (int64_t b = 0; b < batch; ++b)
      for (int h = 0; h < H; ++h)
        for (int c = 0; c < C; ++c)
          out[(b * H + h) * C + c] = mixed ? f[(b * H + h) * C + c] : f[(b * C + c) * H + h];
    if (levels) {
      detail::divide_by_count(sums.levels, sums.count);
      detail::window_levels(sums.levels, members.front()->config().levels(), H, mixed, batch, C,
                            *levels);
    }
    if (levels && cal) cal->apply(levels->data(), batch, H);
  };
}

namespace {

// The "epoch" metadata: absent (-1: an ensemble, or a file from before it existed) or a
// whole number of epochs.
int kept_epoch(const std::string& text, const std::string& path) {
  if (text.empty()) return -1;
  const bool digits = text.size() <= 7 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits)
    throw InputError(path + ": metadata 'epoch' is '" + printable_excerpt(text) +
                     "', expected the number of the epoch kept (0 to 9999999)");
  return std::stoi(text);
}

data::PanelScaler series_scalers_of(const nlohmann::json& j, const std::string& path) {
  try {
    return data::PanelScaler::from_json(j);
  } catch (const InputError& e) {
    throw InputError(path + ": metadata " + e.what());
  }
}

// The decoder's recipe, checked against the widths the network was built for.
std::shared_ptr<const data::KnownSource> known_of(const nlohmann::json& j,
                                                  const model::ModelConfig& c,
                                                  const std::string& path) {
  auto k = std::make_shared<data::KnownSource>(
      data::KnownSource::from_json(j, path + ": metadata 'known'"));
  if (static_cast<int>(k->width()) != c.known_features ||
      static_cast<int>(k->numeric_width()) != c.static_numeric ||
      k->statics.category_sizes() != c.static_categories ||
      k->future_channels > static_cast<size_t>(c.token_channels()))
    throw InputError(path + ": metadata 'known' describes " + std::to_string(k->width()) +
                     " known features and " + std::to_string(k->numeric_width()) +
                     " numeric statics, but the network reads " + std::to_string(c.known_features) +
                     " and " + std::to_string(c.static_numeric) +
                     "; expected the file as training wrote it");
  return k;
}

// A network with a NaN or infinite weight forecasts NaN for every series, so it is refused
// when loaded, with the tensor and element named (a diverged run whose file was kept by
// hand, or a damaged file), rather than after a whole panel was computed.
void check_finite_weights(const LoadedModel& lm) {
  const size_t networks = lm.params.size();
  for (size_t k = 0; k < networks; ++k) {
    for (const ag::NamedTensor& p : lm.params[k]->all()) {
      const float* v = p.tensor.data();
      const float* end = v + p.tensor.numel();
      const float* bad = std::find_if(v, end, [](float x) { return !std::isfinite(x); });
      if (bad == end) continue;
      const std::string network =
          networks > 1 ? " of network " + std::to_string(k + 1) + " of " + std::to_string(networks)
                       : "";
      throw InputError(lm.path + ": tensor '" + p.name + "'" + network + " holds " +
                       (std::isnan(*bad) ? "NaN" : "an infinite value") + " at element " +
                       std::to_string(bad - v) +
                       "; expected finite weights (did its training diverge, or is the file "
                       "damaged?)");
    }
  }
}

}  // namespace

LoadedModel LoadedModel::linear_start_beside(bool* mismatch) const {
  namespace fs = std::filesystem;
  if (mismatch) *mismatch = false;
  const fs::path start_path = fs::path(path).parent_path() / "linear_start.safetensors";
  if (!fs::exists(start_path) || fs::equivalent(start_path, path)) return {};
  LoadedModel start = load(start_path.string());
  if (start.columns == columns && start.context() == context() && start.horizon() == horizon())
    return start;
  if (mismatch) *mismatch = true;
  return {};
}

LoadedModel LoadedModel::load(const std::string& path) {
  if (!std::filesystem::exists(path)) throw InputError(path + ": model file not found");
  const model::Checkpoint ck = model::Checkpoint::read(path);
  LoadedModel lm;
  lm.path = path;
  auto need = [&](const char* key) {
    const std::string v = ck.meta(key);
    if (v.empty())
      throw InputError(path + ": metadata '" + key +
                       "' is missing; expected a model written by 'attnfc train'");
    return parse_json_bounded(v, path + ": metadata '" + key + "'");
  };
  lm.scaler = data::Scaler::from_json(need("scaler"));
  lm.series_scalers = ck.meta("series_scalers").empty()
                          ? data::PanelScaler({""}, {lm.scaler})
                          : series_scalers_of(need("series_scalers"), path);
  const nlohmann::json cols = need("columns");
  if (!cols.is_array() || cols.empty())
    throw InputError(path + ": metadata 'columns': expected a non-empty array of names");
  for (const auto& c : cols) {
    if (!c.is_string() || c.get<std::string>().empty())
      throw InputError(path + ": metadata 'columns': found " + json_excerpt(c) +
                       ", expected a non-empty column name (a string)");
    lm.columns.push_back(c.get<std::string>());
  }
  lm.run = parse_run_config(need("config"));
  lm.frequency = ck.meta("frequency", "unknown");
  lm.epoch = kept_epoch(ck.meta("epoch"), path);
  if (lm.scaler.num_channels() != lm.columns.size())
    throw InputError(path + ": the scaler has " + std::to_string(lm.scaler.num_channels()) +
                     " channels but 'columns' names " + std::to_string(lm.columns.size()));
  // Every series' scaler is applied to the model's columns: a hand-edited file must not
  // make one read past them.
  if (lm.series_scalers.size() == 0 || lm.series_scalers.at(0).channels() != lm.scaler.channels())
    throw InputError(path + ": metadata 'series_scalers' does not scale the columns " +
                     nlohmann::json(lm.columns).dump() +
                     "; expected one scaler per series over them");
  if (lm.run.train.ensemble != ck.members())
    throw InputError(path + ": metadata 'config' says train.ensemble " +
                     std::to_string(lm.run.train.ensemble) + ", but the file holds " +
                     std::to_string(ck.members()) + " networks");
  for (int k = 0; k < ck.members(); ++k) {
    lm.params.push_back(std::make_unique<ag::ParameterSet>(ag::ParameterSet::Gradients::kNone));
    lm.networks.push_back(
        std::make_unique<model::PatchTransformer>(ck.member_config(k), *lm.params.back(), 0));
  }
  ck.load_members(lm.members());
  check_finite_weights(lm);
  lm.refit = !ck.meta("refit").empty();
  if (!ck.meta("known").empty()) lm.known = known_of(need("known"), lm.config(), path);
  if (!ck.meta("calibration").empty())
    lm.calibration = std::make_shared<const Calibration>(Calibration::from_json(
        need("calibration"), path + ": metadata 'calibration'", lm.config().quantiles,
        lm.config().horizon, static_cast<int>(lm.columns.size())));
  if (!lm.known && lm.config().cross_attention() &&
      (lm.config().known_features > 0 || lm.config().static_numeric > 0 ||
       !lm.config().static_categories.empty()))
    throw InputError(path +
                     ": metadata 'known' is missing, but the model reads known "
                     "features; expected a model written by 'attnfc train'");
  return lm;
}

Members LoadedModel::members() const {
  Members out;
  for (const auto& n : networks) out.push_back(n.get());
  return out;
}

data::PanelScaler LoadedModel::scalers_for(const data::TimeSeries& series,
                                           const data::PanelSplit& split, size_t* fitted) const {
  const std::vector<data::SeriesSegment> segments = series.series_segments();
  std::vector<std::string> ids;
  std::vector<data::Scaler> scalers;
  size_t fresh = 0;
  for (size_t k = 0; k < split.splits.size(); ++k) {
    const std::string& id = segments.at(split.series[k]).id;
    const data::Scaler* stored = series_scalers.find(id);
    if (stored) {
      scalers.push_back(*stored);
    } else {
      scalers.push_back(data::Scaler::fit(series, split.splits[k].train,
                                          run.data.value_transform(series.target_channels)));
      ++fresh;
    }
    ids.push_back(id);
  }
  if (fitted) *fitted = fresh;
  return data::PanelScaler(std::move(ids), std::move(scalers));
}

data::Scaler LoadedModel::scaler_of(const data::TimeSeries& series, data::RowRange fit_rows,
                                    const std::string& what) const {
  if (series.num_series() != 1)
    throw InputError(series.source + ": " + what + " reads one series, found " +
                     std::to_string(series.num_series()) + " (data.id_column '" + series.id_column +
                     "'); expected a file holding one of them");
  const data::Scaler* stored = series_scalers.find(series.series_segments().front().id);
  return stored ? *stored
                : data::Scaler::fit(series, fit_rows,
                                    run.data.value_transform(series.target_channels));
}

data::TimeSeries LoadedModel::read_series(const std::string& csv_path) const {
  data::CsvOptions opt = run.data.csv;
  opt.path = csv_path;
  opt.value_columns = columns;
  opt.regular = false;
  const bool statics = known && !known->statics.columns.empty();
  const data::CsvTable table =
      statics ? data::CsvTable::read_file(csv_path, opt.delimiter) : data::CsvTable();
  data::TimeSeries series = statics ? data::load_series(table, opt) : data::load_series(opt);
  series.target_channels = static_cast<size_t>(config().target_channels);
  attach_known(known, series, statics ? &table : nullptr, opt.number);
  return series;
}

}  // namespace attnfc::train
