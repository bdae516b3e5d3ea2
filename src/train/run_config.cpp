#include "attnfc/train/run_config.hpp"

#include <algorithm>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_parse.hpp"
#include "attnfc/data/time.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/train/calibration.hpp"

namespace attnfc::train {

void apply_overrides(nlohmann::json& root, const std::vector<std::string>& sets) {
  for (const auto& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("config override '" + set +
                       "': expected section.key=value, e.g. train.lr=0.0005");
    const std::string path = set.substr(0, eq), text = set.substr(eq + 1);
    nlohmann::json value;
    try {
      value = parse_json_bounded(text, "config override '" + set + "'");
    } catch (const JsonSyntaxError&) {
      value = text;  // a bare word such as cosine or datasets/x.csv
    }
    nlohmann::json* node = &root;
    size_t begin = 0;
    while (true) {
      const size_t dot = path.find('.', begin);
      const std::string part = path.substr(begin, dot == std::string::npos ? dot : dot - begin);
      if (part.empty())
        throw InputError("config override '" + set + "': empty key in '" + path + "'");
      if (!node->is_object()) {
        if (!node->is_null())
          throw InputError("config override '" + set + "': '" + path.substr(0, begin - 1) +
                           "' is not an object");
        *node = nlohmann::json::object();
      }
      node = &(*node)[part];
      if (dot == std::string::npos) break;
      begin = dot + 1;
    }
    *node = value;
  }
}

namespace {

// Every column in one role: a target, a past covariate or a future covariate.
void check_roles(const DataConfig& d) {
  std::vector<std::pair<std::string, std::string>> seen;  // column, role key
  const auto add = [&](const std::vector<std::string>& cols, const std::string& key) {
    for (const std::string& c : cols) {
      for (const auto& [col, role] : seen)
        if (col == c)
          throw InputError(key + ": '" + c + "' is also in " + role +
                           "; expected each column in one role");
      seen.emplace_back(c, key);
    }
  };
  add(d.csv.value_columns, "data.targets");
  add(d.past_covariates, "data.past_covariates");
  add(d.future_covariates, "data.future_covariates");
  add(d.static_columns, "data.static");
}

// data.future_covariates, data.calendar ("auto" or a list), data.holidays, data.static.
void parse_known_roles(ConfigSection& s, const nlohmann::json& section, DataConfig& d) {
  d.past_covariates = s.get_string_list("past_covariates", {});
  d.future_covariates = s.get_string_list("future_covariates", {});
  const bool covariates = !d.past_covariates.empty() || !d.future_covariates.empty();
  if (covariates && d.csv.value_columns.empty())
    throw InputError(
        std::string(d.past_covariates.empty() ? "data.future_covariates" : "data.past_covariates") +
        ": expected data.targets too (the columns to forecast), since every other "
        "column would otherwise be a target");
  if (s.has("calendar") && section.at("calendar").is_string()) {
    d.calendar = {s.get_string("calendar", "")};
  } else {
    d.calendar = s.get_string_list("calendar", {});
  }
  d.holidays = s.get_string("holidays", "");
  d.static_columns = s.get_string_list("static", {});
  if (!d.static_columns.empty() && d.csv.id_column.empty())
    throw InputError(
        "data.static: expected data.id_column too: static values belong to the series of a "
        "long file (one value per series, repeated on its rows)");
  check_roles(d);
}

// train.calibrate "conformal" / "conformal_scaled" needs intervals to calibrate: the stored
// corrections are fit to the levels of the model that is kept.
void check_calibrate(const RunConfig& r) {
  if (r.train.calibrate == "none") return;
  if (model::symmetric_pairs(r.model.quantiles).empty())
    throw InputError(
        "train.calibrate: \"" + r.train.calibrate +
        "\" calibrates intervals, but model.quantiles holds no symmetric pair of levels (q and "
        "1 - q); expected e.g. model.quantiles [0.1, 0.5, 0.9]");
}

// data.transform: the lambda of the targets' power transform, and the load-time check of
// their domain (values > 0 for log, >= 0 for a power).
void parse_transform(ConfigSection& s, const nlohmann::json& section, DataConfig& d) {
  double& lambda = d.csv.domain.lambda;
  if (s.has("transform") && section.at("transform").is_object()) {
    ConfigSection t(s.get_object("transform"), "data.transform");
    if (!t.has("box_cox"))
      throw InputError(
          "data.transform: expected \"none\", \"log\", \"sqrt\" or {\"box_cox\": "
          "lambda} with lambda in [0, 1]");
    lambda = t.get_number("box_cox", 0.0, 0.0, 1.0);
    t.finish();
  } else {
    const std::string name = s.get_choice("transform", "none", {"none", "log", "sqrt"});
    lambda = name == "log" ? 0.0 : name == "sqrt" ? 0.5 : data::ValueTransform::kNone;
  }
  if (lambda == data::ValueTransform::kNone) return;
  d.csv.domain.channels = d.csv.value_columns.empty() ? SIZE_MAX : d.csv.value_columns.size();
  d.csv.domain_setting = "data.transform takes the " +
                         std::string(lambda > 0.0 ? "power" : "logarithm") + " of the targets";
}

DataConfig parse_data(const nlohmann::json& section) {
  ConfigSection s(section, "data");
  DataConfig d;
  d.csv.path = s.get_string("path", "");
  if (d.csv.path.empty()) throw InputError("data.path: missing, expected the CSV file to read");
  const std::string delim = s.get_string("delimiter", ",");
  if (delim.size() != 1)
    throw InputError("data.delimiter: found \"" + delim + "\", expected one character");
  d.csv.delimiter = delim[0];
  d.csv.number =
      data::parse_number_format(s.get_string("decimal", "."), s.get_string("thousands", ""),
                                d.csv.delimiter, "data.decimal", "data.thousands");
  d.csv.date_format = s.get_string("date_format", "");
  d.csv.time_column = s.get_string("time_column", "");
  d.csv.time_columns = s.get_string_list("time_columns", {});
  d.csv.value_columns = s.get_string_list("columns", {});
  if (s.has("targets")) {  // the panel-era name of "columns"; one of the two
    if (s.has("columns"))
      throw InputError("data.targets: found both data.targets and data.columns; expected one");
    d.csv.value_columns = s.get_string_list("targets", {});
  }
  d.csv.id_column = s.get_string("id_column", "");
  parse_known_roles(s, section, d);
  parse_transform(s, section, d);
  d.csv.missing = data::parse_missing_policy(
      s.get_choice("missing", "error", {"error", "ffill", "interpolate", "mask"}));
  d.csv.missing_setting = "data.missing in the config";
  d.csv.regular = s.get_bool("regular", false);
  d.csv.frequency = s.get_string("frequency", "");
  if (!d.csv.frequency.empty())  // checks the name before any data is read
    data::Frequency::parse(d.csv.frequency, "config key '" + s.key_path("frequency") + "'");
  if (s.has("split") && section.at("split").is_object()) {
    ConfigSection sp(s.get_object("split"), "data.split");
    d.split_protocol = "";
    if (!sp.has("train_rows") && (sp.has("test_rows") || sp.has("end_offset"))) {
      d.split_protocol = "from_end";  // data::split_from_end, per series
      d.val_rows = sp.get_int("val_rows", 0, 1, int64_t{1} << 40);
      d.test_rows = sp.get_int("test_rows", 0, 1, int64_t{1} << 40);
      d.end_offset = sp.get_int("end_offset", 0, 0, int64_t{1} << 40);
      for (const char* key : {"val_rows", "test_rows"})
        if (!sp.has(key))
          throw InputError(std::string("data.split.") + key +
                           ": missing; a split counted from the end (no train_rows) needs "
                           "val_rows and test_rows");
    } else if (sp.has("train_rows") || sp.has("val_rows") || sp.has("test_rows")) {
      d.split_protocol = "rows";
      d.train_rows = sp.get_int("train_rows", 0, 1, int64_t{1} << 40);
      d.val_rows = sp.get_int("val_rows", 0, 1, int64_t{1} << 40);
      d.test_rows = sp.get_int("test_rows", 0, 1, int64_t{1} << 40);
    } else if (sp.has("train_frac") || sp.has("test_frac")) {
      d.split_protocol = "fractions";
      d.train_frac = sp.get_number("train_frac", 0.7, 0, 1, true, false);
      d.test_frac = sp.get_number("test_frac", 0.2, 0, 1, true, false);
    } else if (sp.has("val_start") || sp.has("test_start")) {
      d.split_protocol = "dates";
      d.val_start = sp.get_string("val_start", "");
      d.test_start = sp.get_string("test_start", "");
      data::parse_timestamp_or_throw(d.val_start, "data.split.val_start", d.csv.date_format);
      data::parse_timestamp_or_throw(d.test_start, "data.split.test_start", d.csv.date_format);
    }
    sp.finish();
    if (d.split_protocol.empty())
      throw InputError(
          "data.split: expected {\"train_rows\", \"val_rows\", \"test_rows\"}, "
          "{\"val_rows\", \"test_rows\", \"end_offset\"}, "
          "{\"train_frac\", \"test_frac\"} or {\"val_start\", \"test_start\"}");
  } else {
    d.split_protocol =
        s.get_choice("split", "auto", {"auto", "etth", "ettm", "custom", "last_horizon"});
  }
  s.finish();
  return d;
}

TrainConfig parse_train(const nlohmann::json& section) {
  ConfigSection s(section, "train");
  TrainConfig t;
  t.epochs = static_cast<int>(s.get_int("epochs", t.epochs, 0, 100000));
  t.batch_size = static_cast<int>(s.get_int("batch_size", t.batch_size, 1, 65536));
  // Two parts unless the batch is one window: on two cores they run side by side, one a
  // thread, 1.1-1.5x the speed of one part (docs/BENCHMARKS.md); a fixed number, never
  // the thread count, so the bits stay the same at any thread count.
  t.micro_batches = static_cast<int>(
      s.get_int("micro_batches", std::min(t.micro_batches, t.batch_size), 1, 4096));
  t.lr = s.get_number("lr", t.lr, 0, 10, true);
  t.min_lr = s.get_number("min_lr", t.min_lr, 0, 10);
  t.schedule = get_enum(s, "schedule", t.schedule);
  t.warmup_steps = s.get_int("warmup_steps", t.warmup_steps, 0, int64_t{1} << 40);
  t.step_epochs = static_cast<int>(s.get_int("step_epochs", t.step_epochs, 1, 100000));
  t.gamma = s.get_number("gamma", t.gamma, 0, 1, true);
  t.weight_decay = s.get_number("weight_decay", t.weight_decay, 0, 10);
  t.beta1 = s.get_number("beta1", t.beta1, 0, 1, false, true);
  t.beta2 = s.get_number("beta2", t.beta2, 0, 1, false, true);
  t.eps = s.get_number("eps", t.eps, 0, 1, true);
  t.grad_clip = s.get_number("grad_clip", t.grad_clip, 0, 1e6);
  t.patience = static_cast<int>(s.get_int("patience", t.patience, 0, 100000));
  t.min_delta = s.get_number("min_delta", t.min_delta, 0, 1e6);
  t.seed = static_cast<uint64_t>(s.get_int("seed", 1, 0, static_cast<int64_t>(kMaxSeed)));
  t.max_steps_per_epoch = s.get_int("max_steps_per_epoch", 0, 0, int64_t{1} << 40);
  t.epoch_fraction = s.get_number("epoch_fraction", 1, 0, 1, true);
  t.max_val_windows = s.get_int("max_val_windows", 0, 0, int64_t{1} << 40);
  t.refit_epochs = s.get_number("refit_epochs", t.refit_epochs, 0, 1000);
  t.refit_lr = s.get_number("refit_lr", t.lr / 10, 0, 10, true);
  t.eval_batch_size = static_cast<int>(s.get_int("eval_batch_size", t.eval_batch_size, 1, 65536));
  t.evaluate_test = s.get_bool("evaluate_test", t.evaluate_test);
  t.linear_init = s.get_choice("linear_init", t.linear_init, {"least_squares", "zero"});
  t.series_weighting = s.get_choice("series_weighting", t.series_weighting, {"window", "series"});
  t.calibrate = s.get_choice("calibrate", t.calibrate, {"none", "conformal", "conformal_scaled"});
  t.quantile_init = s.get_choice("quantile_init", t.quantile_init, {"residuals", "zero"});
  t.linear_lr_scale = s.get_number("linear_lr_scale", t.linear_lr_scale, 0, 100);
  // A number, or "auto": chosen on the validation split (train/linear_init.hpp).
  if (section.is_object() && section.contains("linear_ridge") &&
      section["linear_ridge"].is_string()) {
    if (section["linear_ridge"] != "auto")
      throw InputError("train.linear_ridge: found " + section["linear_ridge"].dump() +
                       ", expected a number in [0, 1e6] or \"auto\"");
    s.allow("linear_ridge");
    t.linear_ridge = -1;
  } else {
    t.linear_ridge = s.get_number("linear_ridge", t.linear_ridge, 0, 1e6);
  }
  t.ensemble = static_cast<int>(s.get_int("ensemble", t.ensemble, 1, model::kMaxEnsembleMembers));
  t.ensemble_contexts = s.get_int_list("ensemble_contexts", {}, 1, 65536);
  s.finish();
  if (t.seed + static_cast<uint64_t>(t.ensemble - 1) * kEnsembleSeedStride > kMaxSeed)
    throw InputError("train.seed: found " + std::to_string(t.seed) + ", expected at most " +
                     std::to_string(kMaxSeed - (t.ensemble - 1) * kEnsembleSeedStride) +
                     " with train.ensemble " + std::to_string(t.ensemble) +
                     " (member seeds are seed + k * " + std::to_string(kEnsembleSeedStride) + ")");
  if (t.micro_batches > t.batch_size)
    throw InputError("train.micro_batches: found " + std::to_string(t.micro_batches) +
                     ", expected at most train.batch_size (" + std::to_string(t.batch_size) +
                     "): each part of a batch needs a sample");
  if (t.min_lr > t.lr)
    throw InputError("train.min_lr: found " + std::to_string(t.min_lr) +
                     ", expected at most train.lr (" + std::to_string(t.lr) + ")");
  return t;
}

}  // namespace

RunConfig parse_run_config(const nlohmann::json& root) {
  if (!root.is_object()) throw InputError("config: expected a JSON object with data, model, train");
  ConfigSection top(root, "config");
  RunConfig r;
  r.raw = root;
  r.data = parse_data(top.get_object("data"));
  nlohmann::json m = top.get_object("model");
  r.model_channels_given = m.is_object() && m.contains("channels");
  r.auto_sizes = take_auto_sizes(m);
  r.model = model::parse_model_config(m, "model");
  r.train = parse_train(top.get_object("train"));
  top.finish();
  check_calibrate(r);
  check_linear_init(r);
  if (!r.auto_sizes.any()) check_ensemble_contexts(r);  // else once the sizes are resolved
  return r;
}

void check_linear_init(const RunConfig& r) {
  if (r.model.linear_lookback > 0 && r.train.linear_init == "least_squares" &&
      r.model.target != model::HeadTarget::kDeltaFromLast)
    throw InputError(
        "train.linear_init: \"least_squares\" fits changes from the last value and needs "
        "model.target = \"delta\" (found \"value\"); set train.linear_init = \"zero\"");
}

void check_ensemble_contexts(const RunConfig& r) {
  const std::vector<int>& lengths = r.train.ensemble_contexts;
  if (lengths.empty()) return;
  const int L = r.model.context_length;
  const std::string key = "train.ensemble_contexts: ";
  if (r.train.ensemble < 2)
    throw InputError(key + "found " + std::to_string(lengths.size()) +
                     " context lengths with train.ensemble " + std::to_string(r.train.ensemble) +
                     "; expected train.ensemble 2 or more (the lengths are its members')");
  if (r.model.cross_attention())
    throw InputError(key +
                     "found with model.decoder \"cross_attention\", whose known inputs "
                     "are laid out for model.context_length; expected model.decoder \"linear\"");
  if (lengths.size() > static_cast<size_t>(r.train.ensemble))
    throw InputError(key + "found " + std::to_string(lengths.size()) + " context lengths for " +
                     std::to_string(r.train.ensemble) +
                     " members (train.ensemble); expected at most one a member");
  for (size_t i = 0; i < lengths.size(); ++i) {
    const std::string at = key + "entry " + std::to_string(i + 1) + " is " +
                           std::to_string(lengths[i]) + "; expected ";
    if (i == 0 && lengths[i] != L)
      throw InputError(at + "model.context_length (" + std::to_string(L) +
                       "): member 1 is the model itself");
    if (lengths[i] > L)
      throw InputError(at + "at most model.context_length (" + std::to_string(L) +
                       "), the length of the windows every member reads from");
    try {
      model::with_context(r.model, lengths[i]).validate();
    } catch (const InputError& e) {
      throw InputError(at + "a length the model accepts (" + e.what() + ")");
    }
  }
}

model::ModelConfig member_model(const RunConfig& r, int k) {
  const std::vector<int>& lengths = r.train.ensemble_contexts;
  if (lengths.empty()) return r.model;
  return model::with_context(r.model, lengths[static_cast<size_t>(k - 1) % lengths.size()]);
}

std::vector<std::string> DataConfig::value_columns() const {
  std::vector<std::string> all = csv.value_columns;
  all.insert(all.end(), past_covariates.begin(), past_covariates.end());
  all.insert(all.end(), future_covariates.begin(), future_covariates.end());
  return all;
}

void resolve_model_channels(RunConfig& config, size_t data_channels) {
  const DataConfig& d = config.data;
  const auto covariates = static_cast<int>(d.past_covariates.size() + d.future_covariates.size());
  if (covariates > 0 && config.model.channel_mode != ChannelMode::kMixed)
    throw InputError(
        std::string(d.past_covariates.empty() ? "data.future_covariates" : "data.past_covariates") +
        ": a channel-independent model reads each column alone and cannot use "
        "covariates; expected model.channel_mode \"mixed\"");
  if (config.model.channel_mode != ChannelMode::kMixed) return;
  if (covariates > 0) config.model.target_channels = static_cast<int>(data_channels) - covariates;
  const int C = static_cast<int>(data_channels);
  if (!config.model_channels_given) config.model.channels = C;
  if (config.model.channels != C)
    throw InputError("model.channels: found " + std::to_string(config.model.channels) +
                     ", but the data has " + std::to_string(C) + " columns");
}

}  // namespace attnfc::train
