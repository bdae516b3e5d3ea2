// attnfc plot: one self-contained HTML page (inline SVG, no scripts, no network) with the
// forecast against what happened, the training curves and the attention maps.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/train/baselines.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "attnfc/train/progress.hpp"
#include "attnfc/train/run_folder.hpp"
#include "attnfc/train/scorer.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace attnfc::cli {

namespace {

namespace fs = std::filesystem;

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s)
    o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

struct Line {
  std::vector<double> x, y;
  std::string color, label;
  bool dashed = false;
};

// A shaded interval (a fan chart's band): lo and hi at each x.
struct Band {
  std::vector<double> x, lo, hi;
  std::string color, label;
};

// The bands as filled polygons (lo forward, hi back), each with a legend entry at row li.
void draw_bands(std::ostringstream& s, const std::vector<Band>& bands,
                const std::function<double(double)>& px, const std::function<double(double)>& py,
                double legend_x, double legend_y, size_t first_row) {
  for (size_t k = 0; k < bands.size(); ++k) {
    const Band& b = bands[k];
    s << "<polygon fill='" << b.color << "' fill-opacity='0.18' stroke='none' points='";
    for (size_t i = 0; i < b.x.size(); ++i) s << num(px(b.x[i])) << "," << num(py(b.lo[i])) << " ";
    for (size_t i = b.x.size(); i-- > 0;) s << num(px(b.x[i])) << "," << num(py(b.hi[i])) << " ";
    const double y = legend_y + 16 * static_cast<double>(first_row + k);
    s << "'/>\n<rect x='" << legend_x << "' y='" << y << "' width='20' height='8' fill='" << b.color
      << "' fill-opacity='0.35'/><text x='" << legend_x + 24 << "' y='" << y + 8 << "'>"
      << esc(b.label) << "</text>\n";
  }
}

// A line chart with axes, y ticks and a legend, over optional shaded bands. Non-finite
// points are skipped.
std::string chart(const std::string& title, const std::vector<Line>& lines, bool log_y = false,
                  const std::vector<Band>& bands = {}) {
  const double W = 720, H = 260, l = 60, r = 150, t = 28, b = 30;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  auto fy = [&](double v) { return log_y ? std::log10(std::max(v, 1e-12)) : v; };
  for (const auto& ln : lines)
    for (size_t i = 0; i < ln.x.size(); ++i) {
      if (!std::isfinite(ln.y[i])) continue;
      x0 = std::min(x0, ln.x[i]), x1 = std::max(x1, ln.x[i]);
      y0 = std::min(y0, fy(ln.y[i])), y1 = std::max(y1, fy(ln.y[i]));
    }
  for (const auto& b : bands)
    for (size_t i = 0; i < b.x.size(); ++i)
      if (std::isfinite(b.lo[i]) && std::isfinite(b.hi[i]))
        y0 = std::min(y0, fy(b.lo[i])), y1 = std::max(y1, fy(b.hi[i]));
  if (!(x1 > x0)) x1 = x0 + 1;
  if (!(y1 > y0)) y1 = y0 + 1, y0 -= 1;
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad, y1 += pad;
  auto px = [&](double x) { return l + (x - x0) / (x1 - x0) * (W - l - r); };
  auto py = [&](double y) { return t + (1 - (fy(y) - y0) / (y1 - y0)) * (H - t - b); };
  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
    << "' font-family='sans-serif' font-size='11'>\n<text x='" << l << "' y='16' font-size='13'>"
    << esc(title) << "</text>\n<rect x='" << l << "' y='" << t << "' width='" << W - l - r
    << "' height='" << H - t - b << "' fill='none' stroke='#999'/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double yv = y0 + (y1 - y0) * k / 4, yp = t + (1 - k / 4.0) * (H - t - b);
    s << "<text x='" << l - 4 << "' y='" << yp + 4 << "' text-anchor='end'>"
      << num(log_y ? std::pow(10, yv) : yv) << "</text><line x1='" << l << "' x2='" << W - r
      << "' y1='" << yp << "' y2='" << yp << "' stroke='#eee'/>\n";
  }
  s << "<text x='" << l << "' y='" << H - 10 << "'>" << num(x0) << "</text><text x='" << W - r
    << "' y='" << H - 10 << "' text-anchor='end'>" << num(x1) << "</text>\n";
  draw_bands(s, bands, px, py, W - r + 10, t + 4, lines.size());
  for (size_t li = 0; li < lines.size(); ++li) {
    const auto& ln = lines[li];
    s << "<polyline fill='none' stroke='" << ln.color << "' stroke-width='1.6'"
      << (ln.dashed ? " stroke-dasharray='5,3'" : "") << " points='";
    for (size_t i = 0; i < ln.x.size(); ++i)
      if (std::isfinite(ln.y[i])) s << num(px(ln.x[i])) << "," << num(py(ln.y[i])) << " ";
    s << "'/>\n<line x1='" << W - r + 10 << "' x2='" << W - r + 30 << "' y1='" << t + 8 + 16 * li
      << "' y2='" << t + 8 + 16 * li << "' stroke='" << ln.color << "' stroke-width='2'"
      << (ln.dashed ? " stroke-dasharray='5,3'" : "") << "/><text x='" << W - r + 34 << "' y='"
      << t + 12 + 16 * li << "'>" << esc(ln.label) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// One head's causal attention map: row = query patch, column = key patch.
std::string heatmap(const std::string& title, const float* w, int n) {
  const int cell = std::max(4, std::min(16, 256 / std::max(1, n)));
  const int size = cell * n;
  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << size + 8 << "' height='" << size + 24
    << "' font-family='sans-serif' font-size='11'><text x='0' y='12'>" << esc(title) << "</text>\n";
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      const double v = std::clamp(static_cast<double>(w[i * n + j]), 0.0, 1.0);
      const int shade = static_cast<int>(std::lround(255 * (1 - std::sqrt(v))));
      s << "<rect x='" << j * cell << "' y='" << 18 + i * cell << "' width='" << cell
        << "' height='" << cell << "' fill='rgb(" << shade << "," << shade << ",255)'/>";
    }
  s << "</svg>\n";
  return s.str();
}

// A forecast line that is empty or holds inf/NaN would be drawn as nothing (or as a
// flat axis) with exit 0: refuse it, naming the column.
void check_line(const std::vector<float>& values, int H, int C, int c, const std::string& what,
                const PlotOptions& a, const std::string& column) {
  if (H < 1) throw InputError(a.model + ": the " + what + " has no steps to plot");
  for (int h = 0; h < H; ++h) {
    const float v = values[static_cast<size_t>(h) * C + c];
    if (!std::isfinite(v))
      throw InputError(a.input + ": column '" + column + "': the " + what + " at step " +
                       std::to_string(h + 1) + " is " + (std::isnan(v) ? "NaN" : "infinite") +
                       " after undoing the scaling of " + a.model +
                       "; expected finite values to plot");
  }
}

// The plotted window: its forecast by the model and by NLinear, in original units.
struct PlotWindow {
  int L = 0, H = 0, C = 0;
  long w = 0, windows = 0;
  size_t t0 = 0;         // first forecast row
  SampleBuffers sample;  // its context, scaled, flagged as the sampler flags it
  std::vector<float> fc, base;
  std::vector<float> levels;  // a quantile model's [H, Q, C], original units (calibrated if stored)
  std::vector<std::pair<int, int>> pairs;  // its symmetric pairs, widest first
};

PlotWindow forecast_window(const PlotOptions& a, const train::LoadedModel& lm,
                           const data::TimeSeries& series) {
  PlotWindow pw;
  const int L = lm.context(), H = lm.horizon(), C = static_cast<int>(series.num_channels());
  pw.L = L, pw.H = H, pw.C = C;
  train::DataConfig d = lm.run.data;
  d.csv.path = a.input;
  const data::Split split =
      train::make_split(d, series, static_cast<size_t>(L), static_cast<size_t>(H));
  data::validate_split(split, L, H, a.input);
  const data::RowRange part = a.split == "val" ? split.val_targets() : split.test_targets();
  const long windows = pw.windows = static_cast<long>(part.size()) - H + 1;
  const long w = pw.w = a.window < 0 ? windows - 1 : a.window;
  if (w < 0 || w >= windows)
    throw InputError("--window: found " + std::to_string(a.window) + ", expected 0.." +
                     std::to_string(windows - 1) + " (or -1 for the last window of the split)");
  const size_t t0 = pw.t0 = part.begin + static_cast<size_t>(w);  // first forecast row

  const data::Scaler scaler = lm.scaler_of(series, split.train, "plot");
  const std::vector<float> values = train::scaled_with_gaps(series, scaler);
  // The window's context as one sample (base/sample.hpp), flagged as the sampler flags it.
  pw.sample = SampleBuffers(1, L, 0, C);
  SampleBuffers& sample = pw.sample;
  for (size_t i = 0; i < static_cast<size_t>(L) * C; ++i) {
    const size_t src = (t0 - L) * C + i;
    sample.context_observed[i] = series.observed[src];
    sample.context_values[i] = sample.context_observed[i] ? values[src] : 0.0f;
  }
  std::vector<float>& fc = pw.fc;
  std::vector<float>& base = pw.base;
  fc.assign(static_cast<size_t>(H) * C, 0.0f);
  base.assign(fc.size(), 0.0f);
  SampleBatch batch = sample.view(1);
  SampleBuffers known(1, 0, H, 0);  // the decoder's inputs at the window's steps, as recorded
  if (series.known) {
    // From the filled values, as training and evaluate read them (`values` holds NaN where
    // a cell was missing).
    data::TimeSeries scaled = series;
    scaler.transform(scaled.values.data(), scaled.rows());
    data::reserve_known(scaled, known);
    data::fill_known(scaled, t0, 0, known);
    batch.known = known.view(1).known;
  }
  const bool quantiles = lm.config().levels() > 1;
  train::model_forecaster(lm.members(), C, H, quantiles ? &pw.levels : nullptr,
                          lm.calibration.get())(batch, fc.data());
  if (quantiles) {
    scaler.inverse_transform(pw.levels.data(), static_cast<size_t>(H) * lm.config().levels());
    pw.pairs = train::symmetric_pairs(lm.config().quantiles);
  }
  const train::NLinear nl = train::NLinear::fit(
      {values.data() + split.train.begin * C, static_cast<int64_t>(split.train.size()), C}, L, H);
  nl.forecast(sample.view(1), base.data());
  scaler.inverse_transform(fc.data(), H);
  scaler.inverse_transform(base.data(), H);
  for (int c = 0; c < std::min(C, a.max_channels); ++c) {
    check_line(fc, H, C, c, "forecast", a, series.channels[c]);
    check_line(base, H, C, c, "NLinear baseline", a, series.channels[c]);
  }
  return pw;
}

// The fan of channel c: one band per symmetric pair of levels, widest first.
std::vector<Band> fan(const PlotWindow& pw, int c, const std::vector<float>& q) {
  std::vector<Band> out;
  const int Q = static_cast<int>(q.size());
  for (const auto& [lo, hi] : pw.pairs) {
    Band b{{}, {}, {}, "#1f5fd6", num(100.0 * (1.0 - 2.0 * q[lo])) + "% interval"};
    for (int h = 0; h < pw.H; ++h) {
      b.x.push_back(h);
      b.lo.push_back(pw.levels[(static_cast<size_t>(h) * Q + lo) * pw.C + c]);
      b.hi.push_back(pw.levels[(static_cast<size_t>(h) * Q + hi) * pw.C + c]);
    }
    out.push_back(std::move(b));
  }
  return out;
}

void html_forecast(std::ostringstream& html, const PlotOptions& a, const data::TimeSeries& series,
                   const PlotWindow& pw, const std::vector<float>& quantile_levels) {
  const int L = pw.L, H = pw.H, C = pw.C;
  const size_t t0 = pw.t0;
  const std::vector<float>& fc = pw.fc;
  const std::vector<float>& base = pw.base;
  html << "<h2>Forecast vs actual</h2><p>" << a.split << " window " << pw.w << " of " << pw.windows
       << ": forecast from " << esc(series.format_time(series.timestamps[t0])) << ", context " << L
       << " steps, horizon " << H << " (original units).</p>\n";
  for (int c = 0; c < std::min(C, a.max_channels); ++c) {
    Line hist{{}, {}, "#888", "context"}, actual{{}, {}, "#111", "actual"},
        model{{}, {}, "#1f5fd6", "attnfc"}, lin{{}, {}, "#e07b00", "NLinear", true};
    for (int k = -L; k < H; ++k) {
      const size_t row = t0 + k;
      const double v = series.is_observed(row, c) ? series.value(row, c) : NAN;
      (k < 0 ? hist : actual).x.push_back(k), (k < 0 ? hist : actual).y.push_back(v);
    }
    actual.x.insert(actual.x.begin(), -1), actual.y.insert(actual.y.begin(), hist.y.back());
    for (int h = 0; h < H; ++h) {
      model.x.push_back(h), model.y.push_back(fc[static_cast<size_t>(h) * C + c]);
      lin.x.push_back(h), lin.y.push_back(base[static_cast<size_t>(h) * C + c]);
    }
    html << chart(series.channels[c] + " (steps relative to the forecast origin)",
                  {hist, actual, model, lin}, false, fan(pw, c, quantile_levels));
  }
  if (C > a.max_channels) html << "<p>(" << C - a.max_channels << " more channels not shown)</p>\n";
}

// The run's training curves (one pair per member of an ensemble).
void html_curves(std::ostringstream& html, const PlotOptions& a, const train::LoadedModel& lm) {
  std::vector<std::pair<std::string, std::string>> logs;  // (label suffix, path)
  const train::RunPaths run{fs::path(a.model).parent_path().string()};
  if (!a.log.empty())
    logs.emplace_back("", a.log);
  else if (lm.networks.size() == 1 || fs::exists(run.train_log()))
    logs.emplace_back("", run.train_log());
  else
    for (int k = 1; k <= static_cast<int>(lm.networks.size()); ++k)
      logs.emplace_back(", member " + std::to_string(k), run.member(k).train_log());
  std::vector<Line> curves;
  for (size_t i = 0; i < logs.size(); ++i) {
    const auto& [suffix, log_path] = logs[i];
    if (!fs::exists(log_path)) continue;
    const auto recs =
        train::parse_train_log(read_input_file(log_path, 256 << 20, "training log"), log_path);
    Line tr{{}, {}, "#1f5fd6", "train loss" + suffix}, va{{}, {}, "#d62728", "val MSE" + suffix};
    if (logs.size() > 1) {  // an ensemble: one colour per member, train loss dashed
      static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                       "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
      tr.color = va.color = kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
      tr.dashed = true;
    }
    for (const auto& r : recs) {
      tr.x.push_back(r.epoch), tr.y.push_back(r.train_loss);
      va.x.push_back(r.epoch), va.y.push_back(r.val_loss);
    }
    curves.push_back(tr), curves.push_back(va);
  }
  if (!curves.empty())
    html << "<h2>Training curves</h2>\n" << chart("loss by epoch (log scale)", curves, true);
}

// Attention of the first channel's window (channel-independent) or the whole window (mixed).
void html_attention(std::ostringstream& html, const train::LoadedModel& lm,
                    const data::TimeSeries& series, const PlotWindow& pw) {
  const int L = pw.L, C = pw.C;
  const SampleBuffers& sample = pw.sample;
  const model::ModelConfig& cfg = lm.config();
  const bool mixed = cfg.channel_mode == ChannelMode::kMixed;
  const int width = mixed ? C : 1;
  std::vector<float> actx(static_cast<size_t>(L) * width);
  std::vector<uint8_t> aobs(actx.size());
  for (int k = 0; k < L; ++k)
    for (int c = 0; c < width; ++c) {
      const size_t src = static_cast<size_t>(k) * C + c;
      actx[static_cast<size_t>(k) * width + c] = sample.context_values[src];
      aobs[static_cast<size_t>(k) * width + c] = sample.context_observed[src];
    }
  const auto maps = lm.networks.front()->attention_maps(actx.data(), aobs.data(), L);
  const int n = cfg.num_patches(), heads = cfg.n_heads;
  if (!maps.empty()) {
    html << "<h2>Attention</h2><p>Causal attention over " << n << " patches of " << cfg.patch_len
         << " steps" << (mixed ? "" : (" (" + esc(series.channels[0]) + ")"))
         << (lm.networks.size() > 1
                 ? " of member 1 of the ensemble of " + std::to_string(lm.networks.size())
                 : std::string())
         << "; row = query patch, column = key patch, darker = more weight.</p>\n";
    for (size_t layer = 0; layer < maps.size(); ++layer) {
      html << "<div class='maps'>";
      for (int h = 0; h < heads; ++h)
        html << heatmap("layer " + std::to_string(layer) + ", head " + std::to_string(h),
                        maps[layer].data() + static_cast<size_t>(h) * n * n, n);
      html << "</div>\n";
    }
  }
}

}  // namespace

int run_plot(const PlotOptions& a) {
  if (a.window < -1)
    throw InputError("--window: found " + std::to_string(a.window) +
                     ", expected a window index from 0, or -1 for the last window of the split");
  if (!a.log.empty() && !fs::exists(a.log))
    throw InputError("--log " + a.log + ": file not found; expected a train_log.csv");
  const std::string out =
      a.output.empty() ? (fs::path(a.model).parent_path() / "plot.html").string() : a.output;
  refuse_output_over_inputs("--output", out,
                            {{"--input", a.input}, {"--model", a.model}, {"--log", a.log}});
  const train::LoadedModel lm = train::LoadedModel::load(a.model);
  const data::TimeSeries series = lm.read_series(a.input);
  const PlotWindow pw = forecast_window(a, lm, series);
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>attnfc: " << esc(a.model)
       << "</title><style>body{font-family:sans-serif;margin:24px;color:#222}"
       << "h2{margin-top:28px}.maps svg{margin:4px}</style></head><body>\n<h1>attnfc plot</h1>\n"
       << "<p>model <code>" << esc(a.model) << "</code> on <code>" << esc(a.input)
       << "</code>: " << esc(series.describe()) << "</p>\n";
  html_forecast(html, a, series, pw, lm.config().quantiles);
  html_curves(html, a, lm);
  html_attention(html, lm, series, pw);
  html << "</body></html>\n";
  write_file_atomic(out, html.str());
  std::printf("plot -> %s\n", out.c_str());
  return 0;
}

}  // namespace attnfc::cli
