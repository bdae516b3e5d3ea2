// Runs the real attnfc binary and checks exit codes and messages.
#include <doctest/doctest.h>

#include "cli_run.hpp"

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

using cli_test::Run;
Run run(const std::string& args) {
  return cli_test::run_attnfc(args);
}

TEST_CASE("attnfc --version prints the version and exits 0") {
  const Run r = run("--version");
  CHECK(r.code == 0);
  CHECK(r.out.find("attnfc " ATTNFC_VERSION) != std::string::npos);
  // The kernel path in use and the ones compiled in (ctest sets ATTNFC_KERNELS per suite).
  const char* forced = std::getenv("ATTNFC_KERNELS");
  const std::string in_use = forced && *forced ? forced : "";
  CHECK(r.out.find("kernels: " + in_use) != std::string::npos);
  CHECK(r.out.find("compiled: ") != std::string::npos);
  CHECK(r.out.find("portable") != std::string::npos);
}

TEST_CASE("ATTNFC_KERNELS with an unknown path is an input error naming the choices") {
  const Run r = cli_test::sh("ATTNFC_KERNELS=sse9 " + std::string(ATTNFC_BINARY) + " --version");
  CHECK(r.code == 2);
  // The choices are the sets this build has, as --version lists them after "compiled: ".
  const std::string version = cli_test::sh(std::string(ATTNFC_BINARY) + " --version").out;
  const size_t at = version.find("compiled: ") + 10;
  const std::string compiled = version.substr(at, version.find(';', at) - at);
  CHECK((compiled == "avx512 avx2 portable" || compiled == "neon portable"));
  CHECK(r.out.find("ATTNFC_KERNELS: found 'sse9', expected one of: " + compiled + " (") !=
        std::string::npos);
}

TEST_CASE("attnfc --help describes the tool and exits 0") {
  const Run r = run("--help");
  CHECK(r.code == 0);
  CHECK(r.out.find("forecasting") != std::string::npos);
}

TEST_CASE("an unknown option is a usage error with exit code 2") {
  const Run r = run("--no-such-flag");
  CHECK(r.code == 2);
  CHECK(r.out.find("no-such-flag") != std::string::npos);
}
