#pragma once
// Each subcommand lives in its own src/cli/cmd_<name>.cpp as an options struct and a
// run_<name>; flags.cpp binds the struct's fields to the subcommand's flags on the root
// app. CLI11 costs seconds of compile per file that includes it, so only main.cpp and
// flags.cpp do: this header names CLI::App without defining it.
// A run_<name> (the handler) returns the process exit code:
//   0 success, 1 runtime failure, 2 bad usage or input (InputError).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace attnfc::cli {

// Called after parsing succeeds, for the subcommand the user chose.
using Handler = std::function<int()>;

// Registration hooks; main() calls each one once.
void register_version_info(CLI::App& app);  // main.cpp
void register_attention(CLI::App& app);     // flags.cpp, as are the ones below
void register_inspect(CLI::App& app);
void register_train(CLI::App& app);
void register_predict(CLI::App& app);
void register_evaluate(CLI::App& app);
void register_plot(CLI::App& app);
void register_score(CLI::App& app);
void register_backtest(CLI::App& app);
// Further subcommands add an options struct and run_<name> below, a register_<name>
// in flags.cpp, a declaration here and one line in main.cpp.

// Lets each register_* attach the handler that runs if its subcommand is chosen.
void on_selected(CLI::App* sub, Handler handler);

// The fields each subcommand's flags fill; the initial values are the flags' defaults.

// `attnfc attention demo` (cmd_attention.cpp); the report that `attnfc attention` runs
// itself is in attention_report.hpp.
struct AttentionDemoOptions {
  double period = 4.0;
  int length = 8;
  std::string series = "sine";
  int width = 0;  // > 0 selects the sqrt(d_k) table
  bool unscaled = false;
  uint64_t seed = 1;
  bool train = false;  // train a head with learnable Q/K/V (attention_train.hpp)
  int steps = 400;
  bool period_given = false, length_given = false;  // --train has its own defaults
};
int run_attention_demo(const AttentionDemoOptions& o);

// `attnfc inspect` (cmd_inspect.cpp).
struct InspectOptions {
  std::string path;
  std::string time_column;
  std::vector<std::string> columns;
  std::string delimiter = ",";
  std::string missing = "error";
  std::string frequency;
  std::string id_column;      // a long file's series id column ("" = a wide file)
  std::string decimal = ".";  // data.decimal, data.thousands, data.date_format
  std::string thousands;
  std::string date_format;
  int width = 48;  // sparkline characters
};
int run_inspect(const InspectOptions& o);

// `attnfc train` (cmd_train.cpp); run_train turns it into a train::TrainOptions.
struct TrainOptions {
  std::string config, out;
  std::vector<std::string> sets;
  bool resume = false;
  int64_t stop_after_steps = 0;
  bool quiet = false;               // no progress; warnings, errors and the summary only
  std::string log_format = "text";  // progress on stderr: "text" or "json"
};
int run_train(const TrainOptions& a);

// `attnfc backtest` (cmd_backtest.cpp): rolling-origin folds (train/backtest.hpp).
struct BacktestOptions {
  std::string config, out;
  std::vector<std::string> sets;
  int folds = 5;
  int64_t step = 0;  // 0 = the horizon
  std::string refit = "every";
  bool cold = false;
  double finetune_epochs = 0.25;
  int64_t val_rows = 0;  // 0 = as the config's split
  bool resume = false;
  bool plan_flags_given = false;  // any of the flags above after --out (resume: the saved plan)
  bool quiet = false;
  std::string log_format = "text";
  int64_t stop_after_steps = 0;
};
int run_backtest(const BacktestOptions& a);

// `attnfc predict` (cmd_predict.cpp; where several inputs go: predict_output.hpp).
struct PredictOptions {
  std::string model, output;
  std::vector<std::string> inputs;  // --input, repeatable; one forecast each
  int horizon = 0;
  bool strict = false;        // a short history, another frequency, missing last rows: exit 2
  std::string ids;            // --id A,B: a panel's series to forecast ("" = all)
  std::string future;         // --future FILE: future covariates at the forecast steps
  std::string levels;         // --level 80,95: the intervals to write ("" = every level)
  bool uncalibrated = false;  // --uncalibrated: a calibrated model's intervals as trained
};
int run_predict(const PredictOptions& a);

// `attnfc evaluate` (cmd_evaluate.cpp).
struct EvaluateOptions {
  std::string model, input, split = "test", json;
  int batch = 256;
  int drop_last = 0;  // > 0: score the first floor(W / drop_last) * drop_last windows only
};
int run_evaluate(const EvaluateOptions& a);

// `attnfc plot` (cmd_plot.cpp; the page: plot_data, plot_page).
struct PlotOptions {
  std::string model, input, output, split = "test", log;
  long window = -1;            // the window shown first; -1 = the split's last
  int windows = 4;             // windows offered, spread evenly over the split
  std::optional<int> history;  // steps drawn before each origin (none: min(L, 2H))
  int max_channels = 6;        // target columns drawn
};
int run_plot(const PlotOptions& a);

// `attnfc score` (cmd_score.cpp): a long-format forecast file scored as M4 scores it
// (sMAPE, MASE, OWA), beside the M4 benchmarks computed from the history file.
struct ScoreOptions {
  std::string forecast, actual, history;
  std::string id_column = "id";
  std::string value_column;  // empty: the first column that is neither id nor time
  int season = 24;
  std::string out, per_series;
  std::string delimiter = ",", decimal = ".", thousands;  // how all three files are written
};
int run_score(const ScoreOptions& o);

}  // namespace attnfc::cli
