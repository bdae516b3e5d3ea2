// Run-folder names, locking and start rules (run_folder.hpp).
#include "attnfc/train/run_folder.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

namespace fs = std::filesystem;

std::string RunPaths::file(const char* name) const {
  return (fs::path(dir) / name).string();
}

RunPaths RunPaths::member(int k) const {
  return {(fs::path(dir) / "members" / std::to_string(k)).string()};
}

namespace {

const char* remedy_words(RunFolderError::Remedy r) {
  switch (r) {
    case RunFolderError::Remedy::kResumeOrElsewhere:
      return "resume it, or train into another folder";
    case RunFolderError::Remedy::kTrainFresh:
      return "train it without resuming";
    case RunFolderError::Remedy::kSameConfig:
      return "resume with the config the run started with (its config.json)";
    case RunFolderError::Remedy::kWait:
      return "wait for it to finish, or train into another folder";
  }
  return "";
}

}  // namespace

RunFolderError::RunFolderError(const std::string& problem, Remedy remedy)
    : InputError(problem + "; " + remedy_words(remedy)), problem_(problem), remedy_(remedy) {}

namespace {

// The pid written in a lock file, for the message (0 if unreadable).
long lock_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::strtol(buf, nullptr, 10) : 0;
}

int take_lock(const RunPaths& p) {
  const int fd = ::open(p.lock().c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    throw InputError(p.lock() + ": cannot open the run folder's lock file (" +
                     std::strerror(errno) + ")");
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const long pid = lock_holder(fd);
    ::close(fd);
    throw RunFolderError(p.dir + ": another training is writing this run folder" +
                             (pid > 0 ? " (process " + std::to_string(pid) + ")" : std::string()),
                         RunFolderError::Remedy::kWait);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0)
    spdlog::debug("{}: could not record the pid ({})", p.lock(), std::strerror(errno));
  return fd;
}

}  // namespace

RunFolder::RunFolder(const std::string& dir) : paths_{dir} {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError(dir + ": cannot create the output folder (" +
                     (ec ? ec.message() : std::string("not a directory")) + ")");
  lock_fd_ = take_lock(paths_);
  // Partial files of a killed training (tens of MB each) go once the folder is ours.
  if (const size_t n = remove_stale_temp_files(dir))
    spdlog::info("{}: removed {} temporary file(s) left by a stopped run", dir, n);
}

RunFolder::~RunFolder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

RunFolder::RunFolder(RunFolder&& other) noexcept
    : paths_(std::move(other.paths_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

RunStart RunFolder::decide_start(bool resume, const RunConfig& config) const {
  const RunPaths& p = paths_;
  const bool has_checkpoint = fs::exists(p.checkpoint()), has_members = fs::exists(p.members());
  const bool has_model = fs::exists(p.model()), finished = fs::exists(p.metrics());
  if (!resume) {
    if (has_checkpoint || has_members || finished)
      throw RunFolderError(p.dir + ": already holds a run",
                           RunFolderError::Remedy::kResumeOrElsewhere);
    if (has_model)
      throw RunFolderError(p.dir +
                               ": holds a run that stopped before its first checkpoint (it has "
                               "model.safetensors but no checkpoint.safetensors; resuming starts "
                               "it again)",
                           RunFolderError::Remedy::kResumeOrElsewhere);
    return RunStart::kFresh;
  }
  if (fs::exists(p.config())) {
    // Checked first: a run of the other kind has no checkpoint (or no members) to
    // resume, and "nothing to resume" would hide the real cause.
    const nlohmann::json saved = load_json_file(p.config());
    const nlohmann::json::json_pointer key("/train/ensemble");  // absent before ensembles: 1
    const int saved_k =
        saved.contains(key) && saved[key].is_number_integer() ? saved[key].get<int>() : 1;
    if (saved_k != config.train.ensemble)
      throw RunFolderError("train.ensemble: found " + std::to_string(config.train.ensemble) +
                               ", but the run in " + p.dir + " was started with " +
                               std::to_string(saved_k),
                           RunFolderError::Remedy::kSameConfig);
  }
  if (finished) return RunStart::kAlreadyFinished;
  const bool has_progress = config.train.ensemble > 1 ? has_members : has_checkpoint;
  if (has_progress) return RunStart::kResume;
  if (!has_model && !fs::exists(p.config()))
    throw RunFolderError(p.dir + ": nothing to resume (no run in this folder)",
                         RunFolderError::Remedy::kTrainFresh);
  spdlog::info("{}: the run stopped before its first checkpoint; starting it again", p.dir);
  return RunStart::kFresh;
}

}  // namespace attnfc::train
