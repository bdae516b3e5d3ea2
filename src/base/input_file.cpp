// Bounded input reads: fstat first for regular files, a cap and a poll() timeout for
// pipes and FIFOs, devices refused.
#include "attnfc/base/input_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "attnfc/base/error.hpp"

namespace attnfc {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device (such as /dev/zero or a terminal)";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

InputFile::InputFile(const std::string& path, std::string what, int timeout_ms)
    : path_(path), what_(std::move(what)), timeout_ms_(timeout_ms) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; reads below poll instead.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    const int err = errno;
    throw InputError(path + ": cannot open " + what_ + " (" + std::strerror(err) + ")");
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw InputError(path + ": cannot stat " + what_ + " (" + std::strerror(err) + ")");
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": the " + what_ + " is " + kind_of(st.st_mode) +
                     ", expected a regular file or a pipe");
  }
  regular_ = S_ISREG(st.st_mode);
  size_ = regular_ ? static_cast<uint64_t>(st.st_size) : 0;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::too_large(uint64_t found, uint64_t max_bytes) const {
  throw InputError(path_ + ": the " + what_ + " has " + (regular_ ? "" : "more than ") +
                   std::to_string(found) + " bytes, expected at most " + std::to_string(max_bytes));
}

void InputFile::wait_readable() const {
  // A FIFO that never had a writer reads as end of file at once, and poll() reports
  // neither data nor hang-up for it: poll first, and give up after the timeout.
  while (true) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms_);
    if (ready > 0) return;
    if (ready == 0)
      throw InputError(path_ + ": no data for " +
                       (timeout_ms_ % 1000 == 0 ? std::to_string(timeout_ms_ / 1000) + " s"
                                                : std::to_string(timeout_ms_) + " ms") +
                       " while reading the " + what_ + " (a FIFO without a writer?)");
    if (errno != EINTR) {
      const int err = errno;
      throw InputError(path_ + ": cannot read " + what_ + " (" + std::strerror(err) + ")");
    }
  }
}

uint64_t InputFile::read_into(std::string& out, uint64_t n) {
  uint64_t done = 0;
  constexpr uint64_t kChunk = 1 << 20;  // grow with the bytes that arrive, not the claim
  while (done < n) {
    if (!regular_) wait_readable();
    const size_t want = static_cast<size_t>(std::min(n - done, kChunk));
    const size_t at = out.size();
    out.resize(at + want);
    const ssize_t got = ::read(fd_, out.data() + at, want);
    const int err = errno;
    out.resize(at + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    if (got > 0) {
      done += static_cast<uint64_t>(got);
      continue;
    }
    if (got == 0) break;  // end of file
    if (err == EINTR || err == EAGAIN || err == EWOULDBLOCK) continue;
    throw InputError(path_ + ": cannot read " + what_ + " (" + std::strerror(err) + ")");
  }
  return done;
}

void InputFile::read_rest(std::string& out, uint64_t max_bytes) {
  const uint64_t before = out.size();
  if (regular_) {
    if (size_ > max_bytes) too_large(size_, max_bytes);
    out.reserve(static_cast<size_t>(std::max<uint64_t>(size_, before)));
  }
  // One byte more than allowed tells a file that is (or grew) too large.
  const uint64_t budget = max_bytes > before ? max_bytes - before : 0;
  read_into(out, budget + 1);
  if (out.size() > max_bytes) too_large(out.size(), max_bytes);
}

std::string read_input_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                            int timeout_ms) {
  InputFile f(path, what, timeout_ms);
  std::string out;
  f.read_rest(out, max_bytes);
  return out;
}

}  // namespace attnfc
