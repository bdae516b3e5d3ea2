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
#include "attnfc/dist/comm.hpp"
#include "attnfc/kernels/isa.hpp"
#include "attnfc/kernels/threading.hpp"
#include "commands.hpp"
#include "output.hpp"

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
    return std::string("attnfc ") + ATTNFC_VERSION + "\n" + kernels::isa_report() +
           "\nMPI: " + dist::mpi_description();
  });
}

namespace {

// The selected command's handler, its errors mapped to exit codes (README): 2 bad usage
// or input (InputError), 1 runtime failures, such as a write that failed (OutputError:
// full disk, read-only folder, closed stdout). An error in one process of an mpirun run
// stops them all. -1 when no command was selected.
int dispatch() {
  for (auto& [sub, handler] : handlers()) {
    if (!sub->parsed()) continue;
    int code = 0;
    try {
      code = handler();
      finish_stdout();  // whatever was printed must have arrived
      return code;
    } catch (const InputError& e) {
      spdlog::error("{}", e.what());
      code = 2;
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      code = 1;
    }
    dist::Comm::abort_run(code);
    return code;
  }
  return -1;
}

// `attnfc train` under mpirun or srun: one process of a data-parallel run. Only rank 0
// reports; the others say only what goes wrong.
bool start_processes(int& argc, char**& argv) {
  try {
    dist::Comm::start(&argc, &argv);
  } catch (const InputError& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  if (!dist::Comm::world().root() && spdlog::get_level() < spdlog::level::warn)
    spdlog::set_level(spdlog::level::warn);
  return true;
}

}  // namespace

// --log-level and --threads, for every command.
void add_global_options(CLI::App& app, std::string& log_level, int& threads) {
  app.add_option("--log-level", log_level,
                 "trace|debug|info|warn|error|off (default: info for train and on a terminal, "
                 "else warn)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--threads", threads,
                 "OpenMP threads (default: OMP_NUM_THREADS, else physical cores, which "
                 "train lowers while busy neighbour processes make fewer faster)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 4 &&
                                text.find_first_not_of("0123456789") == std::string::npos;
            if (digits && std::stoi(text) >= 1 && std::stoi(text) <= 4096) return "";
            return "found '" + text.substr(0, 20) + "', expected a whole number from 1 to 4096";
          },
          "1..4096"));
}

}  // namespace attnfc::cli

int main(int argc, char** argv) {
  using namespace attnfc;
  cli::guard_standard_streams();
  CLI::App app{
      "attnfc: causal attention forecasting for CSV time series, on CPUs.\n"
      "Train a patch Transformer, forecast, and score it against honest baselines."};
  app.require_subcommand(0, 1);
  std::string log_level;
  int threads = 0;
  cli::add_global_options(app, log_level, threads);
  cli::register_version_info(app);
  cli::register_attention(app);
  cli::register_inspect(app);
  cli::register_train(app);
  cli::register_predict(app);
  cli::register_evaluate(app);
  cli::register_plot(app);
  cli::register_score(app);
  cli::register_backtest(app);

  try {
    kernels::select_isa_from_environment();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "attnfc: %s\n", e.what());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (app.exit(e) != 0) return 2;
    try {
      cli::finish_stdout();  // --help, --version
    } catch (const std::exception& err) {
      std::fprintf(stderr, "attnfc: %s\n", err.what());
      return 1;
    }
    return 0;
  }

  auto logger = spdlog::stderr_color_mt("attnfc");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^[%l]%$ %v");
  // A training run is watched, on a terminal or through `| tee` / a job log: it says what it
  // read and chose (info) either way. Other commands feed scripts: only warnings when piped.
  const bool terminal = ::isatty(STDERR_FILENO) != 0, training = app.got_subcommand("train");
  if (log_level.empty()) log_level = terminal || training ? "info" : "warn";
  spdlog::set_level(spdlog::level::from_str(log_level));
  if (threads > 0)
    kernels::set_threads(threads);
  else
    kernels::set_threads_automatic();

  if (training && !cli::start_processes(argc, argv)) return 2;
  struct StopProcesses {
    ~StopProcesses() { dist::Comm::stop(); }
  } stop_processes;
  if (const int code = cli::dispatch(); code >= 0) return code;
  try {
    cli::write_stdout(app.help());
    cli::finish_stdout();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnfc: %s\n", e.what());
    return 1;
  }
  return 0;
}
