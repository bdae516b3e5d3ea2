// read_input_data (issue 22): gzip-compressed data files, told by their magic bytes and
// decompressed within the reader's limit; corrupt, truncated and concatenated streams.
// The fixtures are made here with zlib itself.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"

using namespace attnfc;
namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  const fs::path d = fs::temp_directory_path() / ("attnfc_gzip_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// One gzip member holding `text`, as gzip writes it.
std::string gzip(const std::string& text, int level = 6) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

std::string write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

// A CSV of a few MiB (several of the reader's 1 MiB chunks), not too compressible.
std::string sample_csv() {
  std::string csv = "date,load,temp\n";
  for (int i = 0; i < 150'000; ++i)
    csv += "2020-01-01 " + std::to_string(i % 24) + ":00," + std::to_string((i * 7919) % 1000) +
           "." + std::to_string(i % 10) + "," + std::to_string(i % 37) + "\n";
  return csv;
}

std::string error_of(const std::string& path, uint64_t limit = uint64_t{1} << 30) {
  try {
    read_input_data(path, limit, "CSV file");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("gzip input: a gzip file and its plain twin load to the same bytes") {
  const fs::path d = scratch();
  const std::string csv = sample_csv();
  REQUIRE(csv.size() > (3u << 20));
  const std::string plain = write(d / "data.csv", csv);
  const std::string gz = write(d / "data.csv.gz", gzip(csv));
  CHECK(fs::file_size(gz) < csv.size() / 2);
  CHECK(read_input_data(plain, 1 << 30, "CSV file") == csv);
  CHECK(read_input_data(gz, 1 << 30, "CSV file") == csv);
  // Told by the magic bytes, not by the name: gzip named .csv, plain text named .gz.
  CHECK(read_input_data(write(d / "gzip.csv", gzip(csv)), 1 << 30, "CSV file") == csv);
  CHECK(read_input_data(write(d / "plain.csv.gz", "a,b\n1,2\n"), 100, "CSV file") == "a,b\n1,2\n");
  // Files shorter than the magic number are plain.
  CHECK(read_input_data(write(d / "one", "\x1f"), 10, "CSV file") == "\x1f");
  CHECK(read_input_data(write(d / "empty", ""), 10, "CSV file").empty());
  // read_input_file (configs, checkpoints) still reads the bytes as they are.
  CHECK(read_input_file(gz, 1 << 30, "CSV file") == gzip(csv));
  fs::remove_all(d);
}

TEST_CASE("gzip input: a gzip bomb over the limit is refused naming the file and the limit") {
  const fs::path d = scratch();
  const std::string bomb = gzip(std::string(64 << 20, '0'), 9);  // 64 MiB of '0' in ~64 KB
  REQUIRE(bomb.size() < (1 << 20));
  const std::string path = write(d / "bomb.csv.gz", bomb);
  const std::string e = error_of(path, 1 << 20);
  CHECK(e.find(path + ": the CSV file (gzip) decompresses to more than 1048576 bytes, expected "
                      "at most 1048576") != std::string::npos);
  CHECK(read_input_data(path, 64 << 20, "CSV file").size() == (64u << 20));
  CHECK(error_of(path, (64 << 20) - 1).find("expected at most 67108863") != std::string::npos);
  // The compressed bytes are bounded too.
  CHECK(error_of(path, 1000).find("bytes, expected at most 1000") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("gzip input: a truncated or corrupt stream is one line naming the file and zlib") {
  const fs::path d = scratch();
  const std::string gz = gzip(sample_csv());
  const std::string cut = write(d / "cut.csv.gz", gz.substr(0, gz.size() / 2));
  const std::string e1 = error_of(cut);
  CHECK(e1.find(cut + ": the CSV file is truncated: it ends inside gzip member 1") !=
        std::string::npos);
  CHECK(e1.find("zlib: unexpected end of file") != std::string::npos);
  // Only the trailer (CRC-32 and length) missing.
  CHECK(error_of(write(d / "notrailer.gz", gz.substr(0, gz.size() - 4))).find("truncated") !=
        std::string::npos);
  // Bytes flipped inside the deflate data: zlib's own word for it.
  std::string bad = gz;
  for (size_t i = 100; i < 140; ++i) bad[i] = static_cast<char>(~bad[i]);
  const std::string corrupt = write(d / "corrupt.csv.gz", bad);
  const std::string e2 = error_of(corrupt);
  CHECK(e2.find(corrupt + ": the CSV file is not valid gzip data in member 1") !=
        std::string::npos);
  CHECK(e2.find("zlib: ") != std::string::npos);
  // A wrong CRC-32 in the trailer.
  std::string crc = gz;
  crc[crc.size() - 8] = static_cast<char>(~crc[crc.size() - 8]);
  CHECK(error_of(write(d / "crc.gz", crc)).find("zlib: incorrect data check") != std::string::npos);
  for (const std::string& e : {e1, e2}) CHECK(e.find('\n') == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("gzip input: concatenated members are read whole, as gzip -d does") {
  const fs::path d = scratch();
  const std::string a = "date,v\n2020-01-01,1\n", b = "2020-01-02,2\n", c = sample_csv();
  CHECK(read_input_data(write(d / "two.gz", gzip(a) + gzip(b)), 1 << 20, "CSV file") == a + b);
  CHECK(read_input_data(write(d / "empty_member.gz", gzip(a) + gzip("") + gzip(b)), 1 << 20,
                        "CSV file") == a + b);
  // Members larger than a read chunk, and the limit over the whole, not over each member.
  const std::string big = write(d / "big.gz", gzip(c) + gzip(c));
  CHECK(read_input_data(big, 1 << 30, "CSV file") == c + c);
  CHECK(error_of(big, c.size() + 10).find("decompresses to more than") != std::string::npos);
  // Bytes after the last member that are no member are an error, not ignored.
  const std::string junk = write(d / "junk.gz", gzip(a) + "trailing junk");
  CHECK(error_of(junk) ==
        junk + ": the CSV file has bytes after gzip member 1 that are neither " +
            "a gzip member nor zero padding (from compressed byte " +
            std::to_string(gzip(a).size()) +
            "); expected a complete gzip file with nothing after its last member");
  const std::string zeros_then_junk =
      write(d / "zj.gz", gzip(a) + gzip(b) + std::string(3, '\0') + "x");
  CHECK(error_of(zeros_then_junk).find("after gzip member 2 that are neither") !=
        std::string::npos);
  // Zero padding after the last member (dd, tape blocks) is read past, as gzip -d does,
  // also when it spans read chunks.
  CHECK(read_input_data(write(d / "padded.gz", gzip(a) + std::string(512, '\0')), 1 << 20,
                        "CSV file") == a);
  CHECK(read_input_data(write(d / "long_pad.gz", gzip(c) + std::string(3 << 20, '\0')), 1 << 30,
                        "CSV file") == c);
  // A member whose header is damaged after its first byte is still a bad member.
  CHECK(error_of(write(d / "half.gz", gzip(a) + "\x1f junk"))
            .find("not valid gzip data in member 2") != std::string::npos);
  // A second member cut short.
  const std::string second = gzip(b);
  CHECK(error_of(write(d / "cut2.gz", gzip(a) + second.substr(0, 12)))
            .find("truncated: it ends inside gzip member 2") != std::string::npos);
  fs::remove_all(d);
}
