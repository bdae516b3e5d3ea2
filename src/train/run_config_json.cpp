// The run's configuration written back as JSON (config.json of every run folder): each key
// with its resolved value, so a run can be repeated from its folder alone. Some keys added
// later (covariates, number format, panels, ensemble_contexts) are written only when set,
// so the config.json of a run that does not use them keeps the bytes it had before them.
#include "attnfc/base/enum_names.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

nlohmann::json to_json(const RunConfig& r) {
  const DataConfig& d = r.data;
  nlohmann::json data = {{"path", d.csv.path},
                         {"delimiter", std::string(1, d.csv.delimiter)},
                         {"time_column", d.csv.time_column},
                         {"time_columns", d.csv.time_columns},
                         {"columns", d.csv.value_columns},
                         {"missing", enum_name(d.csv.missing)},
                         {"regular", d.csv.regular},
                         {"frequency", d.csv.frequency}};
  if (!d.past_covariates.empty()) data["past_covariates"] = d.past_covariates;
  if (!d.future_covariates.empty()) data["future_covariates"] = d.future_covariates;
  if (!d.calendar.empty()) data["calendar"] = d.calendar;
  if (!d.holidays.empty()) data["holidays"] = d.holidays;
  if (!d.static_columns.empty()) data["static"] = d.static_columns;
  // Only when set: a run's config.json stays the same bytes as before these keys.
  if (!d.csv.number.is_default()) {
    data["decimal"] = std::string(1, d.csv.number.decimal);
    data["thousands"] = d.csv.number.thousands ? std::string(1, d.csv.number.thousands) : "";
  }
  if (!d.csv.date_format.empty()) data["date_format"] = d.csv.date_format;
  const double lambda = d.csv.domain.lambda;
  if (lambda == 0.0)
    data["transform"] = "log";
  else if (lambda == 0.5)
    data["transform"] = "sqrt";
  else if (lambda > 0.0)
    data["transform"] = {{"box_cox", lambda}};
  // Only for a panel: a wide run's config.json stays the same bytes as before panels.
  if (!d.csv.id_column.empty()) data["id_column"] = d.csv.id_column;
  if (d.split_protocol == "rows")
    data["split"] = {
        {"train_rows", d.train_rows}, {"val_rows", d.val_rows}, {"test_rows", d.test_rows}};
  else if (d.split_protocol == "from_end")
    data["split"] = {
        {"val_rows", d.val_rows}, {"test_rows", d.test_rows}, {"end_offset", d.end_offset}};
  else if (d.split_protocol == "fractions")
    data["split"] = {{"train_frac", d.train_frac}, {"test_frac", d.test_frac}};
  else if (d.split_protocol == "dates")
    data["split"] = {{"val_start", d.val_start}, {"test_start", d.test_start}};
  else
    data["split"] = d.split_protocol;
  const TrainConfig& t = r.train;
  nlohmann::json train = {{"epochs", t.epochs},
                          {"batch_size", t.batch_size},
                          {"micro_batches", t.micro_batches},
                          {"lr", t.lr},
                          {"min_lr", t.min_lr},
                          {"schedule", enum_name(t.schedule)},
                          {"warmup_steps", t.warmup_steps},
                          {"step_epochs", t.step_epochs},
                          {"gamma", t.gamma},
                          {"weight_decay", t.weight_decay},
                          {"beta1", t.beta1},
                          {"beta2", t.beta2},
                          {"eps", t.eps},
                          {"grad_clip", t.grad_clip},
                          {"patience", t.patience},
                          {"min_delta", t.min_delta},
                          {"seed", t.seed},
                          {"max_steps_per_epoch", t.max_steps_per_epoch},
                          {"epoch_fraction", t.epoch_fraction},
                          {"max_val_windows", t.max_val_windows},
                          {"eval_batch_size", t.eval_batch_size},
                          {"evaluate_test", t.evaluate_test},
                          {"linear_init", t.linear_init},
                          {"series_weighting", t.series_weighting},
                          {"calibrate", t.calibrate},
                          {"quantile_init", t.quantile_init},
                          {"linear_lr_scale", t.linear_lr_scale},
                          {"linear_ridge", t.linear_ridge < 0 ? nlohmann::json("auto")
                                                              : nlohmann::json(t.linear_ridge)},
                          {"ensemble", t.ensemble}};
  // Only when set: a run's config.json stays the same bytes as before the key.
  if (!t.ensemble_contexts.empty()) train["ensemble_contexts"] = t.ensemble_contexts;
  if (t.refit_epochs > 0)
    train.update({{"refit_epochs", t.refit_epochs}, {"refit_lr", t.refit_lr}});
  return {{"data", data}, {"model", model::to_json(r.model)}, {"train", train}};
}

void fill_saved_defaults(nlohmann::json& saved) {
  if (!saved.is_object()) return;  // the parser names what is wrong
  nlohmann::json& train = saved["train"];
  if (train.is_null()) train = nlohmann::json::object();
  if (train.is_object() && !train.contains("micro_batches")) train["micro_batches"] = 1;
}

}  // namespace attnfc::train
