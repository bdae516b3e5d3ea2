// The strict JSON reader every config section uses: suggestions for typos, typed
// reads, unread keys, and syntax errors with line and column.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc;
using nlohmann::json;

namespace {}  // namespace

TEST_CASE("json config: edit distance and suggestions") {
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("same", "same") == 0);
  CHECK(closest_match("hiddn", {"horizon", "hidden", "heads"}) == "hidden");
  CHECK(closest_match("zzzzzzzz", {"horizon", "hidden"}).empty());
}

TEST_CASE("json config: ConfigSection reads lists, bools and nested objects strictly") {
  const json j = {{"columns", {"OT", "HUFL"}}, {"flag", true}, {"sub", {{"x", 1}}}, {"bad", {1}}};
  ConfigSection s(j, "data");
  CHECK(s.get_string_list("columns", {}).size() == 2);
  CHECK(s.get_bool("flag", false));
  CHECK(s.get_object("sub").at("x") == 1);
  try {
    s.get_string_list("bad", {});
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "'data.bad[0]'"));
  }
  ConfigSection t(j, "data");
  t.allow("columns");
  t.allow("flag");
  t.allow("sub");
  CHECK_THROWS_AS(t.finish(), InputError);  // "bad" was never read
  t.allow("bad");
  CHECK_NOTHROW(t.finish());
}

TEST_CASE("json config: JSON syntax errors point at line and column") {
  const std::string path = "test_config_syntax.json";
  {
    std::ofstream out(path);
    out << "{\n  \"model\": {\n    \"d_model\": 64,,\n  }\n}\n";
  }
  try {
    load_json_file(path);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "test_config_syntax.json:3:"));
  }
  std::remove(path.c_str());
  CHECK_THROWS_AS(load_json_file("does/not/exist.json"), InputError);
}
