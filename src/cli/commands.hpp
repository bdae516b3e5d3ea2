#pragma once
// Each subcommand lives in its own src/cli/cmd_<name>.cpp and registers itself
// on the root app here. A handler returns the process exit code:
//   0 success, 1 runtime failure, 2 bad usage or input (InputError).
#include <CLI/CLI.hpp>
#include <functional>

namespace attnfc::cli {

// Called after parsing succeeds, for the subcommand the user chose.
using Handler = std::function<int()>;

// Registration hooks; main() calls each one once.
void register_version_info(CLI::App& app);
void register_attention(CLI::App& app);  // cmd_attention.cpp
void register_inspect(CLI::App& app);    // cmd_inspect.cpp
void register_train(CLI::App& app);      // cmd_train.cpp
void register_predict(CLI::App& app);    // cmd_predict.cpp
void register_evaluate(CLI::App& app);   // cmd_evaluate.cpp
void register_plot(CLI::App& app);       // cmd_plot.cpp
// Further subcommands (train, predict, evaluate, inspect, attention, ...) add
// a declaration here and one line in main.cpp.

// Lets each register_* attach the handler that runs if its subcommand is chosen.
void on_selected(CLI::App* sub, Handler handler);

}  // namespace attnfc::cli
