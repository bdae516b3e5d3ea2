// attnfc entry point: parse, set up logging and threads, dispatch, map errors to exit codes.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/kernels/isa.hpp"
#include "attnfc/kernels/threading.hpp"
#include "commands.hpp"

namespace attnfc::cli {

namespace {
std::vector<std::pair<CLI::App*, Handler>>& handlers() {
  static std::vector<std::pair<CLI::App*, Handler>> h;
  return h;
}
}  // namespace

void on_selected(CLI::App* sub, Handler handler) {
  handlers().emplace_back(sub, std::move(handler));
}

void register_version_info(CLI::App& app) {
  // The kernel path in use is part of the version: results are only comparable with it.
  app.set_version_flag("--version", [] {
    return std::string("attnfc ") + ATTNFC_VERSION + "\n" + kernels::isa_report();
  });
}

}  // namespace attnfc::cli

int main(int argc, char** argv) {
  using namespace attnfc;
  CLI::App app{
      "attnfc: causal attention forecasting for CSV time series, on CPUs.\n"
      "Train a patch Transformer, forecast, and score it against honest baselines."};
  app.require_subcommand(0, 1);
  std::string log_level;
  app.add_option("--log-level", log_level,
                 "trace|debug|info|warn|error|off (default: info on a terminal, warn otherwise)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  int threads = 0;
  app.add_option("--threads", threads,
                 "OpenMP threads (default: OMP_NUM_THREADS or physical cores)")
      ->check(CLI::PositiveNumber);

  cli::register_version_info(app);
  cli::register_attention(app);
  cli::register_inspect(app);
  cli::register_train(app);
  cli::register_predict(app);
  cli::register_evaluate(app);
  cli::register_plot(app);

  try {
    kernels::select_isa_from_environment();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "attnfc: %s\n", e.what());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  auto logger = spdlog::stderr_color_mt("attnfc");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^[%l]%$ %v");
  if (log_level.empty()) log_level = ::isatty(STDERR_FILENO) ? "info" : "warn";
  spdlog::set_level(spdlog::level::from_str(log_level));
  kernels::set_threads(threads > 0 ? threads : kernels::default_threads());

  for (auto& [sub, handler] : cli::handlers()) {
    if (!sub->parsed()) continue;
    try {
      return handler();
    } catch (const InputError& e) {
      spdlog::error("{}", e.what());
      return 2;
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      return 1;
    }
  }
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
