// What `attnfc train` and `attnfc backtest` share (run_common.hpp).
#include "run_common.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/base/json_parse.hpp"

namespace attnfc::cli {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int signal) {
  g_interrupted.store(true);
  std::signal(signal, SIG_DFL);
}

// Each --set value goes through the bounded JSON parser first: a bare word (not JSON)
// stays a string, but 1e999, a 400-digit integer, a duplicate key or deep nesting is an
// InputError naming the --set, before apply_overrides sees it.
void check_set_values(const std::vector<std::string>& sets) {
  for (const auto& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos) continue;  // apply_overrides explains the syntax
    const std::string shown = set.size() > 80 ? set.substr(0, 80) + "..." : set;
    try {
      (void)parse_json_bounded(std::string_view(set).substr(eq + 1), "--set '" + shown + "'");
    } catch (const JsonSyntaxError&) {
      // a bare word such as cosine or datasets/x.csv
    }
  }
}

// The in-epoch interval of piped progress: 10 s, or ATTNFC_PROGRESS_INTERVAL_S (tests,
// or a log that wants more or fewer lines).
double progress_interval_s() {
  constexpr const char* kVar = "ATTNFC_PROGRESS_INTERVAL_S";
  const char* text = std::getenv(kVar);
  if (text == nullptr || *text == '\0') return 10;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0)
    throw InputError(std::string(kVar) + ": found '" + std::string(text).substr(0, 20) +
                     "', expected a number of seconds >= 0");
  return v;
}

}  // namespace

std::atomic<bool>& interrupt_flag() {
  return g_interrupted;
}

InterruptSignals::InterruptSignals() {
  g_interrupted.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &previous_int_);
  ::sigaction(SIGTERM, &sa, &previous_term_);
}

InterruptSignals::~InterruptSignals() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
}

train::ProgressOptions progress_options(bool quiet, const std::string& log_format) {
  train::ProgressOptions p;
  p.interval_s = progress_interval_s();
  if (quiet) {
    p.style = train::ProgressStyle::kOff;
    if (spdlog::get_level() < spdlog::level::warn) spdlog::set_level(spdlog::level::warn);
  } else if (log_format == "json") {
    p.style = train::ProgressStyle::kJson;
  } else {
    p.style = ::isatty(STDERR_FILENO) ? train::ProgressStyle::kBar : train::ProgressStyle::kLines;
  }
  // Log lines between timestamped progress lines carry the same UTC stamp.
  if (p.style == train::ProgressStyle::kLines)
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%SZ %^[%l]%$ %v", spdlog::pattern_time_type::utc);
  return p;
}

train::RunConfig load_run_config(const std::string& path, const std::vector<std::string>& sets,
                                 bool saved_run) {
  nlohmann::json root = load_json_file(path);
  if (saved_run) train::fill_saved_defaults(root);
  check_set_values(sets);
  train::apply_overrides(root, sets);
  train::RunConfig cfg = train::parse_run_config(root);
  // A run reads its data again when resumed, and evaluate and plot find it in config.json:
  // a stream would be gone by then.
  if (cfg.data.csv.path == kStdinPath)
    throw InputError(
        "data.path: found \"-\" (standard input), expected a file: a run reads its data again "
        "on --resume and config.json keeps the path; save the stream to a file first (a "
        ".csv.gz file is read as it is)");
  return cfg;
}

InputError with_remedy(const train::RunFolderError& e, const std::string& command,
                       const char* same_config) {
  using Remedy = train::RunFolderError::Remedy;
  std::string flags;
  switch (e.remedy()) {
    case Remedy::kResumeOrElsewhere:
      flags = "pass --resume to continue it, or choose another --out";
      break;
    case Remedy::kTrainFresh:
      flags = command + " without --resume";
      break;
    case Remedy::kSameConfig:
      flags = same_config;
      break;
    case Remedy::kWait:
      flags = "wait for it to finish, or choose another --out";
      break;
  }
  return InputError(e.problem() + "; " + flags);
}

}  // namespace attnfc::cli
