// attnfc attention --model M --input data.csv [--window END]: per layer and head, the
// attention matrix of one window over patches (terminal heatmap, CSV, JSON) and its lag
// profile, beside the input series' autocorrelation peak. The lag and autocorrelation
// math is causal_lag_profile / autocorrelation; this file gathers and formats.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attention_probe.hpp"
#include "attention_report.hpp"
#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/data/seasonality.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {

constexpr int kMaxHeatmap = 64;  // patches; wider maps do not fit a terminal

struct HeadReport {
  int layer = 0, head = 0;
  std::vector<float> weights;  // [N, N]
  LagProfile lags;
};

// Ten shades from empty to full, each row scaled by its own largest weight (so every
// query's preference shows, not only the early rows that see few keys); each cell is two
// characters wide so the map looks square. Row i = query patch i, column j <= i = key patch.
std::string heatmap_rows(const std::vector<float>& w, int n) {
  static const char kShades[] = " .:-=+*#%@";
  std::string out;
  for (int i = 0; i < n; ++i) {
    const float* row = w.data() + static_cast<size_t>(i) * n;
    const float mx = *std::max_element(row, row + i + 1);
    out += "    ";
    for (int j = 0; j <= i; ++j) {
      const float v = mx > 0 ? row[j] / mx : 0.0f;
      const char c = kShades[std::clamp(static_cast<int>(v * 9.0f + 0.5f), 0, 9)];
      out += c;
      out += c;
    }
    out += '\n';
  }
  return out;
}

std::string lift_line(const LagProfile& p, int max_lags) {
  std::string s;
  char buf[32];
  for (int l = 0; l < static_cast<int>(p.lift.size()) && l < max_lags; ++l) {
    std::snprintf(buf, sizeof buf, "%s%d:%.2f", l ? " " : "", l, p.lift[l]);
    s += buf;
  }
  if (static_cast<int>(p.lift.size()) > max_lags) s += " ...";
  return s;
}

// How a lag (in steps) relates to the series period: "" when there is nothing to
// compare, " (= the period)" / " (= 3 periods)" when exact, " (~ the period at patch
// resolution 16)" when within half a patch (patch tokens only see lags in multiples of
// the patch length), or " (not the period)".
std::string versus_period(long lag_steps, long period, int patch_len) {
  if (period <= 0 || lag_steps <= 0) return "";
  const long k = std::max(1L, std::lround(static_cast<double>(lag_steps) / period));
  const long off = std::labs(lag_steps - k * period);
  if (2 * off > patch_len) return " (not the period)";
  const std::string what = k == 1 ? "the period" : std::to_string(k) + " periods";
  if (off == 0) return " (= " + what + ")";
  return " (~ " + what + " at patch resolution " + std::to_string(patch_len) + ")";
}

// One window's attention, and the series it came from, ready to print or save.
struct Report {
  const data::TimeSeries* series = nullptr;
  int L = 0, P = 0, S = 0, N = 0, members = 1, layers = 0;  // S: steps between tokens
  size_t channel = 0;
  int64_t start = 0, end = 0, length = 0;
  int acf_peak = 0;         // the series' period (0 = none)
  std::vector<double> acf;  // of the first differences (data/seasonality.hpp)
  std::vector<HeadReport> heads;
};

// The network the report reads (--member), checked against the file.
const model::PatchTransformer& chosen_network(const AttentionReportOptions& o,
                                              const train::LoadedModel& lm) {
  const int members = static_cast<int>(lm.networks.size());
  if (o.member < 1 || o.member > members)
    throw InputError("--member: found " + std::to_string(o.member) + ", expected 1.." +
                     std::to_string(members) + " (" + o.model + " holds " +
                     std::to_string(members) + (members == 1 ? " network)" : " ensemble members)"));
  return *lm.networks[static_cast<size_t>(o.member - 1)];
}

// The window ending at --window in model units (scaled as in training), its attention
// maps, one HeadReport per layer and head, and the series' own period.
Report gather(const AttentionReportOptions& o, const train::LoadedModel& lm,
              const data::TimeSeries& series) {
  const model::PatchTransformer& net = chosen_network(o, lm);
  // The chosen network's own geometry: an ensemble's members may read contexts of different
  // lengths (train.ensemble_contexts).
  const model::ModelConfig& cfg = net.config();
  Report r;
  r.series = &series;
  r.members = static_cast<int>(lm.networks.size());
  r.L = cfg.context_length, r.P = cfg.patch_len, r.S = cfg.stride(), r.N = cfg.num_patches();
  const int64_t rows = static_cast<int64_t>(series.rows());
  const int64_t C = static_cast<int64_t>(series.num_channels());
  const bool mixed = cfg.channel_mode == ChannelMode::kMixed;
  r.channel = o.channel.empty() ? 0 : series.channel_index(o.channel);
  r.end = o.window_end < 0 ? rows : o.window_end;
  if (r.end < 1 || r.end > rows)
    throw InputError("--window: expected an end row in 1.." + std::to_string(rows) + " (" +
                     o.input + " has " + std::to_string(rows) + " rows), got " +
                     std::to_string(o.window_end));
  r.start = std::max<int64_t>(0, r.end - r.L), r.length = r.end - r.start;
  // [length, C] (mixed) or [length, 1].
  const int64_t tc = mixed ? C : 1;
  std::vector<float> ctx(static_cast<size_t>(r.length * tc));
  std::vector<uint8_t> obs(ctx.size());
  for (int64_t t = 0; t < r.length; ++t)
    for (int64_t c = 0; c < tc; ++c) {
      const size_t src_c = mixed ? static_cast<size_t>(c) : r.channel;
      ctx[t * tc + c] = series.value(r.start + t, src_c);
      obs[t * tc + c] = series.is_observed(r.start + t, src_c) ? 1 : 0;
    }
  if (std::none_of(obs.begin(), obs.end(), [](uint8_t v) { return v != 0; }))
    throw InputError("--window: " + o.input + ": the window of rows " + std::to_string(r.start) +
                     ".." + std::to_string(r.end) + " holds no value of " +
                     (mixed ? std::string("any column") : "'" + series.channels[r.channel] + "'") +
                     "; expected a window with one (--window END picks another)");
  const data::Scaler scaler = lm.scaler_of(series, {0, series.rows()}, "attention");
  if (mixed)
    scaler.transform(ctx.data(), static_cast<size_t>(r.length));
  else
    scaler.transform_channel(ctx.data(), static_cast<size_t>(r.length), r.channel);
  const std::vector<std::vector<float>> maps = net.attention_maps(ctx.data(), obs.data(), r.length);
  r.layers = static_cast<int>(maps.size());
  const int N = r.N;
  for (size_t layer = 0; layer < maps.size(); ++layer) {
    const int H = static_cast<int>(maps[layer].size() / (static_cast<size_t>(N) * N));
    for (int h = 0; h < H; ++h) {
      HeadReport hr;
      hr.layer = static_cast<int>(layer);
      hr.head = h;
      const float* w = maps[layer].data() + static_cast<size_t>(h) * N * N;
      hr.weights.assign(w, w + static_cast<size_t>(N) * N);
      hr.lags = causal_lag_profile(hr.weights.data(), N);
      r.heads.push_back(std::move(hr));
    }
  }
  // The series' own period: the chosen channel over the whole input.
  std::vector<float> col(static_cast<size_t>(rows));
  for (int64_t t = 0; t < rows; ++t)
    col[t] = series.is_observed(t, r.channel) ? series.value(t, r.channel) : NAN;
  r.acf_peak = data::seasonal_period(col.data(), rows, 1, r.L, &r.acf);
  return r;
}

void print_header(const AttentionReportOptions& o, const Report& r, int n_heads) {
  const data::TimeSeries& series = *r.series;
  std::printf("Model %s: %d layers x %d heads; context %d steps = %d patches of %d%s.\n",
              o.model.c_str(), r.layers, n_heads, r.L, r.N, r.P,
              r.S == r.P ? "" : (", one every " + std::to_string(r.S) + " steps").c_str());
  if (r.members > 1)
    std::printf(
        "An ensemble of %d networks (its forecast is their mean); these are member %d's "
        "maps (--member).\n",
        r.members, o.member);
  std::printf("Window: rows %lld..%lld (%s .. %s)%s, channel %s.\n",
              static_cast<long long>(r.start), static_cast<long long>(r.end - 1),
              series.format_time(series.timestamps[r.start]).c_str(),
              series.format_time(series.timestamps[r.end - 1]).c_str(),
              r.length < r.L ? " (shorter than the context: padded in front)" : "",
              series.channels[r.channel].c_str());
  if (r.acf_peak > 0)
    std::printf("Series autocorrelation peak: lag %d steps (r = %.2f, of the first differences).\n",
                r.acf_peak, r.acf[r.acf_peak]);
  else
    std::printf("Series autocorrelation: no significant peak up to lag %zu (no clear period).\n",
                r.acf.size() - 1);
  std::printf("Lags are in patches (x %d steps); lift > 1 = more attention than uniform.\n", r.S);
  if (o.heatmap && r.N > kMaxHeatmap)
    std::printf("(%d patches: too wide for a terminal heatmap; use --csv or --json.)\n", r.N);
  std::printf("\n");
}

void print_heads(const AttentionReportOptions& o, const Report& rep) {
  const int P = rep.S, N = rep.N;  // a lag of one patch is one stride
  for (const HeadReport& r : rep.heads) {
    const long steps = static_cast<long>(r.lags.dominant_lag) * P;
    std::printf("layer %d head %d: ", r.layer, r.head);
    if (r.lags.dominant_lag == 0)
      std::printf("attends only to its own patch\n");
    else
      std::printf("dominant lag %d patches = %ld steps (lift %.2f)\n", r.lags.dominant_lag, steps,
                  r.lags.lift[r.lags.dominant_lag]);
    if (r.lags.lift_period > 0)
      std::printf("  its lift repeats every %d patches = %ld steps\n", r.lags.lift_period,
                  static_cast<long>(r.lags.lift_period) * P);
    std::printf("  lift by lag: %s\n", lift_line(r.lags, 16).c_str());
    if (o.heatmap && N <= kMaxHeatmap) std::fputs(heatmap_rows(r.weights, N).c_str(), stdout);
  }

  // Summary: the heads a user should look at, sharpest lag preference first.
  std::printf("\nHeads by how sharply they prefer one lag");
  if (rep.acf_peak > 0) std::printf(", against the series' period of %d steps", rep.acf_peak);
  std::printf(":\n");
  std::vector<const HeadReport*> order;
  for (const HeadReport& r : rep.heads) order.push_back(&r);
  auto peak_lift = [](const HeadReport* r) {
    return r->lags.dominant_lag ? r->lags.lift[r->lags.dominant_lag] : 0.0;
  };
  std::stable_sort(order.begin(), order.end(), [&](const HeadReport* a, const HeadReport* b) {
    return peak_lift(a) > peak_lift(b);
  });
  auto verdict = [&](long steps) { return versus_period(steps, rep.acf_peak, P); };
  for (const HeadReport* r : order) {
    const long lag = static_cast<long>(r->lags.dominant_lag) * P;
    const long period = static_cast<long>(r->lags.lift_period) * P;
    std::printf("  layer %d head %d: lift %.2f at lag %ld steps%s", r->layer, r->head, peak_lift(r),
                lag, verdict(lag).c_str());
    if (period > 0)
      std::printf("; lift repeats every %ld steps%s", period, verdict(period).c_str());
    std::printf("\n");
  }
}

void write_csv(const std::string& path, const Report& rep) {
  const int N = rep.N;
  std::string csv = "layer,head,query_patch,key_patch,weight\n";
  char buf[96];
  for (const HeadReport& r : rep.heads)
    for (int i = 0; i < N; ++i)
      for (int j = 0; j <= i; ++j) {
        std::snprintf(buf, sizeof buf, "%d,%d,%d,%d,%.9g\n", r.layer, r.head, i, j,
                      r.weights[static_cast<size_t>(i) * N + j]);
        csv += buf;
      }
  write_file_atomic(path, csv);
}

void write_json(const AttentionReportOptions& o, const Report& rep) {
  const data::TimeSeries& series = *rep.series;
  const int P = rep.S, N = rep.N;  // a lag of one patch is one stride
  const int64_t start = rep.start, end = rep.end;
  nlohmann::json j;
  j["model"] = o.model;
  j["input"] = o.input;
  j["channel"] = series.channels[rep.channel];
  j["window"] = {{"start_row", start},
                 {"end_row", end - 1},
                 {"start_time", series.format_time(series.timestamps[start])},
                 {"end_time", series.format_time(series.timestamps[end - 1])}};
  j["patch_len"] = rep.P;
  j["patch_stride"] = rep.S;
  j["num_patches"] = N;
  j["autocorrelation_peak_steps"] = rep.acf_peak;
  j["autocorrelation_of_differences"] = rep.acf;
  nlohmann::json layers = nlohmann::json::array();
  for (const HeadReport& r : rep.heads) {
    if (r.layer >= static_cast<int>(layers.size()))
      layers.push_back({{"heads", nlohmann::json::array()}});
    nlohmann::json w = nlohmann::json::array();
    for (int i = 0; i < N; ++i)
      w.push_back(std::vector<float>(r.weights.begin() + static_cast<long>(i) * N,
                                     r.weights.begin() + static_cast<long>(i + 1) * N));
    layers[r.layer]["heads"].push_back({{"head", r.head},
                                        {"dominant_lag_patches", r.lags.dominant_lag},
                                        {"dominant_lag_steps", r.lags.dominant_lag * P},
                                        {"lift_period_patches", r.lags.lift_period},
                                        {"lift_period_steps", r.lags.lift_period * P},
                                        {"lag_mass", r.lags.mass},
                                        {"lag_lift", r.lags.lift},
                                        {"weights", w}});
  }
  j["layers"] = layers;
  write_file_atomic(o.json_path, j.dump(1) + "\n");
}

}  // namespace

int run_attention_report(const AttentionReportOptions& o) {
  if (o.model.empty() || o.input.empty())
    throw InputError(
        "attention: the report needs --model MODEL.safetensors and --input DATA.csv "
        "(or run 'attnfc attention demo')");
  const train::LoadedModel lm = train::LoadedModel::load(o.model);
  const data::TimeSeries series = lm.read_series(o.input);
  const Report r = gather(o, lm, series);
  print_header(o, r, chosen_network(o, lm).config().n_heads);
  print_heads(o, r);
  if (!o.csv_path.empty()) write_csv(o.csv_path, r);
  if (!o.json_path.empty()) write_json(o, r);
  return 0;
}

}  // namespace attnfc::cli
