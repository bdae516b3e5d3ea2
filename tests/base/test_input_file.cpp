// read_input_file (issue 18 item 9): sizes checked before reading, devices refused,
// FIFOs read with a cap and an idle timeout.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/base/safetensors.hpp"

using namespace attnfc;
namespace fs = std::filesystem;

namespace {
fs::path input_scratch() {
  const fs::path d = fs::temp_directory_path() / ("attnfc_input_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("input file: a regular file within the limit is read whole, a larger one refused") {
  const fs::path d = input_scratch();
  const std::string path = (d / "a.txt").string();
  std::ofstream(path) << std::string(1000, 'a');
  CHECK(read_input_file(path, 1000, "test file").size() == 1000);
  CHECK_THROWS_WITH_AS(
      read_input_file(path, 999, "test file"),
      doctest::Contains("a.txt: the test file has 1000 bytes, expected at most 999"), InputError);
  fs::remove_all(d);
}

TEST_CASE("input file: /dev/zero, /dev/urandom and directories are refused at once") {
  for (const char* dev : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    CHECK_THROWS_WITH_AS(read_input_file(dev, 1 << 20, "config file"),
                         doctest::Contains("is a character device"), InputError);
    CHECK_THROWS_WITH_AS(load_json_file(dev), doctest::Contains(dev), InputError);
    CHECK_THROWS_WITH_AS(safetensors::read(dev), doctest::Contains("is a character device"),
                         InputError);
  }
  CHECK_THROWS_WITH_AS(read_input_file("/tmp", 10, "config file"),
                       doctest::Contains("is a directory"), InputError);
  CHECK_THROWS_WITH_AS(read_input_file("/no/such/file", 10, "config file"),
                       doctest::Contains("cannot open config file"), InputError);
}

TEST_CASE("input file: a FIFO without a writer times out instead of hanging") {
  const fs::path d = input_scratch();
  const std::string fifo = (d / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(read_input_file(fifo, 1 << 20, "config file", 300),
                       doctest::Contains("no data for"), InputError);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  // With a writer, a FIFO is read up to the cap.
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    const std::string text(5000, 'x');
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  });
  CHECK(read_input_file(fifo, 1 << 20, "config file", 5000).size() == 5000);
  writer.join();
  std::signal(SIGPIPE, SIG_IGN);  // the reader gives up before the writer is done
  std::thread big([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    const std::string text(100'000, 'x');
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  });
  CHECK_THROWS_WITH_AS(read_input_file(fifo, 1000, "config file", 5000),
                       doctest::Contains("more than 1001 bytes, expected at most 1000"),
                       InputError);
  big.join();
  fs::remove_all(d);
}

TEST_CASE("input file: a huge file with a bad safetensors header is refused before the read") {
  const fs::path d = input_scratch();
  const std::string path = (d / "sparse.safetensors").string();
  {
    // A 4 GiB sparse file: header length 2^62 would be refused after 8 bytes.
    std::ofstream out(path, std::ios::binary);
    const char len[8] = {0, 0, 0, 0, 0, 0, 0, 0x40};
    out.write(len, 8);
  }
  fs::resize_file(path, uint64_t{4} << 30);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(safetensors::read(path), doctest::Contains("header length"), InputError);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK_THROWS_WITH_AS(safetensors::read(path, 1 << 20),
                       doctest::Contains("expected at most 1048576"), InputError);
  fs::remove_all(d);
}

TEST_CASE("input file: a model file mapped in place reads as the same file through a pipe") {
  const fs::path d = input_scratch();
  const std::string path = (d / "m.safetensors").string();
  safetensors::File f;
  f.metadata["config"] = "{}";
  std::vector<float> big(300000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f - 7.0f;
  f.tensors.push_back({"big", {600, 500}, big});
  f.tensors.push_back({"small", {3}, {1.0f, -2.0f, 3.5f}});
  safetensors::write(path, f);
  {
    const InputFile in(path, "model file");
    const MappedInput map(in);
    REQUIRE(map.mapped());  // a regular file from its start: the mapped path
    CHECK(map.bytes().size() == fs::file_size(path));
  }
  const safetensors::File mapped = safetensors::read(path);
  // A FIFO is never mapped: the streaming path, fed by a writer thread.
  const std::string fifo = (d / "m.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    std::ifstream in(path, std::ios::binary);
    out << in.rdbuf();
  });
  const safetensors::File streamed = safetensors::read(fifo);
  writer.join();
  for (const safetensors::File* g : {&mapped, &streamed}) {
    CHECK(g->metadata == f.metadata);
    REQUIRE(g->tensors.size() == 2);
    CHECK(g->find("big")->values == big);
    CHECK(g->find("small")->values == f.tensors[1].values);
  }
  // A truncated file is refused on either path, with the parser's reason.
  fs::resize_file(path, fs::file_size(path) - 4);
  CHECK_THROWS_AS(safetensors::read(path), InputError);
  fs::remove_all(d);
}
