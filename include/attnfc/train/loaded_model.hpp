#pragma once
// A trained model as predict / evaluate / plot use it: the network, the scaler fit
// on its training rows, its channel names and the run config it was trained with,
// all read from one .safetensors checkpoint written by `attnfc train`.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnfc/autograd/parameters.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/data/panel_scaler.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/baselines.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

// The networks of one trained model: one, or the members of an ensemble (one config up to
// each member's context length, different seeds), whose forecast is the mean of the
// members' forecasts.
using Members = std::vector<const model::PatchTransformer*>;

// Wraps a model as a BatchForecaster over scaled samples (contexts [count, L, C] and their
// observed flags): channel-independent models see each channel as its own sample. Output
// [count, H, C].
// An ensemble's members are summed in order and divided by their number, so the
// result does not depend on the thread count.
// levels (optional, quantile models; must outlive the forecaster): each call also writes
// every level of every window, [count, H, Q, C], the members' mean (still increasing in Q).
// calibration (optional): applied to those levels (train/calibration.hpp).
struct Calibration;
// nan_for_unreadable (scoring): a sample whose context holds no observed value gets NaN
// forecasts (its targets must not count) instead of failing the call with
// model::UnobservedContext; the other samples keep their bits.
BatchForecaster model_forecaster(const Members& members, int channels, int horizon = 0,
                                 std::vector<float>* levels = nullptr,
                                 const Calibration* calibration = nullptr,
                                 bool nan_for_unreadable = false);

struct LoadedModel {
  std::vector<std::unique_ptr<ag::ParameterSet>> params;
  std::vector<std::unique_ptr<model::PatchTransformer>> networks;  // >= 1; members of an ensemble
  data::Scaler scaler;  // of the first series (of the only one, for a wide file)
  // Every series' scaler by id (a wide file: one, id ""), as training fit them.
  data::PanelScaler series_scalers;
  std::vector<std::string> columns;
  std::string frequency;  // as trained ("1h"), may be "unknown"
  // What the cross-attention decoder reads beside the values (null: nothing).
  std::shared_ptr<const data::KnownSource> known;
  // A quantile model's conformal corrections (train.calibrate), applied by predict.
  std::shared_ptr<const Calibration> calibration;
  int epoch = -1;  // the epoch this model is from (0 = before training); -1 unknown
  // Trained on its run's validation rows too (train.refit_epochs: metadata "refit"), so its
  // validation scores are in-sample.
  bool refit = false;
  RunConfig run;  // the resolved run config saved with the model
  std::string path;

  // InputError naming the file when it is missing, is not an attnfc training
  // checkpoint, or does not match its own config (a tensor name, shape or dtype).
  static LoadedModel load(const std::string& path);

  // The run's linear start (linear_start.safetensors beside this model file) when it
  // forecasts the same columns over the same windows, as evaluate and plot score it beside
  // the model; else an empty model (no networks). `mismatch`, if given, is set when the
  // file is there but forecasts other columns or windows.
  LoadedModel linear_start_beside(bool* mismatch = nullptr) const;

  // Reads `csv_path` with the training run's CSV options (time column, delimiter,
  // missing policy) and the model's columns; a column the model needs and the file
  // lacks is an InputError listing what the file has. Values stay in original units.
  // With a known recipe, the series gets it, and its static columns are read and encoded.
  data::TimeSeries read_series(const std::string& csv_path) const;
  // A predict input: as read_series, except that for a model with future covariates the
  // rows after each series' last target row (every target empty) are cut off into
  // *future_rows (a TimeSeries of the future covariates, same ids; empty when there are
  // none), and the history is read from the rest under the training run's missing policy.
  data::TimeSeries read_history(const std::string& csv_path, data::TimeSeries* future_rows) const;
  // A --future file: the time (and id) column and the future covariates, no missing value.
  data::TimeSeries read_future(const std::string& csv_path) const;

  // The scaler of each series of `split`: the stored one for a series the model was
  // trained on, else one fit on that series' own rows split.splits[k].train (its past
  // only). *fitted (optional) counts the series that had no stored scaler.
  data::PanelScaler scalers_for(const data::TimeSeries& series, const data::PanelSplit& split,
                                size_t* fitted = nullptr) const;

  // The scaler of `series`, a file holding one series (InputError naming `what` and the
  // file for a panel of several): the stored one for its id, else one fit on its rows
  // `fit_rows` (a series the model was not trained on).
  data::Scaler scaler_of(const data::TimeSeries& series, data::RowRange fit_rows,
                         const std::string& what) const;

  Members members() const;
  const model::ModelConfig& config() const { return networks.front()->config(); }
  int context() const { return config().context_length; }
  int horizon() const { return config().horizon; }
};

}  // namespace attnfc::train
