#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"

namespace fs = std::filesystem;

TEST_CASE("write_file_atomic writes the whole file and leaves no temporary behind") {
  const fs::path dir = fs::temp_directory_path() / "attnfc_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  attnfc::write_file_atomic(path, "first");
  attnfc::write_file_atomic(path, "second version");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "second version");
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
