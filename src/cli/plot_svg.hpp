#pragma once
// The inline SVG of `attnfc plot`: line charts (a time or a numeric x axis, shaded bands,
// vertical markers, marked points, a legend) and attention heatmaps with their colour
// scale. Only drawing: what to draw comes from plot_data.hpp. Elements carry classes
// (legend-entry, origin-marker, tick-x, colour-scale, ...) so a browser test can find them.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace attnfc::cli {

enum class Dash { kSolid, kDashed, kDotted, kDashDot };

// A line; a non-finite y leaves a gap (a missing value is not drawn as a jump to it).
struct PlotLine {
  std::string key;    // a stable name for the page (data-series="nlinear")
  std::string label;  // the legend's text
  std::string color;
  Dash dash = Dash::kSolid;
  double width = 1.6;
  std::vector<double> x, y;
};

// A shaded interval (a fan chart's band): lo and hi at each x.
struct PlotBand {
  std::string key, label, color;
  double opacity = 0.18;
  std::vector<double> x, lo, hi;
};

// A vertical line across the plot with a label at its top (the forecast origin, the kept
// epoch); css_class names it for the page.
struct VerticalMarker {
  double x = 0;
  std::string label, css_class, color = "#444";
};

// A marked point with a label beside it (epoch 0's validation loss).
struct PointMarker {
  double x = 0, y = 0;
  std::string label, css_class, color = "#111";
};

struct ChartSpec {
  std::string title, x_label, y_label;
  bool time_x = false;     // x holds Unix seconds: calendar ticks and date labels
  bool integer_x = false;  // numeric x ticks at whole numbers only (epochs)
  double x_multiple = 0;   // > 0: numeric x ticks at multiples of it (lags in patches)
  bool log_y = false;
  int width = 1100, height = 340;
  std::vector<PlotLine> lines;
  std::vector<PlotBand> bands;
  std::vector<VerticalMarker> markers;
  std::vector<PointMarker> points;
  // A lightly shaded x range with a label at its top (the forecast steps); NaN: none.
  double shade_from = NAN, shade_to = NAN;
  std::string shade_label;
  // A horizontal reference line (lift 1 = uniform attention); NaN: none.
  double reference_y = NAN;
  std::string reference_label;
};

// The chart as an <svg> element (class "chart"), legend on the right.
std::string render_chart(const ChartSpec& spec);

// One head's causal attention map: row = query patch, column = key patch; patch i covers
// the context steps -context + i*stride .. -context + i*stride + patch_len - 1 relative to
// the forecast origin (stride = patch_len without overlap). Colours run from 0 to vmax (shared by
// the maps shown together).
struct HeatmapSpec {
  std::string title;
  const float* weights = nullptr;  // [n, n] row-major
  int n = 0, patch_len = 1, stride = 1, context = 0;
  double vmax = 1;
};
std::string render_heatmap(const HeatmapSpec& spec);

// The colour scale of the heatmaps: a viridis bar from 0 to vmax with labelled ticks
// (class "colour-scale").
std::string render_colour_scale(double vmax, const std::string& title);

}  // namespace attnfc::cli
