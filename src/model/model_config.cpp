// ModelConfig: parsing, validation, and the resolved JSON form.
#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/model/config.hpp"

namespace attnfc::model {
namespace {

std::string key(const std::string& name) {
  return "config key 'model." + name + "'";
}

}  // namespace

std::vector<std::pair<int, int>> symmetric_pairs(const std::vector<float>& levels) {
  std::vector<std::pair<int, int>> out;
  const int Q = static_cast<int>(levels.size());
  for (int lo = 0; lo < Q; ++lo)
    for (int hi = Q - 1; hi > lo; --hi)
      if (levels[lo] < 0.5f && std::fabs(levels[lo] + levels[hi] - 1.0f) < 1e-6f)
        out.emplace_back(lo, hi);
  return out;
}

void ModelConfig::validate() const {
  auto range = [](const std::string& name, double x, double lo, double hi) {
    if (!(x >= lo && x <= hi)) {
      throw InputError(key(name) + ": found " + std::to_string(x) + ", out of range: expected [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
  };
  range("context_length", context_length, 1, 65536);
  range("patch_len", patch_len, 1, 4096);
  range("horizon", horizon, 1, 65536);
  range("channels", channels, 1, 4096);
  range("d_model", d_model, 1, 4096);
  range("n_heads", n_heads, 1, 256);
  range("n_layers", n_layers, 0, 64);
  range("ff_mult", ff_mult, 1, 16);
  range("dropout", dropout, 0.0, 0.9);
  range("linear_lookback", linear_lookback, 0, 65536);
  if (!(norm_eps > 0 && norm_eps <= 1)) {
    throw InputError(key("norm_eps") + ": expected a number in (0, 1]");
  }
  if (!(layernorm_eps > 0 && layernorm_eps <= 0.1f)) {
    throw InputError(key("layernorm_eps") + ": expected a number in (0, 0.1]");
  }
  if (!(huber_delta > 0 && huber_delta <= 1e6f)) {
    throw InputError(key("huber_delta") + ": expected a number in (0, 1e6]");
  }
  if (patch_stride < 0 || patch_stride > patch_len) {
    throw InputError(key("patch_stride") + ": found " + std::to_string(patch_stride) +
                     ", expected 1 to model.patch_len (" + std::to_string(patch_len) +
                     "), or 0 for patch_len (no overlap)");
  }
  if (patch_stride != 0 && patch_stride != patch_len) {
    const int S = patch_stride;
    const int over = context_length - patch_len;
    if (over < 0 || over % S != 0) {
      const int below = std::max(0, over) / S * S + patch_len;
      throw InputError(key("context_length") + ": found " + std::to_string(context_length) +
                       ", expected model.patch_len (" + std::to_string(patch_len) +
                       ") plus a multiple of model.patch_stride (" + std::to_string(S) +
                       "), e.g. " + std::to_string(below) + " or " + std::to_string(below + S));
    }
  } else if (context_length % patch_len != 0) {
    const int below = context_length / patch_len * patch_len;
    const int above = below + patch_len;
    throw InputError(key("context_length") + ": found " + std::to_string(context_length) +
                     ", expected a multiple of model.patch_len (" + std::to_string(patch_len) +
                     "), e.g. " + (below > 0 ? std::to_string(below) + " or " : "") +
                     std::to_string(above));
  }
  if (target_channels < 0 || target_channels > channels ||
      (target_channels > 0 && channel_mode != ChannelMode::kMixed))
    throw InputError(key("target_channels") + ": found " + std::to_string(target_channels) +
                     ", expected 0, or 1 to model.channels (" + std::to_string(channels) +
                     ") with model.channel_mode \"mixed\"");
  if (linear_lookback > 0 && channel_mode == ChannelMode::kMixed) {
    throw InputError(key("linear_lookback") + ": found " + std::to_string(linear_lookback) +
                     ", but the linear shortcut maps one series at a time; use 0 with "
                     "model.channel_mode = \"mixed\", or channel_mode \"independent\"");
  }
  validate_decoder();
  validate_quantiles();
  if (d_model % n_heads != 0) {
    throw InputError(key("d_model") + ": found " + std::to_string(d_model) +
                     ", expected a multiple of model.n_heads (" + std::to_string(n_heads) + ")");
  }
  if (norm == InputNorm::kInstance && loss_positions == LossPositions::kAll) {
    // Instance statistics span the whole context, so position n would see the mean
    // and spread of its own targets: a leak that trains the model on an easier task.
    throw InputError(
        key("norm") +
        ": \"instance\" normalises with statistics of the whole context, so earlier positions "
        "would see their own targets; use it with model.loss_positions = \"last\", or use "
        "model.norm = \"causal\"");
  }
}

void ModelConfig::validate_decoder() const {
  const bool reads_known = known_features > 0 || static_numeric > 0 || !static_categories.empty();
  if (decoder == Decoder::kLinear) {
    if (reads_known)
      throw InputError(key("decoder") +
                       ": found \"linear\", but the run has future covariates, calendar, "
                       "holiday or static features, which only the cross-attention decoder "
                       "reads; expected \"cross_attention\"");
    return;
  }
  if (decoder_layers < 1 || decoder_layers > 16)
    throw InputError(key("decoder_layers") + ": found " + std::to_string(decoder_layers) +
                     ", expected 1 to 16");
  if (known_features < 0 || known_features > 4096 || static_numeric < 0 || static_numeric > 4096)
    throw InputError(key("known_features") + ": expected 0 to 4096 known and static values");
  for (int v : static_categories)
    if (v < 2 || v > 1000000)
      throw InputError(key("static_categories") + ": found " + std::to_string(v) +
                       ", expected 2 to 1000000 (the categories plus the unseen slot)");
  if (loss_positions != LossPositions::kLast)
    throw InputError(key("loss_positions") +
                     ": found \"all\", but the cross-attention decoder forecasts from the "
                     "forecast origin only (its queries are the H steps after the context); "
                     "expected \"last\"");
}

int median_level(const std::vector<float>& levels) {
  for (size_t i = 0; i < levels.size(); ++i)
    if (levels[i] == 0.5f) return static_cast<int>(i);
  return 0;
}

int ModelConfig::median_level() const {
  return model::median_level(quantiles);
}

ModelConfig with_context(const ModelConfig& config, int context_length) {
  ModelConfig c = config;
  c.context_length = context_length;
  c.linear_lookback = std::min(c.linear_lookback, context_length);
  return c;
}

void ModelConfig::validate_quantiles() const {
  if (quantiles.empty() && quantile_positions != LossPositions::kAll)
    throw InputError(key("quantile_positions") +
                     ": found \"last\" without model.quantiles; expected it only with quantile "
                     "levels (it says where the levels other than the median are trained)");
  if (quantiles.empty()) return;
  if (quantile_positions == LossPositions::kLast && loss_positions == LossPositions::kLast)
    throw InputError(key("quantile_positions") +
                     ": found \"last\" with model.loss_positions \"last\" (every level is then "
                     "trained at the last position already); expected model.loss_positions "
                     "\"all\", or quantile_positions \"all\"");
  if (quantiles.size() > 31)
    throw InputError(key("quantiles") + ": found " + std::to_string(quantiles.size()) +
                     " levels, expected at most 31");
  for (size_t i = 0; i < quantiles.size(); ++i) {
    const float q = quantiles[i];
    if (!(q > 0.0f && q < 1.0f))
      throw InputError(key("quantiles") + ": found " + std::to_string(q) +
                       ", expected levels strictly between 0 and 1");
    if (i > 0 && !(q > quantiles[i - 1]))
      throw InputError(key("quantiles") + ": found " + std::to_string(quantiles[i - 1]) +
                       " before " + std::to_string(q) +
                       ", expected strictly increasing levels (each once)");
  }
  if (quantiles[static_cast<size_t>(median_level())] != 0.5f)
    throw InputError(key("quantiles") +
                     ": expected the level 0.5 among them (its forecast is the point forecast)");
}

ModelConfig parse_model_config(const nlohmann::json& section, const std::string& path) {
  ConfigSection s(section, path);
  ModelConfig c;
  c.context_length = static_cast<int>(s.get_int("context_length", c.context_length, 1, 65536));
  c.patch_len = static_cast<int>(s.get_int("patch_len", c.patch_len, 1, 4096));
  c.patch_stride = static_cast<int>(s.get_int("patch_stride", c.patch_stride, 0, 4096));
  c.horizon = static_cast<int>(s.get_int("horizon", c.horizon, 1, 65536));
  c.channel_mode = get_enum(s, "channel_mode", c.channel_mode);
  c.channels = static_cast<int>(s.get_int("channels", c.channels, 1, 4096));
  c.target_channels = static_cast<int>(s.get_int("target_channels", c.target_channels, 0, 4096));
  c.norm = get_enum(s, "norm", c.norm);
  c.norm_eps = static_cast<float>(s.get_number("norm_eps", c.norm_eps, 0, 1, true));
  c.target = get_enum(s, "target", c.target);
  c.linear_lookback = static_cast<int>(s.get_int("linear_lookback", c.linear_lookback, 0, 65536));
  c.embedding = get_enum(s, "embedding", c.embedding);
  c.positional = get_enum(s, "positional", c.positional);
  c.d_model = static_cast<int>(s.get_int("d_model", c.d_model, 1, 4096));
  c.n_heads = static_cast<int>(s.get_int("n_heads", c.n_heads, 1, 256));
  c.n_layers = static_cast<int>(s.get_int("n_layers", c.n_layers, 0, 64));
  c.ff_mult = static_cast<int>(s.get_int("ff_mult", c.ff_mult, 1, 16));
  c.dropout = static_cast<float>(s.get_number("dropout", c.dropout, 0, 0.9));
  c.layernorm_eps =
      static_cast<float>(s.get_number("layernorm_eps", c.layernorm_eps, 0, 0.1, true));
  c.decoder = get_enum(s, "decoder", c.decoder);
  c.decoder_layers = static_cast<int>(s.get_int("decoder_layers", c.decoder_layers, 1, 16));
  c.known_features = static_cast<int>(s.get_int("known_features", c.known_features, 0, 4096));
  c.static_numeric = static_cast<int>(s.get_int("static_numeric", c.static_numeric, 0, 4096));
  c.static_categories = s.get_int_list("static_categories", {}, 2, 1000000);
  for (double q : s.get_number_list("quantiles", {}, 0.0, 1.0))
    c.quantiles.push_back(static_cast<float>(q));
  c.quantile_positions = get_enum(s, "quantile_positions", c.quantile_positions);
  c.loss_positions = get_enum(s, "loss_positions", c.loss_positions);
  c.loss = get_enum(s, "loss", c.loss);
  c.huber_delta = static_cast<float>(s.get_number("huber_delta", c.huber_delta, 0, 1e6, true));
  s.finish();
  c.validate();
  return c;
}

nlohmann::json to_json(const ModelConfig& c) {
  nlohmann::json j;
  j["context_length"] = c.context_length;
  j["patch_len"] = c.patch_len;
  j["patch_stride"] = c.patch_stride;
  j["horizon"] = c.horizon;
  j["channel_mode"] = enum_name(c.channel_mode);
  j["channels"] = c.channels;
  j["target_channels"] = c.target_channels;
  j["norm"] = enum_name(c.norm);
  j["norm_eps"] = c.norm_eps;
  j["target"] = enum_name(c.target);
  j["linear_lookback"] = c.linear_lookback;
  j["embedding"] = enum_name(c.embedding);
  j["positional"] = enum_name(c.positional);
  j["d_model"] = c.d_model;
  j["n_heads"] = c.n_heads;
  j["n_layers"] = c.n_layers;
  j["ff_mult"] = c.ff_mult;
  j["dropout"] = c.dropout;
  j["layernorm_eps"] = c.layernorm_eps;
  j["decoder"] = enum_name(c.decoder);
  j["decoder_layers"] = c.decoder_layers;
  j["known_features"] = c.known_features;
  j["static_numeric"] = c.static_numeric;
  j["static_categories"] = c.static_categories;
  j["quantiles"] = c.quantiles;
  j["quantile_positions"] = enum_name(c.quantile_positions);
  j["loss_positions"] = enum_name(c.loss_positions);
  j["loss"] = enum_name(c.loss);
  j["huber_delta"] = c.huber_delta;
  return j;
}

}  // namespace attnfc::model
