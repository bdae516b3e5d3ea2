// Bounded input reads: fstat first for regular files, a cap and a poll() timeout for
// pipes and FIFOs, devices refused.
#include "attnfc/base/input_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

// Standard input is one stream: a second "-" in one command would read nothing.
std::atomic<bool> g_stdin_taken{false};

// A descriptor of its own for the path ("-": a duplicate of fd 0, so closing it leaves
// standard input alone, and without O_NONBLOCK, whose file description the shell shares:
// reads of a pipe poll first either way).
int open_input(const std::string& path, const std::string& name, const std::string& what) {
  if (path == kStdinPath) {
    if (g_stdin_taken.exchange(true))
      throw InputError(name + ": standard input was read already for another input; expected " +
                       "\"-\" for one input only");
    if (::isatty(STDIN_FILENO))
      throw InputError(name + ": standard input is a terminal; expected the " + what +
                       " from a pipe or a redirection (cat data.csv | attnfc ..., or < data.csv)");
    const int fd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      const int err = errno;
      throw InputError(name + ": cannot read " + what + " (" + std::strerror(err) + ")");
    }
    return fd;
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer; reads below poll instead.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    throw InputError(name + ": cannot open " + what + " (" + std::strerror(err) + ")");
  }
  return fd;
}

}  // namespace

std::string input_name(const std::string& path) {
  return path == kStdinPath ? "<stdin>" : path;
}

InputFile::InputFile(const std::string& path, std::string what, int timeout_ms)
    : path_(input_name(path)), what_(std::move(what)), timeout_ms_(timeout_ms) {
  fd_ = open_input(path, path_, what_);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw InputError(path_ + ": cannot stat " + what_ + " (" + std::strerror(err) + ")");
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    ::close(fd_);
    throw InputError(path_ + ": the " + what_ + " is " + kind_of(st.st_mode) +
                     ", expected a regular file or a pipe");
  }
  regular_ = S_ISREG(st.st_mode);
  size_ = regular_ ? static_cast<uint64_t>(st.st_size) : 0;
  // Standard input redirected from a file may start past its first byte.
  const off_t at = regular_ ? ::lseek(fd_, 0, SEEK_CUR) : 0;
  if (at > 0) start_ = static_cast<uint64_t>(at), size_ -= std::min(size_, start_);
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

MappedInput::MappedInput(const InputFile& file) {
  if (!file.regular() || file.size() == 0 || file.start() != 0) return;
  // MAP_POPULATE: the pages are read in now, in one call, instead of a fault at a time.
  void* p = ::mmap(nullptr, static_cast<size_t>(file.size()), PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                   file.fd(), 0);
  if (p == MAP_FAILED) return;
  data_ = p;
  size_ = static_cast<size_t>(file.size());
}

MappedInput::~MappedInput() {
  if (data_) ::munmap(data_, size_);
}

std::string read_input_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                            int timeout_ms) {
  InputFile f(path, what, timeout_ms);
  std::string out;
  f.read_rest(out, max_bytes);
  return out;
}

}  // namespace attnfc
