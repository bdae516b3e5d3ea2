#pragma once
// Error types shared by every layer. The CLI maps them to exit codes:
//   InputError   -> 2 (bad usage, bad config, bad CSV, incompatible checkpoint)
//   OutputError  -> 1 (a write failed: full disk, read-only folder, closed stdout, ...)
//   other errors -> 1 (runtime failure)
// Messages name the file / line / column / config key, what was found and
// what was expected, so a user can act on them without reading the source.
#include <stdexcept>
#include <string>

namespace attnfc {

// Text from a file, fit for a one-line message: control bytes (a newline in a tensor
// name) shown as \xHH, and cut to max_chars ("..." appended).
std::string printable_excerpt(const std::string& text, size_t max_chars = 200);

// The message is made one line here, whatever a caller pasted into it (a config string
// holding "\n", a cell with a tab): control bytes become \xHH and it is cut at 2000 chars.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what)
      : std::runtime_error(printable_excerpt(what, 2000)) {}
  explicit InputError(const char* what) : InputError(std::string(what)) {}
};

// A runtime failure while writing an output (not the user's input): exit code 1.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "<file>:<line>:<col>: <what>" — line and column are 1-based; 0 omits them.
std::string locate(const std::string& file, long line, long column, const std::string& what);

}  // namespace attnfc
