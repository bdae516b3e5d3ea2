// Checked stdout writes and output-over-input refusal (output.hpp).
#include "output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"

namespace attnfc::cli {

namespace {

bool g_stdout_closed = false;

[[noreturn]] void stdout_failed(int err) {
  throw OutputError(std::string("stdout: write failed (") +
                    (g_stdout_closed ? "standard output is closed"
                     : err != 0      ? std::strerror(err)
                                     : "I/O error") +
                    "); the output is incomplete");
}

}  // namespace

void guard_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // A closed stdout becomes /dev/full, so any write to it fails (and is reported);
    // stdin and stderr become /dev/null.
    const char* stand_in = fd == STDOUT_FILENO ? "/dev/full" : "/dev/null";
    int null = ::open(stand_in, fd == 0 ? O_RDONLY : O_WRONLY);
    if (null < 0) null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
    if (fd == STDOUT_FILENO) g_stdout_closed = true;
  }
}

void write_stdout(std::string_view bytes) {
  if (g_stdout_closed) stdout_failed(EBADF);
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) stdout_failed(errno);
}

void finish_stdout() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (!flushed || std::ferror(stdout)) stdout_failed(err);
}

void refuse_output_over_inputs(const std::string& output_flag, const std::string& output,
                               const std::vector<std::pair<std::string, std::string>>& inputs) {
  namespace fs = std::filesystem;
  if (output.empty() || output == "-") return;
  for (const auto& [flag, path] : inputs) {
    if (path == kStdinPath) continue;  // standard input is read whole before any output
    std::error_code ec;
    bool same = fs::exists(output, ec) && fs::equivalent(output, path, ec);
    if (!same) {
      const fs::path a = fs::weakly_canonical(output, ec);
      const fs::path b = fs::weakly_canonical(path, ec);
      same = !ec && a == b;
    }
    if (same)
      throw InputError(output_flag + " " + output + ": is the same file as " + flag + " " + path +
                       "; expected a different output file (it would be overwritten)");
  }
}

char parse_delimiter(const std::string& text) {
  if (text == "tab" || text == "\\t" || text == "\t") return '\t';
  if (text == "comma") return ',';
  if (text == "semicolon") return ';';
  if (text == "space") return ' ';
  if (text.size() == 1) return text[0];
  throw InputError("--delimiter: found '" + text +
                   "', expected one character such as ',' or ';', or tab/comma/semicolon/space");
}

}  // namespace attnfc::cli
