// The page's charts (plot_charts.hpp).
#include "plot_charts.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attention_probe.hpp"
#include "plot_axis.hpp"
#include "plot_svg.hpp"

namespace attnfc::cli {

namespace {

constexpr const char* kHistoryColor = "#9a9a9a";
constexpr const char* kActualColor = "#111111";
constexpr const char* kModelColor = "#1f5fd6";

double value_or_nan(const data::TimeSeries& s, size_t row, size_t c) {
  return s.is_observed(row, c) ? s.value(row, c) : NAN;
}

// The mean absolute error of a forecast [H, C] on channel c of the rows from `origin`,
// over the observed actuals (as evaluate counts them); NaN when none is observed.
double channel_mae(const data::TimeSeries& s, const std::vector<float>& fc, size_t origin, size_t c,
                   int H) {
  double sum = 0;
  int n = 0;
  for (int h = 0; h < H; ++h)
    if (s.is_observed(origin + h, c))
      sum += std::fabs(fc[static_cast<size_t>(h) * s.num_channels() + c] - s.value(origin + h, c)),
          ++n;
  return n > 0 ? sum / n : NAN;
}

// The forecasters' lines at `stamps` (channel c), each labelled with `label(line)`.
template <typename Label>
void add_forecasts(ChartSpec& chart, const PlotData& d, const std::vector<ForecastLine>& lines,
                   const std::vector<double>& stamps, size_t C, size_t c, Label label) {
  for (const ForecastLine& f : lines) {
    if (!drawn(d, f.name)) continue;
    const ForecasterLook look = look_of(f.name);
    PlotLine l{f.name, label(f), look.color, look.dash, look.width, stamps, {}};
    for (size_t h = 0; h < stamps.size(); ++h) l.y.push_back(f.values[h * C + c]);
    chart.lines.push_back(std::move(l));
  }
}

// A quantile model's fan for channel c: one band per symmetric pair of levels, widest first.
void add_fan(ChartSpec& chart, const PlotData& d, const std::vector<float>& levels,
             const std::vector<double>& stamps, size_t C, size_t c) {
  const size_t Q = d.quantiles.size();
  if (levels.size() < stamps.size() * Q * C) return;
  for (const auto& [lo, hi] : d.pairs) {
    const std::string pct = format_number(100.0 * (1.0 - 2.0 * d.quantiles[lo]));
    PlotBand b{"interval-" + pct, pct + "% interval", kModelColor, 0.16, stamps, {}, {}};
    for (size_t h = 0; h < stamps.size(); ++h) {
      b.lo.push_back(levels[(h * Q + lo) * C + c]);
      b.hi.push_back(levels[(h * Q + hi) * C + c]);
    }
    chart.bands.push_back(std::move(b));
  }
}

// The history line over rows [from, to) of channel c.
PlotLine history_line(const data::TimeSeries& s, size_t from, size_t to, size_t c) {
  PlotLine l{"history", "history", kHistoryColor, Dash::kSolid, 1.4, {}, {}};
  for (size_t r = from; r < to; ++r)
    l.x.push_back(static_cast<double>(s.timestamps[r])), l.y.push_back(value_or_nan(s, r, c));
  return l;
}

std::string unit_note(const data::TimeSeries& s, size_t c) {
  return s.channels[c] + " (original units)";
}

}  // namespace

ForecasterLook look_of(const std::string& name) {
  if (name == "attnfc") return {kModelColor, Dash::kSolid, 2.4};
  if (name == "linear-start") return {"#8e44ad", Dash::kDashDot, 1.5};
  if (name == "nlinear") return {"#e07b00", Dash::kDashed, 1.8};
  if (name == "repeat-last") return {"#c0392b", Dash::kDotted, 1.8};
  return {"#2a9d3a", Dash::kDashed, 1.6};  // seasonal-naive(m)
}

bool drawn(const PlotData& d, const std::string& name) {
  if (name == "linear-start") return d.kept_epoch != 0;
  return name != "seasonal-naive(1)";
}

std::string window_chart(const data::TimeSeries& s, const PlotData& d, const ForecastWindow& w,
                         size_t c) {
  const int H = d.horizon;
  const size_t o = w.origin, C = s.num_channels();
  ChartSpec chart;
  chart.title = s.channels[c] + ": window " + std::to_string(w.index) + ", forecast from " +
                s.format_time(s.timestamps[o]);
  chart.x_label = "time (" + s.frequency.name() + " steps)";
  chart.y_label = unit_note(s, c);
  chart.time_x = true;
  chart.lines.push_back(history_line(s, o - static_cast<size_t>(d.history), o, c));
  PlotLine actual{"actual", "actual", kActualColor, Dash::kSolid, 1.8, {}, {}};
  std::vector<double> stamps;
  for (size_t r = o - 1; r < o + static_cast<size_t>(H); ++r) {
    actual.x.push_back(static_cast<double>(s.timestamps[r]));
    actual.y.push_back(value_or_nan(s, r, c));
    if (r >= o) stamps.push_back(static_cast<double>(s.timestamps[r]));
  }
  chart.lines.push_back(std::move(actual));
  add_forecasts(chart, d, w.lines, stamps, C, c, [&](const ForecastLine& f) {
    return f.name + "  MAE " + format_number(channel_mae(s, f.values, o, c, H));
  });
  add_fan(chart, d, w.levels, stamps, C, c);
  chart.markers.push_back(
      {static_cast<double>(s.timestamps[o - 1]), "forecast origin", "origin-marker", "#333"});
  if (d.history > d.context)
    chart.markers.push_back({static_cast<double>(s.timestamps[o - d.context]), "context starts",
                             "context-marker", "#888"});
  chart.shade_from = static_cast<double>(s.timestamps[o - 1]);
  chart.shade_to = stamps.back();
  chart.shade_label = "forecast, " + std::to_string(H) + " steps";
  return render_chart(chart);
}

std::string future_chart(const data::TimeSeries& s, const PlotData& d, size_t c) {
  const FutureForecast& f = d.future;
  const size_t rows = s.rows(), C = s.num_channels();
  ChartSpec chart;
  chart.title = s.channels[c] + ": forecast after the last row (" +
                s.format_time(s.timestamps[rows - 1]) + ")";
  chart.x_label = "time (" + s.frequency.name() + " steps)";
  chart.y_label = unit_note(s, c);
  chart.time_x = true;
  chart.lines.push_back(
      history_line(s, rows - std::min(rows, static_cast<size_t>(d.history)), rows, c));
  const std::vector<double> stamps(f.stamps.begin(), f.stamps.end());
  add_forecasts(chart, d, f.lines, stamps, C, c, [](const ForecastLine& l) { return l.name; });
  add_fan(chart, d, f.levels, stamps, C, c);
  chart.markers.push_back(
      {static_cast<double>(s.timestamps[rows - 1]), "last row", "origin-marker", "#333"});
  chart.shade_from = static_cast<double>(s.timestamps[rows - 1]);
  chart.shade_to = stamps.back();
  chart.shade_label = "forecast, " + std::to_string(d.horizon) + " steps";
  return render_chart(chart);
}

namespace {

// A log scale when every value is positive and they span more than a factor of 20: then a
// linear axis flattens the later epochs into the floor.
bool wants_log(const ChartSpec& c) {
  double lo = INFINITY, hi = -INFINITY;
  for (const PlotLine& l : c.lines)
    for (double v : l.y)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  return lo > 0 && hi / lo > 20;
}

// The kept epoch of curve k: a vertical line, and its validation MSE as a point.
void mark_kept(ChartSpec& chart, const TrainingCurve& k, const std::string& color) {
  if (k.kept_epoch < 0) return;
  chart.markers.push_back({static_cast<double>(k.kept_epoch),
                           "kept: epoch " + std::to_string(k.kept_epoch) + k.suffix, "kept-marker",
                           color});
}

}  // namespace

std::string curves_chart(const std::vector<TrainingCurve>& curves) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  ChartSpec chart;
  chart.title = "loss by epoch";
  chart.x_label = "epoch (0 = the model before training)";
  chart.y_label = "loss (scaled units)";
  chart.integer_x = true;
  chart.height = 320;
  for (size_t i = 0; i < curves.size(); ++i) {
    const TrainingCurve& k = curves[i];
    const bool many = curves.size() > 1;
    const std::string train_color = many ? kPalette[i % 8] : "#1f5fd6";
    const std::string val_color = many ? kPalette[i % 8] : "#d62728";
    PlotLine tr{"train" + k.suffix,
                "train loss" + k.suffix,
                train_color,
                many ? Dash::kDashed : Dash::kSolid,
                1.8,
                {},
                {}};
    PlotLine va{"val" + k.suffix, "val MSE" + k.suffix, val_color, Dash::kSolid, 1.8, {}, {}};
    if (std::isfinite(k.epoch0_val)) va.x.push_back(0), va.y.push_back(k.epoch0_val);
    for (const train::EpochRecord& r : k.records) {
      tr.x.push_back(r.epoch), tr.y.push_back(r.train_loss);
      va.x.push_back(r.epoch), va.y.push_back(r.val_loss);
    }
    chart.lines.push_back(std::move(tr)), chart.lines.push_back(std::move(va));
    if (std::isfinite(k.epoch0_val))
      chart.points.push_back({0, k.epoch0_val,
                              "epoch 0 (" + k.epoch0_what + "): " + format_number(k.epoch0_val),
                              "epoch0-marker", val_color});
    mark_kept(chart, k, many ? val_color : "#2a7a2a");
  }
  chart.log_y = wants_log(chart);
  return render_chart(chart);
}

namespace {

// One layer's lag profiles: the lift of each lag (in steps) per head; 1 = uniform.
std::string lag_chart(const AttentionView& v, size_t layer) {
  static const char* kHeads[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                 "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  ChartSpec chart;
  chart.title = "layer " + std::to_string(layer) + ": lag profiles";
  chart.x_label = "lag (steps from key patch to query patch)";
  chart.y_label = "lift over uniform";
  chart.x_multiple = v.stride;
  chart.width = 760, chart.height = 260;
  chart.reference_y = 1, chart.reference_label = "uniform causal attention";
  const size_t nn = static_cast<size_t>(v.n) * v.n;
  for (int h = 0; h < v.heads; ++h) {
    const LagProfile p = causal_lag_profile(v.maps[layer].data() + h * nn, v.n);
    PlotLine l{"lag-head-" + std::to_string(h),
               "head " + std::to_string(h),
               kHeads[h % 8],
               Dash::kSolid,
               1.6,
               {},
               {}};
    for (size_t lag = 0; lag < p.lift.size(); ++lag)
      l.x.push_back(static_cast<double>(lag) * v.stride), l.y.push_back(p.lift[lag]);
    chart.lines.push_back(std::move(l));
  }
  return render_chart(chart);
}

}  // namespace

std::string attention_html(const AttentionView& v) {
  // The first query patch sees only itself (weight 1 in every map): the scale tops out at
  // the largest weight of the other rows, so their contrasts stay visible.
  const size_t nn = static_cast<size_t>(v.n) * v.n;
  double vmax = 0;
  for (const auto& m : v.maps)
    for (size_t i = 0; i < m.size(); ++i)
      if (v.n == 1 || i % nn >= static_cast<size_t>(v.n))
        vmax = std::max(vmax, static_cast<double>(m[i]));
  vmax = vmax > 0 ? vmax : 1;
  std::ostringstream s;
  s << render_colour_scale(vmax, "attention weight (yellow: " + format_number(vmax) + " or more)");
  for (size_t layer = 0; layer < v.maps.size(); ++layer) {
    s << "<div class='layer'><div class='maps'>";
    for (int h = 0; h < v.heads; ++h)
      s << render_heatmap({"layer " + std::to_string(layer) + ", head " + std::to_string(h),
                           v.maps[layer].data() + h * nn, v.n, v.patch_len, v.stride, v.context(),
                           vmax});
    s << "</div>\n" << lag_chart(v, layer) << "</div>\n";
  }
  return s.str();
}

}  // namespace attnfc::cli
