// safetensors: the exact bytes of the documented format, round trips, and the
// reader's refusal of every kind of malformed file.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/base/safetensors.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using attnfc::InputError;
namespace st = attnfc::safetensors;

namespace {
std::string with_header(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + json + data;
}
std::string parse_error_of(const std::string& bytes) {
  try {
    st::parse(bytes, "x.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("safetensors: writes the documented format byte for byte") {
  st::File f;
  f.metadata["k"] = "v";
  f.tensors.push_back({"b", {2}, {1.0f, -2.0f}});
  f.tensors.push_back({"a", {1, 1}, {0.5f}});
  const std::string bytes = st::serialize(f);
  // Header: compact JSON with sorted keys, space-padded so the data starts 8-aligned.
  std::string json =
      R"({"__metadata__":{"k":"v"},"a":{"data_offsets":[8,12],"dtype":"F32","shape":[1,1]},)"
      R"("b":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  while ((json.size() + 8) % 8) json += ' ';
  REQUIRE(bytes.size() == 8 + json.size() + 12);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  CHECK(n == json.size());
  CHECK(bytes.substr(8, n) == json);
  // Data: IEEE-754 little-endian, in the order given: 1.0 = 00 00 80 3f, -2.0 = 00 00 00 c0.
  const unsigned char expect[12] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f};
  CHECK(std::memcmp(bytes.data() + 8 + n, expect, 12) == 0);
}

TEST_CASE("safetensors: round trip keeps names, shapes, values and metadata") {
  st::File f;
  f.metadata["attnfc_version"] = "0.1.0";
  f.metadata["config"] = R"({"x": [1, 2]})";
  f.tensors.push_back({"w", {2, 3}, {1, 2, 3, 4, 5, 6}});
  f.tensors.push_back({"empty", {0}, {}});
  f.tensors.push_back({"scalar", {}, {7.25f}});
  const st::File g = st::parse(st::serialize(f), "mem");
  CHECK(g.metadata == f.metadata);
  REQUIRE(g.tensors.size() == 3);
  const st::TensorData* w = g.find("w");
  REQUIRE(w);
  CHECK(w->shape == std::vector<int64_t>{2, 3});
  CHECK(w->values == f.tensors[0].values);
  CHECK(g.find("scalar")->values == std::vector<float>{7.25f});
  CHECK(g.find("missing") == nullptr);
  // Files written by other tools may put tensors in any order and omit metadata.
  const std::string foreign = with_header(
      R"({"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      std::string("\0\0\x80\x3f\0\0\0\x40", 8));
  const st::File h = st::parse(foreign, "foreign");
  CHECK(h.tensors[0].name == "x");
  CHECK(h.find("y")->values[0] == 2.0f);
}

TEST_CASE("safetensors: malformed files are refused with a reason") {
  CHECK(contains(parse_error_of("abc"), "fewer than the 8-byte"));
  CHECK(contains(parse_error_of(with_header("{}", "") + "xx"), "data buffer has 2 bytes"));
  std::string huge(8, '\xff');
  CHECK(contains(parse_error_of(huge + "{}"), "header length"));
  CHECK(contains(parse_error_of(with_header("[1]", "")), "does not start with a JSON object"));
  CHECK(contains(parse_error_of(with_header("{\"a\":", "")), "header JSON"));
  const std::string four(4, '\0');
  CHECK(contains(parse_error_of(with_header(
                     R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", four)),
                 "tensor 'a' has dtype F16, expected F32"));
  CHECK(contains(
      parse_error_of(with_header(R"({"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}})", four)),
      "unknown dtype"));
  CHECK(contains(parse_error_of(with_header(
                     R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", four)),
                 "needs 8"));
  CHECK(contains(parse_error_of(with_header(
                     R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", four)),
                 "outside"));
  CHECK(contains(
      parse_error_of(with_header(
          R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
          four + four)),
      "must not overlap"));
  CHECK(contains(parse_error_of(with_header(
                     R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", four)),
                 "invalid dimension"));
  CHECK(contains(parse_error_of(with_header(R"({"__metadata__":{"k":1}})", "")), "not a string"));
  CHECK(contains(parse_error_of(with_header(R"({"a":{"dtype":"F32"}})", "")),
                 "expected an object with dtype"));
  CHECK_THROWS_AS(st::read("no/such/file.safetensors"), InputError);
}

TEST_CASE("safetensors: the writer rejects inconsistent tensors") {
  st::File f;
  f.tensors.push_back({"w", {2, 2}, {1, 2, 3}});
  CHECK_THROWS_AS(st::serialize(f), std::invalid_argument);
  f.tensors[0] = {"w", {1}, {1}};
  f.tensors.push_back({"w", {1}, {1}});
  CHECK_THROWS_AS(st::serialize(f), std::invalid_argument);
}

TEST_CASE("safetensors: write is atomic and read returns what was written") {
  st::File f;
  f.tensors.push_back({"t", {3}, {1, 2, 3}});
  const std::string path = "test_safetensors_roundtrip.safetensors";
  st::write(path, f);
  CHECK(st::read(path).find("t")->values == f.tensors[0].values);
  std::remove(path.c_str());
}

TEST_CASE("safetensors: element counts are overflow-checked (issue 18 item 12)") {
  // [2^32, 2^32] F32 wraps to 0 elements in 64 bits: it must not pass as an empty tensor.
  std::string e = parse_error_of(with_header(
      R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""));
  CHECK(contains(e, "tensor 't': shape [4294967296,4294967296] has more than 2^64 elements"));
  // 2^62 elements of 4 bytes: the byte count wraps instead.
  e = parse_error_of(with_header(
      R"({"t":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", ""));
  CHECK(contains(e, "needs more than 2^64 bytes"));
  e = parse_error_of(with_header(R"({"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", ""));
  CHECK(contains(e, "invalid dimension -1"));
  // A 100k-dimension shape is refused without echoing it.
  std::string dims;
  for (int i = 0; i < 100000; ++i) dims += i ? ",1" : "1";
  e = parse_error_of(with_header(
      R"({"t":{"dtype":"F32","shape":[)" + dims + R"(],"data_offsets":[0,4]}})", "abcd"));
  CHECK(contains(e, "shape has 100000 dimensions, expected at most 8"));
  CHECK(e.size() < 300);
}

TEST_CASE("safetensors: the header JSON is bounded and duplicate tensor names are refused") {
  std::string e =
      parse_error_of(with_header(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                 R"("t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                 "abcd"));
  CHECK(contains(e, "x.safetensors: header JSON: key 't' appears twice"));
  const std::string deep =
      R"({"__metadata__":{"k":)" + std::string(100000, '[') + std::string(100000, ']') + "}}";
  e = parse_error_of(with_header(deep, ""));
  CHECK(contains(e, "nested deeper than 64 levels"));
  e = parse_error_of(
      with_header(R"({"t":{"dtype":"F32","shape":[1e999],"data_offsets":[0,4]}})", ""));
  CHECK(contains(e, "key 't.shape[0]'"));
}

TEST_CASE("safetensors: aliased entries are refused before any value is copied") {
  // 3000 entries that all claim the same 1 MiB: copying each before the overlap check
  // allocated 3 GiB for a 1 MiB file.
  std::string json = "{";
  for (int i = 0; i < 3000; ++i)
    json += (i ? "," : "") + std::string("\"t") + std::to_string(i) +
            R"(":{"dtype":"F32","shape":[262144],"data_offsets":[0,1048576]})";
  json += "}";
  const std::string e = parse_error_of(with_header(json, std::string(1 << 20, '\0')));
  CHECK(contains(e, "must not overlap or leave gaps"));
}

TEST_CASE("safetensors: a tensor name with control bytes is shown escaped, on one line") {
  // A fuzzer find: a newline in a name made a two-line message.
  const std::string header = "{\"final\\norm.weight\": 1}";
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header;
  try {
    attnfc::safetensors::parse(bytes, "x.safetensors");
    FAIL("expected an error");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find("tensor 'final\\x0aorm.weight'") != std::string::npos);
  }
}
