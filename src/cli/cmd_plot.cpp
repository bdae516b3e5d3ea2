// attnfc plot: one self-contained HTML page (plot_page.hpp) of what plot_data.hpp gathers:
// the options are checked here, before anything is read.
#include <cstdio>
#include <filesystem>
#include <string>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "plot_data.hpp"
#include "plot_page.hpp"

namespace attnfc::cli {

namespace {

namespace fs = std::filesystem;

// The largest --windows: each window adds its charts to the page, and fifty already make a
// page of several megabytes for a many-column file.
constexpr int kMaxWindows = 50;

// The options that need no data: one line naming the option, what was found and what was
// expected (InputError, exit 2).
void check_options(const PlotOptions& a) {
  if (a.window < -1)
    throw InputError("--window: found " + std::to_string(a.window) +
                     ", expected a window index from 0, or -1 for the last window of the split");
  if (a.windows < 1 || a.windows > kMaxWindows)
    throw InputError("--windows: found " + std::to_string(a.windows) + ", expected 1.." +
                     std::to_string(kMaxWindows));
  if (a.history && *a.history < 1)
    throw InputError("--history: found " + std::to_string(*a.history) +
                     ", expected 1 or more steps before the forecast origin");
  if (a.max_channels < 1)
    throw InputError("--max-channels: found " + std::to_string(a.max_channels) +
                     ", expected 1 or more columns to draw");
  if (!a.log.empty() && !fs::exists(a.log))
    throw InputError("--log " + a.log + ": file not found; expected a train_log.csv");
}

}  // namespace

int run_plot(const PlotOptions& a) {
  check_options(a);
  const std::string out =
      a.output.empty() ? (fs::path(a.model).parent_path() / "plot.html").string() : a.output;
  refuse_output_over_inputs("--output", out,
                            {{"--input", a.input}, {"--model", a.model}, {"--log", a.log}});
  const train::LoadedModel lm = train::LoadedModel::load(a.model);
  const data::TimeSeries series = lm.read_series(a.input);
  const PlotData d = gather_plot_data(a, lm, series);
  write_file_atomic(out, render_plot_page(a, lm, series, d));
  std::printf("plot -> %s\n", out.c_str());
  return 0;
}

}  // namespace attnfc::cli
