// Runs the real attnfc binary and checks exit codes and messages.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {
struct Run {
  int code;
  std::string out;
};
Run run(const std::string& args) {
  const std::string cmd = std::string(ATTNFC_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
}  // namespace

TEST_CASE("attnfc --version prints the version and exits 0") {
  const Run r = run("--version");
  CHECK(r.code == 0);
  CHECK(r.out.find("attnfc " ATTNFC_VERSION) != std::string::npos);
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
