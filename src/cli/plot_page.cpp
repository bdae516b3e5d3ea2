// The HTML page of plot (plot_page.hpp). The window picker is radio buttons and CSS
// (:checked ~ panel), so it works where scripts are blocked (a mail attachment, a strict
// content security policy) and the page stays one file with no script at all.
#include "plot_page.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "commands.hpp"
#include "plot_axis.hpp"
#include "plot_charts.hpp"

namespace attnfc::cli {

namespace {

using Out = std::ostringstream;

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px 32px;color:#222;max-width:1180px}"
    "h1{margin-bottom:4px}h2{margin-top:36px;border-bottom:1px solid #ddd;padding-bottom:4px}"
    "p.note{color:#555;font-size:13px;max-width:1000px}code{background:#f4f4f4;padding:1px 3px}"
    "p.about,p.coverage{font-size:14px;max-width:1000px}"
    "nav a{margin-right:14px}svg{display:block;margin:8px 0}"
    ".maps{display:flex;flex-wrap:wrap;gap:6px}.maps svg{margin:0}"
    "table.metrics{border-collapse:collapse;font-size:13px;margin:8px 0 16px}"
    "table.metrics th,table.metrics td{border:1px solid #ccc;padding:3px 10px;text-align:right}"
    "table.metrics th:first-child,table.metrics td:first-child{text-align:left}"
    "table.metrics td.best{font-weight:bold;background:#eef6ee}"
    "table.metrics tr.model td:first-child{color:#1f5fd6;font-weight:bold}"
    ".window-picker{margin:10px 0}input.pick{position:absolute;opacity:0}"
    ".window-picker label{display:inline-block;border:1px solid #aab;border-radius:4px;"
    "padding:4px 10px;margin:0 6px 6px 0;cursor:pointer;font-size:13px;background:#f7f8fb}"
    ".window{display:none}@media print{.window{display:block}}";

// Per window: its radio shows its panel and highlights its label.
std::string picker_style(size_t windows) {
  std::string s;
  for (size_t k = 0; k < windows; ++k) {
    const std::string id = std::to_string(k);
    s += "#pick-" + id + ":checked~#window-" + id + "{display:block}";
    s += "#pick-" + id + ":checked~.window-picker label[for=pick-" + id +
         "]{background:#1f5fd6;color:#fff;border-color:#1f5fd6}";
  }
  return s;
}

// A metrics table: one row per forecaster, the lowest of each column in bold.
std::string scores_table(const std::vector<PointScores>& scores, const std::string& caption) {
  const auto column = [&](int k) {
    std::vector<double> v;
    for (const PointScores& p : scores)
      v.push_back(k == 0   ? p.mse_original
                  : k == 1 ? p.mae_original
                  : k == 2 ? p.mse_scaled
                           : p.mae_scaled);
    return v;
  };
  std::vector<std::vector<double>> cols{column(0), column(1), column(2), column(3)};
  Out s;
  s << "<table class='metrics'><caption style='text-align:left'>" << escape_html(caption)
    << "</caption><tr><th rowspan='2'>forecaster</th><th colspan='2'>original units</th>"
    << "<th colspan='2'>scaled units</th></tr><tr><th>MSE</th><th>MAE</th><th>MSE</th>"
    << "<th>MAE</th></tr>\n";
  for (size_t r = 0; r < scores.size(); ++r) {
    s << "<tr class='" << (scores[r].name == "attnfc" ? "model" : "other") << "' data-model='"
      << escape_html(scores[r].name) << "'><td>" << escape_html(scores[r].name) << "</td>";
    for (const auto& col : cols) {
      const double best = *std::min_element(col.begin(), col.end(), [](double a, double b) {
        return std::isnan(b) || (!std::isnan(a) && a < b);
      });
      s << "<td" << (col[r] == best ? " class='best'" : "") << ">" << format_number(col[r])
        << "</td>";
    }
    s << "</tr>\n";
  }
  s << "</table>\n";
  return s.str();
}

std::string units_note(const PlotData& d) {
  std::string s =
      "MSE and MAE as <code>attnfc evaluate</code> computes them: per window the mean over "
      "its observed target values, then the mean over windows. Original units are the "
      "data's own; scaled units are after the z-score fitted on the training rows (the "
      "model's units, the ones ETT papers report). The lowest of each column is bold.";
  if (d.targets > 1)
    s += " Original units pool " + std::to_string(d.targets) +
         " columns of different scales; compare the scaled units.";
  if (d.seasonal_period == 1)
    s += " The training rows show no season, so seasonal-naive(1) is repeat-last.";
  return "<p class='note'>" + s + "</p>\n";
}

void page_head(Out& s, const PlotOptions& a, const train::LoadedModel& lm,
               const data::TimeSeries& series, const PlotData& d) {
  const model::ModelConfig& cfg = lm.config();
  s << "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>attnfc plot: "
    << escape_html(a.model) << "</title><style>" << kStyle << picker_style(d.windows.size())
    << "</style></head><body>\n<h1>attnfc plot</h1>\n<p>model <code>" << escape_html(a.model)
    << "</code> on <code>" << escape_html(a.input) << "</code>: " << escape_html(series.describe())
    << ".</p>\n<p class='note'>Patch Transformer: context " << d.context << " steps in patches of "
    << cfg.patch_len << ", horizon " << d.horizon << ", " << cfg.n_layers << " layer(s) of "
    << cfg.n_heads << " heads, d_model " << cfg.d_model;
  if (d.quantiles.size() > 1) s << ", " << d.quantiles.size() << " quantile levels";
  if (lm.networks.size() > 1) s << ", an ensemble of " << lm.networks.size();
  if (d.kept_epoch >= 0)
    s << "; the model file holds epoch " << d.kept_epoch
      << (d.kept_epoch == 0 ? (d.has_linear_start ? " (its linear start: no epoch beat it)"
                                                  : " (the model before training)")
                            : "");
  s << ".</p>\n<nav><a href='#forecasts'>forecasts</a><a href='#metrics'>metrics</a>"
    << "<a href='#future'>beyond the data</a><a href='#training'>training</a>"
    << "<a href='#attention'>attention</a></nav>\n";
}

// The channels drawn: the targets, at most --max-channels.
size_t shown_channels(const PlotOptions& a, const PlotData& d) {
  return std::min(d.targets, static_cast<size_t>(a.max_channels));
}

void window_panel(Out& s, const PlotOptions& a, const data::TimeSeries& series, const PlotData& d,
                  size_t k) {
  const ForecastWindow& w = d.windows[k];
  const size_t o = w.origin, last = o + static_cast<size_t>(d.horizon) - 1;
  s << "<div class='window' id='window-" << k << "' data-window='" << w.index
    << "'>\n<p class='about'>" << escape_html(d.split) << " window " << w.index << " of "
    << d.split_windows << " (0-based): the model reads rows " << o - d.context << ".." << o - 1
    << " (" << escape_html(series.format_time(series.timestamps[o - d.context])) << " .. "
    << escape_html(series.format_time(series.timestamps[o - 1])) << ") and forecasts " << d.horizon
    << " steps, " << escape_html(series.format_time(series.timestamps[o])) << " .. "
    << escape_html(series.format_time(series.timestamps[last])) << ". The chart shows the last "
    << d.history << " of those steps before the origin"
    << (d.history > d.context ? " (more than the context)" : "") << ".</p>\n";
  for (size_t c = 0; c < shown_channels(a, d); ++c) s << window_chart(series, d, w, c);
  s << scores_table(w.scores, "errors on this window (all target columns)") << "</div>\n";
}

void forecasts_section(Out& s, const PlotOptions& a, const data::TimeSeries& series,
                       const PlotData& d) {
  s << "<section id='forecasts'><h2>Forecast vs actual</h2>\n<p class='note'>" << d.windows.size()
    << " of the " << d.split_windows << " windows of the " << d.split
    << " split, spread over it (--windows, --window): pick one. Each chart shows the history, "
    << "what happened, the model (attnfc) and the baselines evaluate scores it against, with "
    << "each forecaster's MAE on that channel and window in the legend.";
  if (d.seasonal_period == 1)
    s << " The training rows show no season: seasonal-naive(1) is repeat-last, drawn once.";
  if (d.kept_epoch == 0 && d.has_linear_start)
    s << " The kept model is its linear start: the two are one line.";
  s << "</p>\n";
  for (size_t k = 0; k < d.windows.size(); ++k)
    s << "<input class='pick' type='radio' name='window' id='pick-" << k << "'"
      << (k == d.selected ? " checked" : "") << ">";
  s << "\n<div class='window-picker'>";
  for (size_t k = 0; k < d.windows.size(); ++k)
    s << "<label for='pick-" << k << "'>window " << d.windows[k].index << " &middot; "
      << escape_html(series.format_time(series.timestamps[d.windows[k].origin])) << "</label>";
  s << "</div>\n";
  for (size_t k = 0; k < d.windows.size(); ++k) window_panel(s, a, series, d, k);
  if (d.targets > shown_channels(a, d))
    s << "<p class='note'>" << d.targets - shown_channels(a, d)
      << " more target columns not drawn (--max-channels).</p>\n";
  s << "</section>\n";
}

void metrics_section(Out& s, const data::TimeSeries& series, const PlotData& d) {
  s << "<section id='metrics'><h2>Metrics over the whole " << escape_html(d.split)
    << " split</h2>\n<p>" << d.split_windows << " windows, target rows " << d.split_targets.begin
    << ".." << d.split_targets.end << " ("
    << escape_html(series.format_time(series.timestamps[d.split_targets.begin])) << " .. "
    << escape_html(series.format_time(series.timestamps[d.split_targets.end - 1])) << ").</p>\n"
    << scores_table(d.split_scores, "every window of the " + d.split + " split");
  if (!d.coverage.empty()) {
    s << "<p class='coverage'>The intervals drawn (" << escape_html(d.intervals_of)
      << ") over the split:";
    for (const auto& [nominal, observed] : d.coverage)
      s << " the " << format_number(100 * nominal) << "% interval held "
        << format_number(100 * observed) << "% of the actual values;";
    s << " a calibrated interval holds about its nominal share.</p>\n";
  }
  s << units_note(d) << "</section>\n";
}

void future_section(Out& s, const PlotOptions& a, const data::TimeSeries& series,
                    const PlotData& d) {
  s << "<section id='future'><h2>Forecast beyond the end of the data</h2>\n";
  if (!d.future.unavailable.empty()) {
    s << "<p class='note'>Not drawn: " << escape_html(d.future.unavailable) << ".</p></section>\n";
    return;
  }
  s << "<p class='note'>What <code>attnfc predict</code> forecasts from the last " << d.context
    << " rows: " << escape_html(series.format_time(d.future.stamps.front())) << " .. "
    << escape_html(series.format_time(d.future.stamps.back())) << ", beside the baselines.</p>\n";
  for (size_t c = 0; c < shown_channels(a, d); ++c) s << future_chart(series, d, c);
  s << "</section>\n";
}

void training_section(Out& s, const PlotData& d) {
  s << "<section id='training'><h2>Training curves</h2>\n";
  if (d.curves.empty()) {
    s << "<p class='note'>No train_log.csv beside the model (--log names one).</p></section>\n";
    return;
  }
  s << "<p class='note'>Train loss and validation MSE (scaled units) per epoch. Epoch 0 is "
    << "the model before training, scored on validation like the epochs; the kept epoch is "
    << "the one whose model the run keeps (its best validation MSE).</p>\n"
    << curves_chart(d.curves);
  for (const TrainingCurve& c : d.curves)
    if (!c.note.empty()) s << "<p class='note'>" << escape_html(c.note) << "</p>\n";
  s << "</section>\n";
}

void attention_section(Out& s, const PlotData& d) {
  const AttentionView& v = d.attention;
  if (v.maps.empty()) return;
  s << "<section id='attention'><h2>Attention</h2>\n<p class='note'>Causal attention over " << v.n
    << " patches of " << v.patch_len << " steps"
    << (v.stride == v.patch_len ? "" : ", one every " + std::to_string(v.stride) + " steps,")
    << " on " << escape_html(v.about)
    << ". Row = query patch, column = key patch, each labelled with its first step relative "
    << "to the forecast origin (-" << v.context() << " = the first context step); a "
    << "cell's lag is the steps between them (hover a cell). Grey: the causal mask. One colour "
    << "scale for every map; the first query patch sees only itself (weight 1), so the scale "
    << "ends at the largest weight of the others. Below each "
    << "layer, each head's lift per lag over uniform causal attention (above 1: it prefers "
    << "that lag).</p>\n"
    << attention_html(v) << "</section>\n";
}

}  // namespace

std::string render_plot_page(const PlotOptions& a, const train::LoadedModel& lm,
                             const data::TimeSeries& series, const PlotData& d) {
  Out s;
  page_head(s, a, lm, series, d);
  forecasts_section(s, a, series, d);
  metrics_section(s, series, d);
  future_section(s, a, series, d);
  training_section(s, d);
  attention_section(s, d);
  s << "</body></html>\n";
  return s.str();
}

}  // namespace attnfc::cli
