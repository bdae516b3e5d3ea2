#pragma once
// `attnfc plot`'s page: one self-contained HTML file (inline SVG and CSS; no script, no
// network) made of the gathered data (plot_data.hpp): a window picker between the windows
// shown, each with its charts and its metrics table, the split's metrics, the forecast
// after the last row, the training curves and the attention maps.
#include <string>

#include "attnfc/data/series.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "plot_data.hpp"

namespace attnfc::cli {

struct PlotOptions;

std::string render_plot_page(const PlotOptions& a, const train::LoadedModel& lm,
                             const data::TimeSeries& series, const PlotData& d);

}  // namespace attnfc::cli
