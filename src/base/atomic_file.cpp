// write_file_atomic: mkstemp in the target's directory, write, fsync, keep the mode,
// rename; and the clean-up of temporaries left by killed processes.
#include "attnfc/base/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <vector>

#include "attnfc/base/error.hpp"

namespace attnfc {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const char* doing, int err) {
  const std::string msg = path + ": " + doing + " (" + std::strerror(err) + ")";
  // A folder that is not there is a wrong path the user gave; anything else (full
  // disk, read-only file system, permissions, I/O) is a runtime failure.
  if (err == ENOENT || err == ENOTDIR) throw InputError(msg);
  throw OutputError(msg);
}

// The file a path finally names: symlinks followed (relative ones from their folder).
fs::path resolve_target(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) return p;
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  throw InputError(path + ": too many levels of symbolic links");
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0644 & ~mask;
}

// ".<name>.tmp.<pid>.XXXXXX" -> pid, or -1 when `file` is not one of ours.
long temp_owner(const std::string& file, const std::string& name) {
  const std::string tag = ".tmp.";
  if (file.size() < 1 + tag.size() + 1 + 1 + 6 || file[0] != '.') return -1;
  const size_t dot = file.rfind('.');
  if (dot == std::string::npos || file.size() - dot - 1 != 6) return -1;
  const size_t pid_begin = file.rfind(tag, dot);
  if (pid_begin == std::string::npos || pid_begin < 2) return -1;
  if (!name.empty() && file.compare(1, pid_begin - 1, name) != 0) return -1;
  if (!name.empty() && pid_begin - 1 != name.size()) return -1;
  const std::string digits = file.substr(pid_begin + tag.size(), dot - pid_begin - tag.size());
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stol(digits);
}

void write_all(int fd, std::string_view bytes, const std::function<void(int)>& on_error) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      on_error(errno);
    }
    done += static_cast<size_t>(n);
  }
}

// A device or FIFO the user named (/dev/stdout, /dev/null, a pipe): written in place,
// since it cannot be replaced by a rename.
void write_in_place(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open for writing", errno);
  write_all(fd, bytes, [&](int err) {
    ::close(fd);
    fail(path, "write failed", err);
  });
  if (::close(fd) != 0) fail(path, "write failed", errno);
}

}  // namespace

size_t remove_stale_temp_files(const std::string& dir, const std::string& name) {
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (!d) return 0;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const long pid = temp_owner(e->d_name, name);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive or not ours
    stale.emplace_back(e->d_name);
  }
  size_t removed = 0;
  for (const auto& f : stale) {
    struct stat st {};
    if (::fstatat(::dirfd(d), f.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (::unlinkat(::dirfd(d), f.c_str(), 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  struct stat named {};
  if (::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) {
    if (S_ISDIR(named.st_mode)) throw InputError(path + ": is a folder, expected a file name");
    return write_in_place(path, bytes);
  }
  const fs::path target = resolve_target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError(path + ": expected a file name, found a folder");
  remove_stale_temp_files(dir.string(), name);

  struct stat old {};
  const bool replacing = ::stat(target.c_str(), &old) == 0;
  std::string tmp = (dir / ("." + name + ".tmp." + std::to_string(::getpid()) + ".XXXXXX"));
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) fail(path, "cannot write a file in its folder", errno);
  auto abandon = [&](const char* doing, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, doing, err);
  };
  if (::fchmod(fd, replacing ? (old.st_mode & 07777) : new_file_mode()) != 0)
    abandon("cannot set the file mode", errno);
  write_all(fd, bytes, [&](int err) { abandon("write failed", err); });
  if (::fsync(fd) != 0) abandon("write failed", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "write failed", err);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot replace the file", err);
  }
  // Make the rename itself durable (best effort: some file systems refuse fsync on a folder).
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace attnfc
