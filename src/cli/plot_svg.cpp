// Line charts and heatmaps as inline SVG (plot_svg.hpp).
#include "plot_svg.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "plot_axis.hpp"

namespace attnfc::cli {

namespace {

// Coordinates to one decimal: enough for a screen, and the page stays small.
std::string px(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

const char* dash_array(Dash d) {
  switch (d) {
    case Dash::kDashed:
      return " stroke-dasharray='7,4'";
    case Dash::kDotted:
      return " stroke-dasharray='2,3'";
    case Dash::kDashDot:
      return " stroke-dasharray='8,3,2,3'";
    case Dash::kSolid:
      break;
  }
  return "";
}

// Where the data lands: the plot area inside the margins and the ranges drawn in it.
struct Frame {
  double left = 70, right = 0, top = 34, bottom = 0;  // right and bottom: pixel edges
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  bool log_y = false;
  double fy(double v) const { return log_y ? std::log10(v) : v; }
  bool drawable(double v) const { return std::isfinite(v) && (!log_y || v > 0); }
  double sx(double x) const { return left + (x - x0) / (x1 - x0) * (right - left); }
  double sy(double y) const { return bottom - (fy(y) - y0) / (y1 - y0) * (bottom - top); }
};

Frame frame_of(const ChartSpec& c, int height) {
  Frame f;
  f.log_y = c.log_y;
  f.right = c.width - 250.0;  // the legend's column
  f.bottom = height - 58.0;   // two lines of tick labels and the axis title
  const auto take_y = [&](double v) {
    if (f.drawable(v)) f.y0 = std::min(f.y0, f.fy(v)), f.y1 = std::max(f.y1, f.fy(v));
  };
  for (const PlotLine& l : c.lines)
    for (size_t i = 0; i < l.x.size(); ++i)
      if (f.drawable(l.y[i])) f.x0 = std::min(f.x0, l.x[i]), f.x1 = std::max(f.x1, l.x[i]);
  for (const PlotLine& l : c.lines)
    for (double v : l.y) take_y(v);
  for (const PlotBand& b : c.bands)
    for (size_t i = 0; i < b.x.size(); ++i) take_y(b.lo[i]), take_y(b.hi[i]);
  for (const PointMarker& p : c.points)
    take_y(p.y), f.x0 = std::min(f.x0, p.x), f.x1 = std::max(f.x1, p.x);
  for (const VerticalMarker& m : c.markers) f.x0 = std::min(f.x0, m.x), f.x1 = std::max(f.x1, m.x);
  if (!(f.x1 > f.x0)) f.x0 = std::isfinite(f.x0) ? f.x0 - 1 : 0, f.x1 = f.x0 + 2;
  if (!(f.y1 > f.y0)) f.y0 = std::isfinite(f.y0) ? f.y0 - 1 : 0, f.y1 = f.y0 + 2;
  const double pad = 0.06 * (f.y1 - f.y0);
  f.y0 -= pad, f.y1 += pad;
  return f;
}

void draw_y_axis(std::ostringstream& s, const ChartSpec& c, const Frame& f) {
  const int max_ticks = std::max(2, static_cast<int>((f.bottom - f.top) / 32));
  const double lo = c.log_y ? std::pow(10.0, f.y0) : f.y0,
               hi = c.log_y ? std::pow(10.0, f.y1) : f.y1;
  for (const double v : c.log_y ? log_ticks(lo, hi, max_ticks) : value_ticks(lo, hi, max_ticks)) {
    const std::string y = px(f.sy(v));
    s << "<g class='tick-y'><line x1='" << f.left << "' x2='" << f.right << "' y1='" << y
      << "' y2='" << y << "' stroke='#e6e6e6'/><text x='" << f.left - 6 << "' y='" << y
      << "' dy='4' text-anchor='end'>" << format_number(v) << "</text></g>\n";
  }
  const double mid = (f.top + f.bottom) / 2;
  s << "<text class='axis-label' transform='translate(14," << mid
    << ") rotate(-90)' text-anchor='middle'>" << escape_html(c.y_label)
    << (c.log_y ? " (log scale)" : "") << "</text>\n";
}

void draw_x_axis(std::ostringstream& s, const ChartSpec& c, const Frame& f) {
  const int max_ticks = std::max(2, static_cast<int>((f.right - f.left) / 90));
  const auto tick = [&](double x, const std::string& label, const std::string& context) {
    const std::string xp = px(f.sx(x));
    s << "<g class='tick-x'><line x1='" << xp << "' x2='" << xp << "' y1='" << f.top << "' y2='"
      << f.bottom + 4 << "' stroke='#eeeeee'/><text x='" << xp << "' y='" << f.bottom + 17
      << "' text-anchor='middle'>" << escape_html(label) << "</text>";
    if (!context.empty())
      s << "<text class='tick-context' x='" << xp << "' y='" << f.bottom + 31
        << "' text-anchor='middle' font-weight='bold'>" << escape_html(context) << "</text>";
    s << "</g>\n";
  };
  if (c.time_x) {
    for (const TimeTick& t : time_ticks(static_cast<int64_t>(std::ceil(f.x0)),
                                        static_cast<int64_t>(std::floor(f.x1)), max_ticks))
      tick(static_cast<double>(t.at), t.label, t.context);
  } else if (c.x_multiple > 0) {
    const double every = c.x_multiple * std::ceil((f.x1 - f.x0) / c.x_multiple / max_ticks);
    for (double v = std::ceil(f.x0 / every) * every; v <= f.x1; v += every)
      tick(v, format_number(v), "");
  } else {
    for (const double v : value_ticks(f.x0, f.x1, max_ticks))
      if (!c.integer_x || v == std::floor(v)) tick(v, format_number(v), "");
  }
  s << "<text class='axis-label' x='" << (f.left + f.right) / 2 << "' y='" << f.bottom + 50
    << "' text-anchor='middle'>" << escape_html(c.x_label) << "</text>\n";
}

// A path through the drawable points, broken where a value is missing.
std::string path_of(const Frame& f, const std::vector<double>& x, const std::vector<double>& y) {
  std::string d;
  bool pen_down = false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!f.drawable(y[i])) {
      pen_down = false;
      continue;
    }
    d += (pen_down ? "L" : "M") + px(f.sx(x[i])) + "," + px(f.sy(y[i]));
    pen_down = true;
  }
  return d;
}

void draw_series(std::ostringstream& s, const ChartSpec& c, const Frame& f) {
  for (const PlotBand& b : c.bands) {
    std::string pts;
    for (size_t i = 0; i < b.x.size(); ++i) pts += px(f.sx(b.x[i])) + "," + px(f.sy(b.lo[i])) + " ";
    for (size_t i = b.x.size(); i-- > 0;) pts += px(f.sx(b.x[i])) + "," + px(f.sy(b.hi[i])) + " ";
    s << "<polygon class='band' data-series='" << escape_html(b.key) << "' fill='" << b.color
      << "' fill-opacity='" << b.opacity << "' stroke='none' points='" << pts << "'/>\n";
  }
  for (const PlotLine& l : c.lines)
    s << "<path class='line' data-series='" << escape_html(l.key) << "' fill='none' stroke='"
      << l.color << "' stroke-width='" << l.width << "' stroke-linejoin='round'"
      << dash_array(l.dash) << " d='" << path_of(f, l.x, l.y) << "'/>\n";
  for (const VerticalMarker& m : c.markers) {
    const double at = f.sx(m.x);
    // Near an edge the label runs inwards instead of past the plot.
    const char* anchor = at - f.left < 60 ? "start" : f.right - at < 60 ? "end" : "middle";
    s << "<g class='" << m.css_class << "'><line x1='" << px(at) << "' x2='" << px(at) << "' y1='"
      << f.top << "' y2='" << f.bottom << "' stroke='" << m.color
      << "' stroke-width='1.3' stroke-dasharray='4,3'/><text x='" << px(at) << "' y='" << f.top - 4
      << "' text-anchor='" << anchor << "' fill='" << m.color << "'>" << escape_html(m.label)
      << "</text></g>\n";
  }
  for (const PointMarker& p : c.points) {
    if (!f.drawable(p.y)) continue;
    // The label on the side of the point with more room, inside the plot.
    const double y = f.sy(p.y), label_y = y - f.top < 40 ? y + 18 : y - 8;
    s << "<g class='" << p.css_class << "'><circle cx='" << px(f.sx(p.x)) << "' cy='" << px(y)
      << "' r='5' fill='white' stroke='" << p.color << "' stroke-width='2'/><text x='"
      << px(f.sx(p.x) + 9) << "' y='" << px(label_y) << "' fill='" << p.color << "'>"
      << escape_html(p.label) << "</text></g>\n";
  }
}

void draw_legend(std::ostringstream& s, const ChartSpec& c, const Frame& f) {
  const double x = f.right + 18;
  double y = f.top + 8;
  for (const PlotLine& l : c.lines) {
    s << "<g class='legend-entry' data-series='" << escape_html(l.key) << "'><line x1='" << x
      << "' x2='" << x + 26 << "' y1='" << y << "' y2='" << y << "' stroke='" << l.color
      << "' stroke-width='" << std::max(2.0, l.width) << "'" << dash_array(l.dash) << "/><text x='"
      << x + 32 << "' y='" << y + 4 << "'>" << escape_html(l.label) << "</text></g>\n";
    y += 18;
  }
  for (const PlotBand& b : c.bands) {
    s << "<g class='legend-entry' data-series='" << escape_html(b.key) << "'><rect x='" << x
      << "' y='" << y - 5 << "' width='26' height='10' fill='" << b.color << "' fill-opacity='"
      << std::min(1.0, 2 * b.opacity) << "'/><text x='" << x + 32 << "' y='" << y + 4 << "'>"
      << escape_html(b.label) << "</text></g>\n";
    y += 18;
  }
}

}  // namespace

std::string render_chart(const ChartSpec& c) {
  const size_t entries = c.lines.size() + c.bands.size();
  const int height = std::max(c.height, 34 + 18 * static_cast<int>(entries) + 70);
  const Frame f = frame_of(c, height);
  std::ostringstream s;
  s << "<svg class='chart' xmlns='http://www.w3.org/2000/svg' width='" << c.width << "' height='"
    << height << "' viewBox='0 0 " << c.width << " " << height
    << "' font-family='sans-serif' font-size='11'>\n<text class='chart-title' x='" << f.left
    << "' y='16' font-size='13' font-weight='bold'>" << escape_html(c.title) << "</text>\n";
  if (std::isfinite(c.shade_from) && std::isfinite(c.shade_to)) {
    const double a = f.sx(c.shade_from), b = f.sx(c.shade_to);
    s << "<g class='forecast-area'><rect x='" << px(a) << "' y='" << f.top << "' width='"
      << px(b - a) << "' height='" << f.bottom - f.top << "' fill='#eef3fb'/></g>\n";
  }
  draw_y_axis(s, c, f);
  draw_x_axis(s, c, f);
  if (f.drawable(c.reference_y)) {
    const std::string y = px(f.sy(c.reference_y));
    s << "<g class='reference'><line x1='" << f.left << "' x2='" << f.right << "' y1='" << y
      << "' y2='" << y << "' stroke='#999' stroke-dasharray='3,3'/><text x='" << f.right - 4
      << "' y='" << y << "' dy='-4' text-anchor='end' fill='#777'>"
      << escape_html(c.reference_label) << "</text></g>\n";
  }
  s << "<rect x='" << f.left << "' y='" << f.top << "' width='" << f.right - f.left << "' height='"
    << f.bottom - f.top << "' fill='none' stroke='#888'/>\n";
  draw_series(s, c, f);
  if (std::isfinite(c.shade_from) && std::isfinite(c.shade_to))  // above the lines and bands
    s << "<text class='area-label' x='" << px(f.sx(c.shade_to) - 4) << "' y='" << f.top + 14
      << "' text-anchor='end' fill='#5a6b85' stroke='white' stroke-width='3' "
      << "paint-order='stroke'>" << escape_html(c.shade_label) << "</text>\n";
  draw_legend(s, c, f);
  s << "</svg>\n";
  return s.str();
}

namespace {

// Tick labels of a heatmap axis: the first step of every k-th patch, relative to the origin.
std::vector<int> heatmap_ticks(int n) {
  const int every = (n + 5) / 6;
  std::vector<int> out;
  for (int i = 0; i < n; i += every) out.push_back(i);
  return out;
}

void heatmap_cells(std::ostringstream& s, const HeatmapSpec& h, int cell, int x0, int y0) {
  const auto first_step = [&](int i) { return -h.context + i * h.stride; };
  for (int i = 0; i < h.n; ++i)
    for (int j = 0; j <= i; ++j) {
      const double w = h.weights[static_cast<size_t>(i) * h.n + j];
      s << "<rect x='" << x0 + j * cell << "' y='" << y0 + i * cell << "' width='" << cell
        << "' height='" << cell << "' fill='" << viridis(h.vmax > 0 ? w / h.vmax : 0) << "'>";
      if (h.n <= 64)  // a tooltip per cell; beyond that the page would mostly be tooltips
        s << "<title>query steps " << first_step(i) << ".." << first_step(i) + h.patch_len - 1
          << ", key steps " << first_step(j) << ".." << first_step(j) + h.patch_len - 1 << ": lag "
          << (i - j) * h.stride << " steps, weight " << format_number(w) << "</title>";
      s << "</rect>";
    }
  s << "\n";
}

}  // namespace

std::string render_heatmap(const HeatmapSpec& h) {
  const int cell = std::clamp(240 / std::max(1, h.n), 4, 32), size = cell * h.n;
  const int x0 = 52, y0 = 30, width = x0 + size + 12, height = y0 + size + 44;
  std::ostringstream s;
  s << "<svg class='heatmap' xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='"
    << height << "' font-family='sans-serif' font-size='10'>\n<text class='heatmap-title' x='" << x0
    << "' y='14' font-size='12' font-weight='bold'>" << escape_html(h.title) << "</text>\n";
  // Above the diagonal a query would see later keys: the causal mask, never weighted.
  s << "<polygon points='" << x0 << "," << y0 << " " << x0 + size << "," << y0 << " " << x0 + size
    << "," << y0 + size << "' fill='#f2f2f2'/>\n";
  heatmap_cells(s, h, cell, x0, y0);
  for (const int i : heatmap_ticks(h.n)) {
    const int step = -h.context + i * h.stride;
    const double mid = i * cell + cell / 2.0;
    s << "<g class='tick-key'><line x1='" << px(x0 + mid) << "' x2='" << px(x0 + mid) << "' y1='"
      << y0 + size << "' y2='" << y0 + size + 4 << "' stroke='#555'/><text x='" << px(x0 + mid)
      << "' y='" << y0 + size + 15 << "' text-anchor='middle'>" << step << "</text></g>"
      << "<g class='tick-query'><line x1='" << x0 - 4 << "' x2='" << x0 << "' y1='" << px(y0 + mid)
      << "' y2='" << px(y0 + mid) << "' stroke='#555'/><text x='" << x0 - 6 << "' y='"
      << px(y0 + mid + 3) << "' text-anchor='end'>" << step << "</text></g>\n";
  }
  s << "<text class='axis-label' x='" << x0 + size / 2 << "' y='" << y0 + size + 32
    << "' text-anchor='middle'>key patch (first step)</text><text class='axis-label' "
    << "transform='translate(12," << y0 + size / 2
    << ") rotate(-90)' text-anchor='middle'>query patch</text>\n</svg>\n";
  return s.str();
}

std::string render_colour_scale(double vmax, const std::string& title) {
  const int x0 = 16, y0 = 24, bar = 300, parts = 60;
  std::ostringstream s;
  s << "<svg class='colour-scale' xmlns='http://www.w3.org/2000/svg' width='" << x0 + bar + 40
    << "' height='64' font-family='sans-serif' font-size='10'><text x='" << x0
    << "' y='14' font-size='11'>" << escape_html(title) << "</text>\n";
  for (int k = 0; k < parts; ++k)  // small rects instead of a gradient: no ids to collide
    s << "<rect x='" << px(x0 + bar * k / static_cast<double>(parts)) << "' y='" << y0
      << "' width='" << px(bar / static_cast<double>(parts) + 0.6) << "' height='12' fill='"
      << viridis((k + 0.5) / parts) << "'/>";
  s << "\n";
  for (const double v : value_ticks(0, vmax, 6)) {
    const std::string x = px(x0 + bar * (vmax > 0 ? v / vmax : 0));
    s << "<g class='scale-tick'><line x1='" << x << "' x2='" << x << "' y1='" << y0 + 12 << "' y2='"
      << y0 + 16 << "' stroke='#333'/><text x='" << x << "' y='" << y0 + 27
      << "' text-anchor='middle'>" << format_number(v) << "</text></g>";
  }
  s << "\n</svg>\n";
  return s.str();
}

}  // namespace attnfc::cli
