// Static columns of a long file (issue 19): read per series from the table the panel came
// from, refused when they are not constant, and encoded by a training-fit StaticEncoder
// that round-trips through the model file's JSON.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/data/known.hpp"

using namespace attnfc::data;

namespace {
std::string static_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const attnfc::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A panel with per-series static columns; `value` is named, so store_size is not read as one.
const char* kPanel =
    "id,date,value,store_size,region\n"
    "A,2024-01-01,1,5,north\n"
    "B,2024-01-01,2,7, south \n"
    "A,2024-01-02,3,5.0,north\n"
    "C,2024-01-01,4,7,north\n"
    "B,2024-01-02,5,7,south\n";

struct Panel {
  CsvTable table;
  TimeSeries series;
};
Panel panel(const std::string& text, std::vector<std::string> values = {"value"}) {
  CsvOptions opt;
  opt.id_column = "id";
  opt.value_columns = std::move(values);
  Panel p{CsvTable::parse(text, "panel.csv"), {}};
  p.series = load_series(p.table, opt);
  return p;
}
std::string static_error(const std::string& text, std::vector<std::string> columns,
                         std::vector<std::string> values = {"value"}) {
  const Panel p = panel(text, std::move(values));
  return static_error_of([&] { read_static(p.table, p.series, columns); });
}
}  // namespace

TEST_CASE("static columns: one value per series in series order, numbers or text") {
  const Panel p = panel(kPanel);
  const std::vector<StaticColumn> cols = read_static(p.table, p.series, {"region", "store_size"});
  REQUIRE(cols.size() == 2);
  CHECK(cols[0].name == "region");
  CHECK(cols[0].categorical);
  CHECK(cols[0].text == std::vector<std::string>{"north", "south", "north"});  // A, B, C
  CHECK(cols[0].numeric.empty());
  CHECK(cols[1].name == "store_size");
  CHECK_FALSE(cols[1].categorical);
  CHECK(cols[1].numeric == std::vector<float>{5, 7, 7});  // 5 and 5.0 agree
  CHECK(read_static(p.table, p.series, {}).empty());
  // One cell that is not a number makes the column categorical, as written (trimmed).
  const Panel q = panel("id,date,value,code\nA,2024-01-01,1,12\nB,2024-01-01,2, X7\n");
  const std::vector<StaticColumn> c = read_static(q.table, q.series, {"code"});
  CHECK(c[0].categorical);
  CHECK(c[0].text == std::vector<std::string>{"12", "X7"});
}

TEST_CASE("static columns in a decimal-comma file with thousands dots are numbers") {
  CsvOptions opt;
  opt.id_column = "id";
  opt.value_columns = {"value"};
  opt.delimiter = ';';
  opt.number = parse_number_format(",", ".", ';', "data.decimal", "data.thousands");
  const CsvTable table = CsvTable::parse(
      "id;date;value;size\nA;2024-01-01;1,5;1.250,5\nA;2024-01-02;2;1250,50\nB;2024-01-01;3;7\n",
      "semi.csv", ';');
  const TimeSeries series = load_series(table, opt);
  const std::vector<StaticColumn> cols = read_static(table, series, {"size"}, opt.number);
  CHECK_FALSE(cols[0].categorical);
  CHECK(cols[0].numeric == std::vector<float>{1250.5f, 7});
  // Read with the default format the same cells are text (and differ as text).
  CHECK(static_error_of([&] {
          read_static(table, series, {"size"});
        }).find("found '1250,50' but") != std::string::npos);
  // A bad grouping is refused, naming the cell.
  const CsvTable bad = CsvTable::parse("id;date;value;size\nA;2024-01-01;1;1.25\n", "bad.csv", ';');
  CHECK(static_error_of([&] {
          read_static(bad, load_series(bad, opt), {"size"}, opt.number);
        }).find("bad.csv:2:4: column 'size': found '1.25', expected groups of 3 digits") == 0);
}

TEST_CASE("static columns: every refusal names file, line, column, series and values") {
  CHECK(static_error(kPanel, {"size"}) ==
        "panel.csv:1: data.static: column 'size' not found; expected one of the columns: id, "
        "date, value, store_size, region");
  CHECK(static_error(kPanel, {"id"})
            .find("panel.csv:1: data.static: column 'id' is the id "
                  "column") == 0);
  CHECK(static_error(kPanel, {"date"})
            .find("panel.csv:1: data.static: column 'date' is the time "
                  "column") == 0);
  CHECK(static_error(kPanel, {"value"}).find("column 'value' is also a value column") !=
        std::string::npos);
  // Unnamed value columns take every numeric one, store_size included.
  CHECK(
      static_error(kPanel, {"store_size"}, {})
          .find("column 'store_size' is also a value column; expected a column other than the id, "
                "the time and the values (name the value columns in data.columns") !=
      std::string::npos);
  CHECK(static_error(kPanel, {"region", "region"}) ==
        "data.static: found column 'region' twice, expected each static column once");
  CHECK(static_error("id,date,value,store_size\nA,2024-01-01,1,5\nB,2024-01-01,2,7\n"
                     "A,2024-01-02,3,6\n",
                     {"store_size"}) ==
        "panel.csv:4:4: column 'store_size': series 'A': found '6' but '5' on line 2, expected "
        "one value per series (a static column is constant within each series)");
  CHECK(
      static_error("id,date,value,region\nA,2024-01-01,1,north\nA,2024-01-02,3,North\n", {"region"})
          .find("panel.csv:3:4: column 'region': series 'A': found 'North' but 'north' on line "
                "2") == 0);
  CHECK(static_error("id,date,value,region\nA,2024-01-01,1,north\nB,2024-01-01,2,\n", {"region"}) ==
        "panel.csv:3:4: column 'region': series 'B': found a missing value '', expected the "
        "series' static value on every row");
  CHECK(static_error("id,date,value,size\nA,2024-01-01,1,3\nA,2024-01-02,2,NA\n", {"size"})
            .find("panel.csv:3:4: column 'size': series 'A': found a missing value 'NA'") == 0);
}

namespace {
StaticColumn numeric(std::string name, std::vector<float> v) {
  return StaticColumn{std::move(name), false, std::move(v), {}};
}
StaticColumn text(std::string name, std::vector<std::string> v) {
  return StaticColumn{std::move(name), true, {}, std::move(v)};
}
}  // namespace

TEST_CASE("static encoder: z-scores over series, vocabularies with an unseen code 0") {
  const std::vector<StaticColumn> train{numeric("size", {1, 2, 3, 4}),
                                        text("region", {"north", "south", "north", "east"}),
                                        numeric("flat", {3, 3, 3, 3})};
  const StaticEncoder enc = StaticEncoder::fit(train);
  REQUIRE(enc.columns.size() == 3);
  CHECK(enc.columns[0].mean == 2.5f);
  CHECK(enc.columns[0].scale == static_cast<float>(std::sqrt(1.25)));
  CHECK(enc.columns[1].categories == std::vector<std::string>{"north", "south", "east"});
  CHECK(enc.columns[2].mean == 3.0f);
  CHECK(enc.columns[2].scale == 1.0f);  // constant: only centred
  CHECK(enc.numeric_width() == 2);
  CHECK(enc.categorical_width() == 1);
  CHECK(enc.category_sizes() == std::vector<int>{4});
  std::vector<float> num;
  std::vector<int32_t> codes;
  const std::vector<StaticColumn> test{numeric("size", {2.5f, 4, 0}),
                                       text("region", {"east", "west", "north"}),
                                       numeric("flat", {3, 5, 3})};
  CHECK(enc.encode(test, &num, &codes) == 1);  // "west" was not seen in training
  const float s = static_cast<float>(std::sqrt(1.25));
  REQUIRE(num.size() == 6);
  CHECK(num[0] == 0.0f);
  CHECK(num[1] == 0.0f);
  CHECK(num[2] == doctest::Approx(1.5 / s));
  CHECK(num[3] == 2.0f);
  CHECK(num[4] == doctest::Approx(-2.5 / s));
  CHECK(num[5] == 0.0f);
  CHECK(codes == std::vector<int32_t>{3, 0, 1});
  CHECK(enc.encode(train, &num, &codes) == 0);
  CHECK(codes == std::vector<int32_t>{1, 2, 1, 3});
}

TEST_CASE("static encoder: columns that differ from the model's are refused") {
  const StaticEncoder enc =
      StaticEncoder::fit({numeric("size", {1, 2}), text("region", {"a", "b"})});
  std::vector<float> num;
  std::vector<int32_t> codes;
  const auto encode = [&](const std::vector<StaticColumn>& cols) {
    return static_error_of([&] { enc.encode(cols, &num, &codes); });
  };
  CHECK(encode({numeric("size", {1}), numeric("region", {1})}) ==
        "static column 2: found 'region' (numeric), expected the model's static columns: size "
        "(numeric), region (categorical)");
  CHECK(encode({text("region", {"a"}), numeric("size", {1})})
            .find("static column 1: found "
                  "'region' (categorical)") == 0);
  CHECK(encode({numeric("size", {1})}).find("static column 2: found no column, expected") == 0);
  CHECK(encode({numeric("size", {1}), text("region", {"a", "b"})}) ==
        "static column 'region': found 2 series, expected 1 like column 'size'");
  CHECK(static_error_of([&] { StaticEncoder{}.encode({numeric("x", {1})}, &num, &codes); }) ==
        "static column 1: found 'x' (numeric), expected the model's static columns: none");
}

TEST_CASE("static encoder: JSON round trip, exact, and a malformed object names the key") {
  const StaticEncoder enc = StaticEncoder::fit(
      {numeric("size", {0.1f, 0.7f, 1e6f}), text("region", {"n\"o", "s", "n\"o"})});
  const nlohmann::json j = nlohmann::json::parse(enc.to_json().dump());
  CHECK(j["columns"][0]["kind"] == "numeric");
  CHECK(j["columns"][1]["categories"] == nlohmann::json{"n\"o", "s"});
  const StaticEncoder back = StaticEncoder::from_json(j, "static_encoder");
  REQUIRE(back.columns.size() == 2);
  CHECK(back.columns[0].name == "size");
  CHECK_FALSE(back.columns[0].categorical);
  CHECK(back.columns[0].mean == enc.columns[0].mean);    // bit for bit
  CHECK(back.columns[0].scale == enc.columns[0].scale);  // bit for bit
  CHECK(back.columns[1].categorical);
  CHECK(back.columns[1].categories == enc.columns[1].categories);
  CHECK(StaticEncoder::from_json(StaticEncoder{}.to_json(), "x").columns.empty());
  const auto bad = [](const char* text) {
    return static_error_of([&] { StaticEncoder::from_json(nlohmann::json::parse(text), "m.st"); });
  };
  CHECK(bad("[]") == "m.st: found [], expected an object with the key columns");
  CHECK(bad("{}") == "m.st.columns: missing, expected an array of static columns");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "ordinal"}]})") ==
        "m.st.columns[0].kind: found \"ordinal\", expected \"numeric\" or \"categorical\"");
  CHECK(bad(R"({"columns": [{"kind": "numeric"}]})") ==
        "m.st.columns[0].name: missing, expected a column name");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "numeric", "mean": 0, "scale": 0}]})") ==
        "m.st.columns[0].scale: found 0, expected a finite number > 0");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "numeric", "scale": 1}]})") ==
        "m.st.columns[0].mean: missing, expected a number");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "numeric", "mean": "1", "scale": 1}]})") ==
        "m.st.columns[0].mean: found \"1\", expected a finite number");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "categorical", "categories": "x"}]})") ==
        "m.st.columns[0].categories: found \"x\", expected an array of category names");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "categorical", "categories": ["x", "x"]}]})") ==
        "m.st.columns[0].categories[1]: found \"x\", expected each name once");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "categorical", "categories": [1]}]})") ==
        "m.st.columns[0].categories[0]: found 1, expected a string");
  CHECK(bad(R"({"columns": [{"name": "a", "kind": "categorical", "categories": []},
                            {"name": "a", "kind": "categorical", "categories": []}]})") ==
        "m.st.columns[1].name: found \"a\", expected a name not used by an earlier column");
  CHECK(bad(R"({"columns": [3]})") ==
        "m.st.columns[0]: found 3, expected an object with name "
        "and kind");
}
