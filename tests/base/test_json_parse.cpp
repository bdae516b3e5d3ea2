// parse_json_bounded (issue 18 item 1): depth, size, duplicate keys and number range
// are refused with one line naming the source and the key; load_json_file uses it.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/base/json_parse.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc;

namespace {

std::string json_error_of(const std::string& text, const JsonLimits& limits = {}) {
  try {
    (void)parse_json_bounded(text, "c.json", limits);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.size() < 400);
    return msg;
  }
  return "";
}

}  // namespace

TEST_CASE("json parse: nesting 100k levels deep is refused at the limit, without recursion") {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const std::string e = json_error_of(deep);
  CHECK(contains(e, "c.json: key '"));
  CHECK(contains(e, "nested deeper than 64 levels"));
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100'000; ++i) s += "{\"a\":";
    s += "1";
    for (int i = 0; i < 100'000; ++i) s += "}";
    return s;
  }();
  CHECK(contains(json_error_of(objects), "key 'a.a.a."));
  // 64 levels are fine, 65 are not.
  CHECK(json_error_of(std::string(64, '[') + std::string(64, ']')).empty());
  CHECK(!json_error_of(std::string(65, '[') + std::string(65, ']')).empty());
}

TEST_CASE("json parse: a duplicate key is refused, naming its path") {
  const std::string e =
      json_error_of(R"({"model": {"d_model": 64, "n_heads": 4, "d_model": 4096}})");
  CHECK(contains(e, "c.json: key 'model.d_model' appears twice in one object"));
  // The same key in two different objects is fine.
  CHECK(json_error_of(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})").empty());
}

TEST_CASE("json parse: numbers beyond double range are refused, naming the key") {
  std::string e = json_error_of(R"({"train": {"lr": 1e999}})");
  CHECK(contains(e, "c.json: key 'train.lr'"));
  CHECK(contains(e, "expected a number within the range of a double"));
  e = json_error_of(R"({"data": {"columns": [1, 2, )" + std::string(400, '9') + "]}}");
  CHECK(contains(e, "key 'data.columns[2]'"));
  CHECK(contains(e, "number overflow"));
  CHECK(json_error_of("[1e308, -1e308, 1e-999, 18446744073709551615]").empty());
}

TEST_CASE("json parse: size limit, syntax errors with line and column") {
  JsonLimits small;
  small.max_bytes = 10;
  CHECK(contains(json_error_of("[1,2,3,4,5,6,7]", small), "c.json: JSON text of 15 bytes"));
  try {
    (void)parse_json_bounded("{\n  \"a\": 1,,\n}", "c.json");
    FAIL("expected an error");
  } catch (const JsonSyntaxError& e) {
    CHECK(contains(e.what(), "c.json:2:"));
  }
  // A limit is not a syntax error (so --set does not take it for a bare word).
  CHECK_THROWS_AS(
      [] {
        try {
          (void)parse_json_bounded("[1e999]", "x");
        } catch (const JsonSyntaxError&) {
          return;  // wrong class
        }
      }(),
      InputError);
}

TEST_CASE("json parse: load_json_file goes through the bounded parser") {
  const std::string path = "test_json_parse_dup.json";
  std::ofstream(path) << R"({"train": {"epochs": 3, "epochs": 300}})";
  CHECK_THROWS_WITH_AS(
      load_json_file(path),
      doctest::Contains("test_json_parse_dup.json: key 'train.epochs' appears twice"), InputError);
  std::ofstream(path) << std::string(5000, '[') + std::string(5000, ']');
  CHECK_THROWS_WITH_AS(load_json_file(path), doctest::Contains("nested deeper than 64"),
                       InputError);
  std::remove(path.c_str());
}

TEST_CASE("json config: error messages cut a huge value instead of echoing it") {
  const nlohmann::json j = {{"d_model", std::string(1'000'000, 'x')}};
  ConfigSection s(j, "model");
  try {
    (void)s.get_int("d_model", 1, 1, 10);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).size() < 300);
    CHECK(contains(e.what(), "config key 'model.d_model'"));
  }
  CHECK(json_excerpt(nlohmann::json(std::string(100, 'y')), 10) == "\"yyyyyyyyyy\"...");
}
