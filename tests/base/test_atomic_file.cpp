#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"

#include "../support/text.hpp"

using attnfc_test::slurp;

namespace fs = std::filesystem;

TEST_CASE("write_file_atomic writes the whole file and leaves no temporary behind") {
  const fs::path dir = fs::temp_directory_path() / "attnfc_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  attnfc::write_file_atomic(path, "first");
  attnfc::write_file_atomic(path, "second version");
  CHECK(slurp(path) == "second version");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic names the path when the directory does not exist") {
  CHECK_THROWS_WITH_AS(attnfc::write_file_atomic("/nonexistent-dir/x.csv", "x"),
                       doctest::Contains("/nonexistent-dir/x.csv"), attnfc::InputError);
}

TEST_CASE("locate formats file:line:col") {
  CHECK(attnfc::locate("a.csv", 3, 7, "bad") == "a.csv:3:7: bad");
  CHECK(attnfc::locate("a.csv", 3, 0, "bad") == "a.csv:3: bad");
  CHECK(attnfc::locate("a.json", 0, 0, "bad") == "a.json: bad");
}

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
}  // namespace

TEST_CASE("write_file_atomic: a planted symlink at the old temporary name is never followed") {
  const fs::path dir = fresh_dir("attnfc_atomic_symlink");
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "precious";
  // The old writer used "<path>.tmp.<pid>" with O_TRUNC and followed symlinks.
  const fs::path out = dir / "out.csv";
  fs::create_symlink(victim, dir / ("out.csv.tmp." + std::to_string(::getpid())));
  attnfc::write_file_atomic(out.string(), "forecast");
  CHECK(slurp(victim.string()) == "precious");
  CHECK(slurp(out.string()) == "forecast");
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic: keeps an existing file's mode; a new file gets 0644 & ~umask") {
  const fs::path dir = fresh_dir("attnfc_atomic_mode");
  const fs::path out = dir / "secret.csv";
  std::ofstream(out) << "old";
  ::chmod(out.c_str(), 0600);
  attnfc::write_file_atomic(out.string(), "new");
  struct stat st {};
  REQUIRE(::stat(out.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  const mode_t mask = ::umask(022);
  attnfc::write_file_atomic((dir / "fresh.csv").string(), "x");
  ::umask(mask);
  REQUIRE(::stat((dir / "fresh.csv").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic: a symlinked output is written through to its target") {
  const fs::path dir = fresh_dir("attnfc_atomic_through");
  fs::create_directories(dir / "real");
  std::ofstream(dir / "real" / "model.safetensors") << "v1";
  fs::create_symlink("real/model.safetensors", dir / "link.safetensors");
  attnfc::write_file_atomic((dir / "link.safetensors").string(), "v2");
  CHECK(fs::is_symlink(dir / "link.safetensors"));
  CHECK(slurp((dir / "real" / "model.safetensors").string()) == "v2");
  // The temporary lived in the target's folder and is gone.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "real")) files += e.is_regular_file();
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic: full disk and read-only outputs are runtime errors (exit 1)") {
  if (fs::exists("/dev/full")) {
    // A device is written in place (so /dev/stdout works); a full one fails with exit 1.
    CHECK_THROWS_WITH_AS(attnfc::write_file_atomic("/dev/full", "x"),
                         doctest::Contains("/dev/full: write failed (No space left on device)"),
                         attnfc::OutputError);
  }
  CHECK_NOTHROW(attnfc::write_file_atomic("/dev/null", "x"));
  if (::geteuid() != 0) {  // root writes anywhere
    const fs::path dir = fresh_dir("attnfc_atomic_ro");
    ::chmod(dir.c_str(), 0555);
    CHECK_THROWS_WITH_AS(attnfc::write_file_atomic((dir / "x.csv").string(), "x"),
                         doctest::Contains("x.csv: cannot write a file in its folder"),
                         attnfc::OutputError);
    ::chmod(dir.c_str(), 0755);
    fs::remove_all(dir);
  }
}

TEST_CASE("remove_stale_temp_files: removes those of dead processes only") {
  const fs::path dir = fresh_dir("attnfc_atomic_stale");
  // A child that has exited gives a pid that no longer runs.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string dead = ".model.safetensors.tmp." + std::to_string(child) + ".AbC123";
  const std::string alive = ".model.safetensors.tmp." + std::to_string(::getppid()) + ".XyZ789";
  const std::string other = ".notes.tmp.12x.abcdef";
  for (const auto& f : {dead, alive, other}) std::ofstream(dir / f) << "partial";
  fs::create_symlink("/etc/passwd", dir / (".link.tmp." + std::to_string(child) + ".QQQQQQ"));
  CHECK(attnfc::remove_stale_temp_files(dir.string(), "other.csv") == 0);
  CHECK(attnfc::remove_stale_temp_files(dir.string()) == 1);
  CHECK(!fs::exists(dir / dead));
  CHECK(fs::exists(dir / alive));
  CHECK(fs::exists(dir / other));
  CHECK(fs::is_symlink(dir / (".link.tmp." + std::to_string(child) + ".QQQQQQ")));
  // write_file_atomic cleans its own target's leftovers.
  std::ofstream(dir / dead) << "partial";
  attnfc::write_file_atomic((dir / "model.safetensors").string(), "m");
  CHECK(!fs::exists(dir / dead));
  fs::remove_all(dir);
}
