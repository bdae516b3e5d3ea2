// attnfc score: a forecast file scored the way the M4 competition scores, beside the M4
// benchmarks computed from the same histories (train::m4).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/train/m4.hpp"
#include "attnfc/train/m4_intervals.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace attnfc::cli {

namespace {

using train::m4::IntervalScores;
using train::m4::MethodScores;
using train::m4::Series;

// One interval of the forecast file (its V-lo-N and V-hi-N columns), series in file order.
struct FileInterval {
  std::string label;  // N, as the column names write it
  double level = 0;   // N / 100
  std::vector<std::vector<double>> lower, upper;
};

// The three files lined up: one entry per forecast series, in the forecast file's order.
struct Panel {
  std::vector<std::string> ids;
  std::vector<std::vector<double>> forecasts, actuals, histories;
  std::vector<double> scales;
  std::vector<FileInterval> intervals;  // in increasing level
};

std::unordered_map<std::string, size_t> by_id(const std::vector<Series>& s) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < s.size(); ++i) index.emplace(s[i].id, i);
  return index;
}

std::string at(const std::string& file, const Series& s, const std::string& what) {
  return locate(file, static_cast<long>(s.line), 0, "id '" + s.id + "' " + what);
}

// Refuses ids that do not line up and forecasts of the wrong length, naming file and line.
void check_ids(const ScoreOptions& o, const std::vector<Series>& fc,
               const std::vector<Series>& actual, const std::vector<Series>& history) {
  const auto in_actual = by_id(actual), in_history = by_id(history), in_fc = by_id(fc);
  for (const Series& f : fc) {
    const auto a = in_actual.find(f.id);
    if (a == in_actual.end()) throw InputError(at(o.forecast, f, "is not in " + o.actual));
    const size_t want = actual[a->second].values.size();
    if (f.values.size() != want) {
      throw InputError(at(o.forecast, f,
                          "has " + std::to_string(f.values.size()) + " forecast values; " +
                              o.actual + " has " + std::to_string(want) + " for it"));
    }
    if (!in_history.contains(f.id)) throw InputError(at(o.forecast, f, "is not in " + o.history));
  }
  for (const Series& a : actual) {
    if (!in_fc.contains(a.id))
      throw InputError(at(o.actual, a, "has no forecast in " + o.forecast));
  }
}

// N of an interval column: a plain decimal number in (0, 100) ("80", "95", "97.5"), or -1.
double interval_label(const std::string& label) {
  const bool plain = !label.empty() &&
                     label.find_first_not_of("0123456789.") == std::string::npos &&
                     std::count(label.begin(), label.end(), '.') <= 1 && label.front() != '.' &&
                     label.back() != '.';
  const double n = plain ? std::strtod(label.c_str(), nullptr) : -1;
  return n > 0 && n < 100 ? n : -1;
}

// One interval from its two bound columns' series (file order); a lower bound above its
// upper bound is refused, naming the series and the step (the interval scores assume L <= U).
FileInterval bounds_of(const std::string& file, const std::vector<Series>& lower,
                       const std::vector<Series>& upper, const std::string& lo,
                       const std::string& hi, const std::string& label, double n) {
  FileInterval iv{label, n / 100, {}, {}};
  for (size_t i = 0; i < lower.size(); ++i) {
    for (size_t h = 0; h < lower[i].values.size(); ++h) {
      if (lower[i].values[h] <= upper[i].values[h]) continue;
      throw InputError(at(file, lower[i],
                          "step " + std::to_string(h + 1) + ": " + lo + " " +
                              std::to_string(lower[i].values[h]) + " is above " + hi + " " +
                              std::to_string(upper[i].values[h]) +
                              "; expected the lower bound at or below the upper"));
    }
    iv.lower.push_back(lower[i].values);
    iv.upper.push_back(upper[i].values);
  }
  return iv;
}

// The intervals `attnfc predict` wrote beside the point column V (NeuralForecast's names:
// V-lo-80 and V-hi-80 for the 80% interval): every N with both columns. A bound column
// whose N is not a number in (0, 100), or without its mirror, is refused.
std::vector<FileInterval> read_intervals(const ScoreOptions& o, char delimiter,
                                         const data::NumberFormat& number) {
  const train::m4::LongHeader header =
      train::m4::read_long_header(o.forecast, o.id_column, o.value_column, "", delimiter);
  const auto has = [&](const std::string& name) {
    return std::find(header.columns.begin(), header.columns.end(), name) != header.columns.end();
  };
  std::vector<std::string> bounds;                 // (lo, hi) column pairs
  std::vector<std::pair<std::string, double>> ns;  // each pair's N, as written and read
  for (const std::string& column : header.columns) {
    for (const char* side : {"-lo-", "-hi-"}) {
      const std::string prefix = header.value + side;
      if (column.rfind(prefix, 0) != 0) continue;
      const std::string label = column.substr(prefix.size());
      const std::string mirror = header.value + (side[1] == 'l' ? "-hi-" : "-lo-") + label;
      const double n = interval_label(label);
      if (n < 0)
        throw InputError(locate(o.forecast, 1, 0,
                                "column '" + column + "': expected " + prefix +
                                    "N with N a number in (0, 100), e.g. " + prefix + "95"));
      if (!has(mirror))
        throw InputError(locate(o.forecast, 1, 0,
                                "column '" + column + "' has no mirror '" + mirror +
                                    "'; expected both bounds of the interval"));
      if (side[1] == 'l') {  // each interval once, from its lower column
        bounds.insert(bounds.end(), {column, mirror});
        ns.emplace_back(label, n);
      }
    }
  }
  std::vector<FileInterval> out;
  if (bounds.empty()) return out;
  const std::vector<std::vector<Series>> series =
      train::m4::read_long_columns(o.forecast, o.id_column, bounds, delimiter, number);
  for (size_t k = 0; k < ns.size(); ++k)
    out.push_back(bounds_of(o.forecast, series[2 * k], series[2 * k + 1], bounds[2 * k],
                            bounds[2 * k + 1], ns[k].first, ns[k].second));
  std::sort(out.begin(), out.end(),
            [](const FileInterval& a, const FileInterval& b) { return a.level < b.level; });
  return out;
}

Panel line_up(const ScoreOptions& o) {
  const char delimiter = parse_delimiter(o.delimiter);
  const data::NumberFormat number =
      data::parse_number_format(o.decimal, o.thousands, delimiter, "--decimal", "--thousands");
  const auto read = [&](const std::string& path) {
    return train::m4::read_long(path, o.id_column, o.value_column, "", delimiter, number);
  };
  const std::vector<Series> fc = read(o.forecast), actual = read(o.actual),
                            history = read(o.history);
  check_ids(o, fc, actual, history);
  const auto in_actual = by_id(actual), in_history = by_id(history);
  Panel p;
  for (const Series& f : fc) {
    const Series& h = history[in_history.at(f.id)];
    if (h.values.size() < 2) throw InputError(at(o.history, h, "has fewer than 2 values"));
    const double scale = train::m4::mase_scale(h.values, o.season);
    if (!(scale > 0)) {
      throw InputError(
          at(o.history, h,
             "never changes at lag " + std::to_string(o.season) + ": its MASE is undefined"));
    }
    p.ids.push_back(f.id);
    p.forecasts.push_back(f.values);
    p.actuals.push_back(actual[in_actual.at(f.id)].values);
    p.histories.push_back(h.values);
    p.scales.push_back(scale);
  }
  p.intervals = read_intervals(o, delimiter, number);
  return p;
}

// One method's scores of one interval, with the interval's N as the file names it.
struct ScoredInterval {
  std::string label;
  IntervalScores s;
};

// Per interval of the forecast file: attnfc's, then seasonal naive with its own.
std::vector<ScoredInterval> score_intervals(const Panel& p, int season) {
  std::vector<ScoredInterval> out;
  for (const FileInterval& iv : p.intervals) {
    out.push_back({iv.label, train::m4::score_interval("attnfc", iv.level, iv.lower, iv.upper,
                                                       p.actuals, p.scales)});
    std::vector<std::vector<double>> lower, upper;
    for (size_t i = 0; i < p.histories.size(); ++i) {
      const int h = static_cast<int>(p.actuals[i].size());
      train::m4::Interval b = train::m4::snaive_interval(p.histories[i], h, season, iv.level);
      lower.push_back(std::move(b.lower));
      upper.push_back(std::move(b.upper));
    }
    out.push_back({iv.label, train::m4::score_interval("sNaive", iv.level, lower, upper, p.actuals,
                                                       p.scales)});
  }
  return out;
}

// attnfc's forecast file first, then the benchmarks from the histories; OWA vs Naive2.
std::vector<MethodScores> score_all(const Panel& p, int season) {
  using train::m4::Method;
  std::vector<MethodScores> scores = {
      train::m4::score_method("attnfc", p.forecasts, p.actuals, p.scales)};
  for (Method m : {Method::kNaive1, Method::kSNaive, Method::kNaive2, Method::kTheta}) {
    std::vector<std::vector<double>> f(p.histories.size());
    for (size_t i = 0; i < f.size(); ++i) {
      const int h = static_cast<int>(p.actuals[i].size());
      f[i] = train::m4::forecast(m, p.histories[i], h, season);
    }
    scores.push_back(train::m4::score_method(train::m4::method_name(m), f, p.actuals, p.scales));
  }
  const MethodScores naive2 = scores[3];
  train::m4::set_owa(scores, naive2);
  return scores;
}

void print_intervals(const std::vector<ScoredInterval>& scores) {
  if (scores.empty()) return;
  std::printf("intervals (M4's MSIS, scaled as MASE; coverage and ACD over every value)\n");
  std::printf("%-8s %6s %9s %9s %7s\n", "method", "level", "MSIS", "coverage", "ACD");
  for (const auto& [label, s] : scores)
    std::printf("%-8s %6s %9.3f %9.3f %7.3f\n", s.name.c_str(), label.c_str(), s.msis_avg,
                s.coverage, s.acd);
}

void print_table(const Panel& p, const std::vector<MethodScores>& scores, int season) {
  size_t values = 0;
  for (const auto& a : p.actuals) values += a.size();
  std::printf("%zu series, %zu forecast values, season %d (MASE scale and benchmarks)\n",
              p.ids.size(), values, season);
  std::printf("%-8s %9s %9s %7s\n", "method", "sMAPE", "MASE", "OWA");
  for (const MethodScores& s : scores) {
    std::printf("%-8s %9.3f %9.3f %7.3f\n", s.name.c_str(), s.smape_avg, s.mase_avg, s.owa);
  }
}

std::string per_series_csv(const Panel& p, const std::vector<MethodScores>& scores,
                           const std::vector<ScoredInterval>& intervals) {
  std::string csv = "id,horizon";
  for (const MethodScores& s : scores) csv += "," + s.name + "_smape," + s.name + "_mase";
  for (const auto& [label, s] : intervals) csv += "," + s.name + "_msis" + label;
  csv += "\n";
  char buf[64];
  for (size_t i = 0; i < p.ids.size(); ++i) {
    csv += p.ids[i] + "," + std::to_string(p.actuals[i].size());
    for (const MethodScores& s : scores) {
      std::snprintf(buf, sizeof buf, ",%.10g,%.10g", s.smape[i], s.mase[i]);
      csv += buf;
    }
    for (const auto& [label, s] : intervals) {
      std::snprintf(buf, sizeof buf, ",%.10g", s.msis[i]);
      csv += buf;
    }
    csv += "\n";
  }
  return csv;
}

nlohmann::json metrics_json(const ScoreOptions& o, const Panel& p,
                            const std::vector<MethodScores>& scores,
                            const std::vector<ScoredInterval>& intervals) {
  nlohmann::json j = {{"forecast", o.forecast},
                      {"actual", o.actual},
                      {"history", o.history},
                      {"season", o.season},
                      {"series", p.ids.size()}};
  for (const MethodScores& s : scores) {
    j["methods"][s.name] = {{"smape", s.smape_avg}, {"mase", s.mase_avg}, {"owa", s.owa}};
  }
  for (const auto& [label, s] : intervals) {
    j["intervals"][label][s.name] = {
        {"level", s.level}, {"msis", s.msis_avg}, {"coverage", s.coverage}, {"acd", s.acd}};
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < p.ids.size(); ++i) {
    nlohmann::json row = {{"id", p.ids[i]}, {"horizon", p.actuals[i].size()}};
    for (const MethodScores& s : scores) row[s.name] = {{"smape", s.smape[i]}, {"mase", s.mase[i]}};
    for (const auto& [label, s] : intervals) row[s.name]["msis" + label] = s.msis[i];
    rows.push_back(row);
  }
  j["per_series"] = rows;
  return j;
}

}  // namespace

int run_score(const ScoreOptions& o) {
  const Panel p = line_up(o);
  const std::vector<MethodScores> scores = score_all(p, o.season);
  const std::vector<ScoredInterval> intervals = score_intervals(p, o.season);
  print_table(p, scores, o.season);
  print_intervals(intervals);
  if (!o.per_series.empty()) {
    write_file_atomic(o.per_series, per_series_csv(p, scores, intervals));
    std::printf("per-series CSV -> %s\n", o.per_series.c_str());
  }
  if (!o.out.empty()) {
    write_file_atomic(o.out, metrics_json(o, p, scores, intervals).dump(2) + "\n");
    std::printf("JSON -> %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace attnfc::cli
