#pragma once
// The charts of `attnfc plot`'s page, made from the gathered data (plot_data.hpp) and
// drawn by plot_svg.hpp: a window's forecast against what happened, the forecast after the
// last row, the training curves, and the attention maps with their lag profiles.
#include <string>
#include <vector>

#include "attnfc/data/series.hpp"
#include "plot_data.hpp"
#include "plot_svg.hpp"

namespace attnfc::cli {

// How a forecaster is drawn and named in legends: colour, dash, width.
struct ForecasterLook {
  std::string color;
  Dash dash = Dash::kSolid;
  double width = 1.6;
};
ForecasterLook look_of(const std::string& name);

// Whether the page draws forecaster `name`'s line: not the linear start when the kept model
// is the linear start, not seasonal-naive(1), which is repeat-last (both stay in tables).
bool drawn(const PlotData& d, const std::string& name);

// Window w's chart of target channel c, in dates: the history before its origin, the
// actuals, every forecaster drawn (its MAE on this channel and window in the legend), a
// quantile model's fan, the origin marked and the forecast steps shaded.
std::string window_chart(const data::TimeSeries& series, const PlotData& d, const ForecastWindow& w,
                         size_t c);

// The forecast after the last row for channel c, after the last d.history rows.
std::string future_chart(const data::TimeSeries& series, const PlotData& d, size_t c);

// Train loss and validation MSE by epoch, epoch 0 and the kept epoch marked; a log scale
// when the values span more than a factor of 20.
std::string curves_chart(const std::vector<TrainingCurve>& curves);

// Every layer's heads as heatmaps under one colour scale, each layer with its heads' lag
// profiles (the lift of each lag over uniform causal attention).
std::string attention_html(const AttentionView& v);

}  // namespace attnfc::cli
