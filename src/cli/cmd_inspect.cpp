// attnfc inspect: what attnfc makes of a CSV file, through the same reader that
// train and predict use (so what inspect accepts, they accept).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace attnfc::cli {

namespace {

using namespace attnfc::data;

struct Stats {
  double min = 0, max = 0, mean = 0, sd = 0;
  size_t count = 0;
};

Stats channel_stats(const TimeSeries& s, size_t c) {
  Stats st;
  double sum = 0;
  for (size_t r = 0; r < s.rows(); ++r) {
    if (!s.is_observed(r, c)) continue;
    const double v = s.value(r, c);
    if (st.count == 0 || v < st.min) st.min = v;
    if (st.count == 0 || v > st.max) st.max = v;
    sum += v;
    ++st.count;
  }
  if (st.count == 0) return st;
  st.mean = sum / static_cast<double>(st.count);
  double ss = 0;
  for (size_t r = 0; r < s.rows(); ++r) {
    if (s.is_observed(r, c)) ss += (s.value(r, c) - st.mean) * (s.value(r, c) - st.mean);
  }
  st.sd = std::sqrt(ss / static_cast<double>(st.count));
  return st;
}

// One block character per bin of rows, from the bin's mean of observed values,
// scaled between the lowest and highest bin mean so the shape fills the height;
// a blank where a bin has no observed value at all.
std::string sparkline(const TimeSeries& s, size_t c, size_t width) {
  static const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const size_t n = s.rows();
  width = std::max<size_t>(1, std::min(width, n));
  std::vector<double> mean(width, std::nan(""));
  double lo = 0, hi = 0;
  bool any = false;
  for (size_t b = 0; b < width; ++b) {
    double sum = 0;
    size_t k = 0;
    for (size_t r = b * n / width; r < (b + 1) * n / width; ++r) {
      if (s.is_observed(r, c)) sum += s.value(r, c), ++k;
    }
    if (k == 0) continue;
    mean[b] = sum / static_cast<double>(k);
    lo = any ? std::min(lo, mean[b]) : mean[b];
    hi = any ? std::max(hi, mean[b]) : mean[b];
    any = true;
  }
  std::string out;
  for (size_t b = 0; b < width; ++b) {
    if (std::isnan(mean[b])) {
      out += ' ';
      continue;
    }
    const double x = hi > lo ? (mean[b] - lo) / (hi - lo) : 0.5;
    out += kBlocks[std::clamp(static_cast<int>(x * 8.0), 0, 7)];
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string pad(std::string s, size_t width) {
  // Pads by bytes; names are usually ASCII, and a long one just pushes the row right.
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// --time-column: "year,month,day,hour" names composite time columns unless one column
// has that name.
void choose_time_columns(const InspectOptions& o, const CsvTable& table, CsvOptions& opt) {
  if (o.time_column.empty()) return;
  if (o.time_column.find(',') == std::string::npos || table.find_column(o.time_column)) {
    opt.time_column = o.time_column;
    return;
  }
  size_t start = 0;
  while (start <= o.time_column.size()) {
    const size_t comma = std::min(o.time_column.find(',', start), o.time_column.size());
    opt.time_columns.push_back(o.time_column.substr(start, comma - start));
    start = comma + 1;
  }
}

// A panel's series: how many, and their lengths.
void print_series(const TimeSeries& s) {
  if (s.segments.empty()) return;
  std::vector<size_t> lengths;
  for (const SeriesSegment& g : s.segments) lengths.push_back(g.rows());
  std::sort(lengths.begin(), lengths.end());
  std::printf("series     %zu (id column %s; rows per series: min %zu, median %zu, max %zu)\n",
              lengths.size(), s.id_column.c_str(), lengths.front(), lengths[lengths.size() / 2],
              lengths.back());
}

// The file, its time axis, gaps and missing values.
void print_overview(const InspectOptions& o, const CsvTable& table, const TimeSeries& s,
                    MissingPolicy policy) {
  std::printf("file       %s\n", input_name(o.path).c_str());
  std::printf("rows       %zu\n", s.rows());
  print_series(s);
  std::string time_cols;
  for (const std::string& t : s.time_columns) time_cols += (time_cols.empty() ? "" : ", ") + t;
  // A panel's times restart with every series: show the earliest and the latest.
  const auto [first, last] = s.segments.empty()
                                 ? std::pair(s.timestamps.begin(), s.timestamps.end() - 1)
                                 : std::minmax_element(s.timestamps.begin(), s.timestamps.end());
  std::printf("time       %s%s: %s .. %s\n", time_cols.c_str(),
              s.time_columns.size() > 1 ? " (composite)" : "", s.format_time(*first).c_str(),
              s.format_time(*last).c_str());
  std::printf("frequency  %s (%s)\n", s.frequency.name().c_str(),
              s.frequency_inferred ? "inferred" : "given");
  if (s.gaps.empty()) {
    std::printf("gaps       none\n");
  } else {
    std::printf("gaps       %zu (%lld missing periods%s)\n", s.gaps.size(),
                static_cast<long long>(s.total_missing_periods),
                s.off_grid_steps
                    ? (", " + std::to_string(s.off_grid_steps) + " off the grid").c_str()
                    : "");
    for (size_t i = 0; i < s.gaps.size() && i < 5; ++i) {
      const Gap& g = s.gaps[i];
      const std::string series =
          s.segments.empty() ? "" : " (series " + s.segments[s.segment_index(g.row)].id + ")";
      std::printf("           line %llu%s: %s -> %s (%s)\n",
                  static_cast<unsigned long long>(table.line_of(s.table_row(g.row))),
                  series.c_str(), s.format_time(g.before).c_str(), s.format_time(g.after).c_str(),
                  g.missing_periods < 0 ? "off the grid"
                                        : (std::to_string(g.missing_periods) + " missing").c_str());
    }
    if (s.gaps.size() > 5) std::printf("           ... %zu more\n", s.gaps.size() - 5);
  }
  std::printf("missing    %zu value%s", s.total_missing(), s.total_missing() == 1 ? "" : "s");
  if (s.total_missing() == 0) {
    std::printf("\n");
  } else if (policy == MissingPolicy::kError) {
    std::printf(
        " (train refuses them unless the config sets data.missing to ffill, interpolate or "
        "mask; preview one here with --missing)\n");
  } else {
    std::printf(" (filled by policy '%s')\n", enum_name(policy));
  }
}

// One line per column: kind, role, missing values, statistics and a sparkline.
void print_columns(const InspectOptions& o, const CsvTable& table, const TimeSeries& s,
                   const std::vector<ColumnSummary>& cols) {
  std::printf("\ncolumns    %zu (%zu value channel%s)\n", cols.size(), s.num_channels(),
              s.num_channels() == 1 ? "" : "s");
  std::printf("  %-3s %s %-8s %-6s %-14s %-9s %-9s %-9s %s\n", "#", pad("name", 10).c_str(), "type",
              "role", "missing", "min", "max", "mean", "std");
  for (size_t c = 0; c < cols.size(); ++c) {
    const ColumnSummary& col = cols[c];
    const std::string& name = table.header()[c];
    const bool is_time =
        std::find(s.time_columns.begin(), s.time_columns.end(), name) != s.time_columns.end();
    const auto ch = std::find(s.channels.begin(), s.channels.end(), name);
    std::string role = is_time                                       ? "time"
                       : ch != s.channels.end()                      ? "value"
                       : name == s.id_column && !s.id_column.empty() ? "id"
                                                                     : "-";
    std::printf("  %-3zu %s %-8s %-6s ", c + 1, pad(name.empty() ? "(unnamed)" : name, 10).c_str(),
                enum_name(col.kind), role.c_str());
    std::string miss = std::to_string(col.missing);
    if (col.missing) {
      miss += " (" + num(100.0 * static_cast<double>(col.missing) / static_cast<double>(s.rows())) +
              "%)";
    }
    std::printf("%-14s ", miss.c_str());
    if (ch != s.channels.end()) {
      const size_t k = static_cast<size_t>(ch - s.channels.begin());
      const Stats st = channel_stats(s, k);
      std::printf("%-9s %-9s %-9s %-9s %s\n", num(st.min).c_str(), num(st.max).c_str(),
                  num(st.mean).c_str(), num(st.sd).c_str(),
                  sparkline(s, k, static_cast<size_t>(o.width)).c_str());
    } else if (role == "id") {
      std::printf("series id\n");
    } else if (col.kind == ColumnKind::kText) {
      std::printf("e.g. '%s' (line %llu)\n", col.first_text.c_str(),
                  static_cast<unsigned long long>(table.line_of(col.first_text_row)));
    } else {
      std::printf("%s\n", is_time ? "" : "not a value column (name it with --columns to use it)");
    }
  }
}

}  // namespace

int run_inspect(const InspectOptions& o) {
  CsvOptions opt;
  opt.path = o.path;
  opt.delimiter = parse_delimiter(o.delimiter);
  opt.value_columns = o.columns;
  opt.frequency = o.frequency;
  opt.id_column = o.id_column;
  opt.number =
      parse_number_format(o.decimal, o.thousands, opt.delimiter, "--decimal", "--thousands");
  opt.date_format = o.date_format;
  opt.date_format_setting = "--date-format";
  const MissingPolicy policy = parse_missing_policy(o.missing);
  // Inspect reports missing values instead of refusing them; the note below
  // says what the chosen policy will do in train/predict.
  opt.missing = policy == MissingPolicy::kError ? MissingPolicy::kMask : policy;
  const CsvTable table = CsvTable::read_file(o.path, opt.delimiter);
  choose_time_columns(o, table, opt);
  const TimeSeries s = load_series(table, opt);
  print_overview(o, table, s, policy);
  print_columns(o, table, s, summarize_columns(table, opt.number, opt.date_format));
  return 0;
}

}  // namespace attnfc::cli
