// attnfc plot: the axes' arithmetic (plot_axis.hpp, linked into this suite), the page's
// content on a micro run (windows, picker, dates, markers, legends, tables that agree with
// `attnfc evaluate`, the forecast after the data, curves, heatmaps) and every option error
// as one line with exit 2. How the page renders is tests/browser/plot_in_chromium.sh.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "attnfc/data/time.hpp"
#include "cli_run.hpp"
#include "plot_axis.hpp"

using attnfc::cli::format_number;
using attnfc::cli::log_ticks;
using attnfc::cli::time_ticks;
using attnfc::cli::value_ticks;
using attnfc::data::to_unix_seconds;
using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A micro run with a linear start (so metrics.json records epoch 0), trained once.
struct PlotRun : cli_test::ScratchDir {
  std::string csv, model;
  PlotRun() : ScratchDir("attnfc_cli_plot_") {
    csv = cli_test::write_etth1_head(dir, 701);
    std::ofstream(dir + "/plot.json") << R"({
  "data": {"path": ")" + csv + R"(", "columns": ["OT"],
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "linear_lookback": 32},
  "train": {"epochs": 2, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3}
})";
    const Run r = run_attnfc("train --config " + dir + "/plot.json --out " + dir + "/run");
    REQUIRE_MESSAGE(r.code == 0, r.out);
    model = dir + "/run/model.safetensors";
  }
};

const PlotRun& plot_run() {
  static const PlotRun r;
  return r;
}

std::string plot(const std::string& options, const std::string& name = "page.html") {
  const PlotRun& r = plot_run();
  const std::string out = r.dir + "/" + name;
  const Run p = run_attnfc("plot -m " + r.model + " -i " + r.csv + " -o " + out + " " + options);
  REQUIRE_MESSAGE(p.code == 0, p.out);
  return slurp(out);
}

// One error line (spdlog's "[error] ...") and exit 2.
void refused(const std::string& options, const std::string& message) {
  const PlotRun& r = plot_run();
  const Run p = run_attnfc("plot -m " + r.model + " -i " + r.csv + " -o " + r.dir +
                           "/refused.html " + options);
  CAPTURE(options);
  CHECK(p.code == 2);
  CHECK_MESSAGE(contains(p.out, message), p.out);
  CHECK(count(p.out, "\n") == 1);
}

}  // namespace

TEST_CASE("plot axes: calendar ticks at a round step, labelled with the coarser unit") {
  // Two days of hours: every 6 hours from midnight, dates under midnight and the first tick.
  const int64_t from = to_unix_seconds(2016, 7, 30, 3), to = to_unix_seconds(2016, 8, 1, 2);
  const auto hours = time_ticks(from, to, 10);
  REQUIRE(hours.size() == 8);
  CHECK(hours[0].at == to_unix_seconds(2016, 7, 30, 6));
  CHECK(hours[0].label == "06:00");
  CHECK(hours[0].context == "Jul 30 2016");
  CHECK(hours[1].context.empty());
  CHECK(hours[3].label == "00:00");
  CHECK(hours[3].context == "Jul 31");
  CHECK(hours[7].context == "Aug 1");
  // Months over five years: whole years, then months when fewer fit.
  const int64_t y0 = to_unix_seconds(2012, 3, 1), y1 = to_unix_seconds(2017, 2, 1);
  const auto years = time_ticks(y0, y1, 8);
  REQUIRE(years.size() == 5);
  CHECK(years[0].label == "2013");
  CHECK(years[0].at == to_unix_seconds(2013, 1, 1));
  const auto quarters = time_ticks(y0, to_unix_seconds(2013, 3, 1), 6);  // 7 every 2 months
  REQUIRE(quarters.size() == 4);
  CHECK(quarters[0].label == "Apr");
  CHECK(quarters[0].context == "2012");
  CHECK(quarters[3].label == "Jan");
  CHECK(quarters[3].context == "2013");
  // Weeks start on Mondays.
  const auto weeks = time_ticks(to_unix_seconds(2016, 7, 1), to_unix_seconds(2016, 8, 20), 8);
  REQUIRE(!weeks.empty());
  for (const auto& t : weeks) CHECK(attnfc::data::weekday(t.at) == 0);
}

TEST_CASE("plot axes: any range gets at most max_ticks increasing ticks inside it") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const int64_t from = static_cast<int64_t>(rng() % 4000000000ULL);
    const int64_t span = static_cast<int64_t>(rng() % (1ULL << (8 + rng() % 27)));
    const int max_ticks = 2 + static_cast<int>(rng() % 12);
    const auto ticks = time_ticks(from, from + span, max_ticks);
    CAPTURE(from);
    CAPTURE(span);
    CAPTURE(max_ticks);
    REQUIRE(ticks.size() <= static_cast<size_t>(max_ticks));
    for (size_t k = 0; k < ticks.size(); ++k) {
      CHECK(ticks[k].at >= from);
      CHECK(ticks[k].at <= from + span);
      CHECK(!ticks[k].label.empty());
      if (k > 0) CHECK(ticks[k].at > ticks[k - 1].at);
    }
    if (span >= 3600) CHECK(ticks.size() >= std::min<size_t>(2, max_ticks));
  }
}

TEST_CASE("plot axes: round value ticks, decades on a log axis, numbers as a reader writes them") {
  CHECK(value_ticks(0.158, 0.53, 5) == std::vector<double>{0.2, 0.3, 0.4, 0.5});
  CHECK(value_ticks(-3, 7, 6) == std::vector<double>{-2, 0, 2, 4, 6});
  for (const double v : value_ticks(31.7, 40.4, 6)) CHECK(v == std::floor(v));
  CHECK(log_ticks(0.01, 10, 6) == std::vector<double>{0.01, 0.1, 1, 10});
  CHECK(log_ticks(0.15, 0.6, 6) == std::vector<double>{0.2, 0.5});
  CHECK(format_number(0.15749) == "0.1575");
  CHECK(format_number(1250) == "1250");
  CHECK(format_number(1.5e6) == "1.5e+06");
  CHECK(format_number(-0.0) == "0");
  CHECK(attnfc::cli::viridis(0) == "#440154");
  CHECK(attnfc::cli::viridis(1) == "#fde725");
  CHECK(attnfc::cli::viridis(7) == "#fde725");
  CHECK(attnfc::cli::escape_html("a<b & 'c'") == "a&lt;b &amp; &#39;c&#39;");
}

TEST_CASE("plot: windows with a picker, dates, markers, baselines, tables, curves, heatmaps") {
  const std::string html = plot("--windows 3");
  CHECK(!contains(html, "<script"));
  // Three windows spread over the 113 of the test split, the last one shown first.
  CHECK(count(html, "<div class='window' id='window-") == 3);
  CHECK(contains(html, "data-window='0'"));
  CHECK(contains(html, "data-window='56'"));
  CHECK(contains(html, "id='pick-2' checked"));
  CHECK(count(html, "<label for='pick-") == 3);
  CHECK(contains(html, "<label for='pick-2'>window 112 &middot; 2016-07-29 10:00:00</label>"));
  // A time axis in dates and hours, the origin marked in every window and after the data.
  CHECK(contains(html, ">Jul 29 2016</text>"));
  CHECK(contains(html, ">12:00</text>"));
  CHECK(count(html, "<g class='origin-marker'>") == 4);
  for (const char* s : {"history", "actual", "attnfc", "nlinear", "repeat-last"})
    CHECK(count(html, std::string("<g class='legend-entry' data-series='") + s + "'>") >= 3);
  CHECK(contains(html, "attnfc  MAE "));
  // The window tables and the split's, every forecaster evaluate scores.
  CHECK(count(html, "<table class='metrics'>") == 4);
  for (const char* m : {"attnfc", "linear-start", "repeat-last", "nlinear"})
    CHECK(count(html, std::string("data-model='") + m + "'>") == 4);
  CHECK(contains(html, "Forecast beyond the end of the data"));
  CHECK(contains(html, "2016-07-30 04:00:00 .. 2016-07-30 11:00:00"));  // predict's steps
  CHECK(contains(html, "<g class='kept-marker'>"));
  CHECK(contains(html, "<g class='epoch0-marker'>"));
  CHECK(contains(html, "epoch 0 (linear start): "));
  CHECK(count(html, "<svg class='heatmap'") == 2);
  CHECK(contains(html, "<svg class='colour-scale'"));
  CHECK(contains(html, "key patch (first step)"));
  CHECK(contains(html, ">-32</text>"));  // the first context step
  CHECK(contains(html, "lag (steps from key patch to query patch)"));
}

TEST_CASE("plot: the split's table holds evaluate's numbers") {
  const PlotRun& r = plot_run();
  const std::string html = plot("--windows 1");
  const Run e = run_attnfc("evaluate -m " + r.model + " -i " + r.csv + " --split test --json " +
                           r.dir + "/eval.json");
  REQUIRE_MESSAGE(e.code == 0, e.out);
  const auto j = nlohmann::json::parse(slurp(r.dir + "/eval.json"));
  const size_t table = html.find("every window of the test split");
  REQUIRE(table != std::string::npos);
  for (const char* m : {"attnfc", "nlinear", "repeat-last"}) {
    const auto& units = j["test"]["models"][m];
    const size_t row = html.find(std::string("data-model='") + m + "'>", table);
    REQUIRE(row != std::string::npos);
    const std::string cells = html.substr(row, html.find("</tr>", row) - row);
    CAPTURE(cells);
    for (const char* unit : {"original", "scaled"})
      for (const char* k : {"mse", "mae"})
        CHECK(contains(cells, ">" + format_number(units[unit][k].get<double>()) + "</td>"));
  }
  // One window only: no other panel, and it is the split's last.
  CHECK(count(html, "<div class='window' id='window-") == 1);
  CHECK(contains(html, "data-window='112'"));
}

TEST_CASE("plot: --window, --history and --max-channels shape the page") {
  const std::string html = plot("--window 7 --windows 1 --history 40 --max-channels 1");
  CHECK(contains(html, "data-window='7'"));
  CHECK(contains(html, "<g class='context-marker'>"));  // 40 steps reach before the context
  CHECK(contains(html, "the last 40 of those steps"));
}

TEST_CASE("plot: bad options are one line and exit 2") {
  const PlotRun& r = plot_run();
  refused("--window -5", "--window: found -5, expected a window index from 0, or -1");
  refused("--window 113", "--window: found 113, expected 0..112");
  refused("--windows 0", "--windows: found 0, expected 1..50");
  refused("--windows 51", "--windows: found 51, expected 1..50");
  refused("--max-channels 0", "--max-channels: found 0, expected 1 or more");
  refused("--history 0", "--history: found 0, expected 1 or more steps");
  refused("--history 600", "--history: found 600, expected 1..");
  refused("--log " + r.dir + "/missing.csv", "missing.csv: file not found");
  const Run over = run_attnfc("plot -m " + r.model + " -i " + r.csv + " -o " + r.csv);
  CHECK(over.code == 2);
  CHECK(contains(over.out, "is the same file as --input"));
}

TEST_CASE("plot: epoch 0 is marked for a run without a linear start too") {
  const PlotRun& base = plot_run();
  const std::string dir = base.dir + "/no_start";
  std::ofstream(base.dir + "/no_start.json") << R"({
  "data": {"path": ")" + base.csv + R"(", "columns": ["OT"],
           "split": {"train_rows": 450, "val_rows": 120, "test_rows": 120}},
  "model": {"context_length": 32, "patch_len": 8, "horizon": 8, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "linear_lookback": 0},
  "train": {"epochs": 2, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3}
})";
  const Run r = run_attnfc("train --config " + base.dir + "/no_start.json --out " + dir);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  CHECK(nlohmann::json::parse(slurp(dir + "/metrics.json"))["initial_val_loss"].is_number());
  const Run p = run_attnfc("plot -m " + dir + "/model.safetensors -i " + base.csv + " -o " + dir +
                           "/page.html");
  REQUIRE_MESSAGE(p.code == 0, p.out);
  const std::string html = slurp(dir + "/page.html");
  CHECK(contains(html, "<g class='epoch0-marker'>"));
  CHECK(contains(html, "epoch 0 (initial model): "));
  CHECK_FALSE(contains(html, "epoch 0 not marked"));
}
