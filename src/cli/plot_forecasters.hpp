#pragma once
// The forecasters plot draws, built as the Scorer builds the ones evaluate scores: the
// model ("attnfc", a quantile model's levels calibrated as predict calibrates them), its
// linear start when the run folder holds one, and the baselines (repeat-last,
// seasonal-naive(m), nlinear) fitted on the training rows. Each keeps its latest forecast
// in original units, checked finite.
#include <memory>
#include <string>
#include <vector>

#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/train/evaluate.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "plot_data.hpp"

namespace attnfc::cli {

struct PlotOptions;

class PlotForecasters {
 public:
  // scaler: the series' (stored with the model); it must outlive this object. period: the
  // seasonal period the Scorer inferred (Scorer::seasonal_period).
  PlotForecasters(const train::LoadedModel& lm, const train::LoadedModel& linear_start,
                  const data::TimeSeries& series, const data::Scaler& scaler,
                  data::RowRange train_rows, int period, const PlotOptions& a);

  // The forecasters, the model first; each call keeps its forecast in last[k].
  std::vector<train::NamedForecaster> all;
  // all[k]'s forecast of its latest call, [count, H, C] in original units.
  std::vector<std::shared_ptr<std::vector<float>>> last;

  std::vector<std::string> names() const;
  // A quantile model's levels of its latest call (one sample), [H, Q, C] in original
  // units; empty for a point model.
  std::vector<float> model_levels_original(const data::Scaler& scaler, int horizon) const;

 private:
  std::shared_ptr<std::vector<float>> levels_;  // the model's, scaled
  size_t quantiles_ = 0;
};

// The forecast after the last row of `series` (its last context rows, as predict reads
// them): every forecaster's, with the times the forecast steps fall on. None, with the
// reason, for a model that reads future covariates (predict --future supplies them) or a
// series whose time step is unknown.
FutureForecast forecast_future(PlotForecasters& f, const train::LoadedModel& lm,
                               const data::TimeSeries& series, const data::TimeSeries& scaled,
                               const data::Scaler& scaler);

}  // namespace attnfc::cli
