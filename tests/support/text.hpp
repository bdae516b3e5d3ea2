#pragma once
// String checks the suites share (one definition: the suites build as unity sources, where
// two files' private copies of a helper would collide).
#include <fstream>
#include <sstream>
#include <string>

namespace attnfc_test {

// Whether `part` occurs in `text` (error messages, CSV and JSON output).
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace attnfc_test
