#pragma once
// Helpers for CLI tests that run commands as a user would: exit code plus the
// combined stdout and stderr.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_test {

struct Run {
  int code;
  std::string out;
};

// Runs a shell command; -1 when it did not exit normally (e.g. killed by a signal).
inline Run sh(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs the attnfc binary built alongside the tests.
inline Run run_attnfc(const std::string& args) {
  return sh(std::string(ATTNFC_BINARY) + " " + args);
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cli_test
