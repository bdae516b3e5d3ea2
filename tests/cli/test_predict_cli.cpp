// attnfc predict on histories it can forecast from but should not do so silently (a short
// history, another frequency, missing last rows), --strict, and several inputs at once.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attnfc/base/safetensors.hpp"
#include "attnfc/data/time.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
    out.push_back(text.substr(at, nl - at));
  if (at < text.size()) out.push_back(text.substr(at));
  return out;
}

// The lines of `text` that contain `part`.
int count_lines_with(const std::string& text, const std::string& part) {
  int n = 0;
  for (const std::string& line : lines_of(text)) n += contains(line, part);
  return n;
}

// ETTh1 rows [first, first + count) (header included), OT only unless `all_columns`.
std::string etth1_rows(int first, int count) {
  std::ifstream in(std::string(ATTNFC_SOURCE_DIR) + "/datasets/ETTh1.csv");
  std::string line, out;
  std::getline(in, line);
  out = "date,OT\n";
  for (int i = 0; i < first + count && std::getline(in, line); ++i)
    if (i >= first) out += line.substr(0, line.find(',')) + line.substr(line.rfind(',')) + "\n";
  return out;
}

// One micro model (context 32, horizon 8, hourly OT, data.missing ffill) for every case.
struct Trained : cli_test::MicroModel {
  Trained() : MicroModel("attnfc_cli_predict_", R"("missing": "ffill",)") {}
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir + "/" + name;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }
};

const Trained& trained() {
  static const Trained t;
  return t;
}

struct Split {
  int code;
  std::string out, err;
};

// predict with stdout and stderr kept apart.
Split predict(const std::string& args) {
  const Trained& t = trained();
  const std::string err = t.dir + "/stderr.txt";
  const Run r = cli_test::sh("{ " + std::string(ATTNFC_BINARY) + " predict --model " + t.model +
                             " " + args + " 2>" + err + "; }");
  return {r.code, r.out, slurp(err)};
}

// 60 weekly rows (Mondays from 2020-01-06) with ETTh1's OT values.
std::string weekly_csv() {
  std::string text = "date,OT\n";
  const std::vector<std::string> rows = lines_of(etth1_rows(0, 60));
  const int64_t start = attnfc::data::to_unix_seconds(2020, 1, 6);
  for (size_t i = 1; i < rows.size(); ++i)
    text += attnfc::data::format_timestamp(start + static_cast<int64_t>(i - 1) * 7 * 86400,
                                           {attnfc::data::TimeFormat::kDate, '-', ' '}) +
            rows[i].substr(rows[i].find(',')) + "\n";
  return text;
}

// ETTh1 rows 0..59 with OT blank in the last three (2016-07-03 09:00 .. 11:00).
std::string trailing_na_csv() {
  std::string text;
  const std::vector<std::string> rows = lines_of(etth1_rows(0, 60));
  for (size_t i = 0; i < rows.size(); ++i)
    text += (i + 3 >= rows.size() ? rows[i].substr(0, rows[i].find(',') + 1) : rows[i]) + "\n";
  return text;
}

}  // namespace

TEST_CASE("predict: one input prints what it always did, with no warning") {
  const Trained& t = trained();
  const Split s = predict("--input " + t.csv);
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CHECK(s.err.empty());
  const std::vector<std::string> rows = lines_of(s.out);
  REQUIRE(rows.size() == 1 + 8);
  CHECK(rows[0] == "date,OT");
  CHECK(rows[1].rfind("2016-07-30 04:00:00,", 0) == 0);  // the row after 03:00, the last
  CHECK(rows[8].rfind("2016-07-30 11:00:00,", 0) == 0);
  CHECK(s.out.back() == '\n');
  // To a file: the same bytes, and the one summary line on stderr.
  const Split f = predict("-i " + t.csv + " --output " + t.dir + "/one.csv");
  REQUIRE_MESSAGE(f.code == 0, f.err);
  CHECK(slurp(t.dir + "/one.csv") == s.out);
  CHECK(f.err == "forecast of 8 steps x 1 columns -> " + t.dir + "/one.csv\n");
  // --strict changes nothing for a clean history.
  const Split strict = predict("--strict -i " + t.csv);
  CHECK(strict.code == 0);
  CHECK(strict.out == s.out);
  CHECK(strict.err.empty());
}

TEST_CASE("predict: a history shorter than the context is a warning, an error with --strict") {
  const Trained& t = trained();
  const std::string csv = t.write("short.csv", etth1_rows(0, 10));
  Split s = predict("--input " + csv);
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CAPTURE(s.err);
  CHECK(lines_of(s.err).size() == 1);
  CHECK(contains(s.err, "[warning] " + csv +
                            ": 10 rows of history, the model reads 32 (model.context_length); "
                            "the first 22 context steps are treated as missing\n"));
  CHECK(lines_of(s.out).size() == 1 + 8);
  CHECK(s.out.rfind("date,OT\n2016-07-01 10:00:00,", 0) == 0);

  s = predict("--strict --input " + csv + " --output " + t.dir + "/short_fc.csv");
  CHECK(s.code == 2);
  CHECK(lines_of(s.err).size() == 1);
  CHECK(contains(s.err, csv + ": 10 rows of history, the model reads 32 "
                              "(model.context_length); refused by --strict"));
  CHECK(s.out.empty());
  CHECK_FALSE(fs::exists(t.dir + "/short_fc.csv"));
}

TEST_CASE("predict: weekly data for an hourly model is a warning, an error with --strict") {
  const Trained& t = trained();
  const std::string csv = t.write("weekly.csv", weekly_csv());
  Split s = predict("-i " + csv);
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CAPTURE(s.err);
  CHECK(lines_of(s.err).size() == 1);
  CHECK(contains(s.err, "[warning] " + csv +
                            ": frequency 1w, the model was trained on 1h data; the forecast "
                            "continues this file's rows, with timestamps 1w apart\n"));
  // 60 Mondays from 2020-01-06: the last is 2021-02-22.
  CHECK(s.out.rfind("date,OT\n2021-03-01,", 0) == 0);
  s = predict("-i " + csv + " --strict");
  CHECK(s.code == 2);
  CHECK(contains(s.err, csv + ": frequency 1w, the model was trained on 1h data; refused by "
                              "--strict"));
  CHECK(s.out.empty());
}

TEST_CASE("predict: missing values in the last rows are a warning, an error with --strict") {
  const Trained& t = trained();
  const std::string csv = t.write("tail_na.csv", trailing_na_csv());
  Split s = predict("-i " + csv);
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CAPTURE(s.err);
  CHECK(lines_of(s.err).size() == 1);
  CHECK(contains(s.err, "[warning] " + csv +
                            ": the last 3 rows (from 2016-07-03 09:00:00) have missing values "
                            "in OT; the model reads them as missing (data.missing ffill) and "
                            "the forecast starts after them\n"));
  CHECK(s.out.rfind("date,OT\n2016-07-03 12:00:00,", 0) == 0);  // after 11:00, the last row
  // Only the last row: said in the singular.
  std::string one = etth1_rows(0, 60);
  one = one.substr(0, one.rfind(',') + 1) + "\n";
  s = predict("-i " + t.write("last_na.csv", one));
  CHECK(s.code == 0);
  CHECK(contains(s.err, "the last row (2016-07-03 11:00:00) has missing values in OT;"));
  // A gap inside the history, not at its end, is not warned about.
  std::vector<std::string> rows = lines_of(etth1_rows(0, 60));
  rows[30] = rows[30].substr(0, rows[30].find(',') + 1);
  std::string inner;
  for (const std::string& r : rows) inner += r + "\n";
  s = predict("-i " + t.write("inner_na.csv", inner));
  CHECK(s.code == 0);
  CHECK(s.err.empty());

  s = predict("--strict -i " + csv);
  CHECK(s.code == 2);
  CHECK(contains(s.err,
                 ": the last 3 rows (from 2016-07-03 09:00:00) have missing values in "
                 "OT; refused by --strict"));
}

TEST_CASE("predict: several findings are one line each") {
  const Trained& t = trained();
  std::string text = etth1_rows(0, 12);
  text = text.substr(0, text.rfind(',') + 1) + "\n";
  const std::string csv = t.write("short_na.csv", text);
  const Split s = predict("-i " + csv);
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CAPTURE(s.err);
  CHECK(lines_of(s.err).size() == 2);
  CHECK(count_lines_with(s.err, "[warning] " + csv + ": 12 rows of history") == 1);
  CHECK(count_lines_with(s.err, "[warning] " + csv + ": the last row (") == 1);
}

TEST_CASE("predict: several inputs print one long CSV with a series column") {
  const Trained& t = trained();
  const std::string a = t.write("multi/shop_a.csv", etth1_rows(0, 100));
  const std::string b = t.write("multi/shop_b.csv", etth1_rows(200, 100));
  const Split one_a = predict("-i " + a), one_b = predict("-i " + b);
  REQUIRE(one_a.code == 0);
  REQUIRE(one_b.code == 0);
  CHECK(one_a.out != one_b.out);
  Split s = predict("-i " + a + " -i " + b);
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CHECK(s.err.empty());
  // The long file is each input's own forecast, in input order, behind its name.
  std::string expected = "series,date,OT\n";
  const std::vector<std::pair<std::string, std::string>> singles{{"shop_a", one_a.out},
                                                                 {"shop_b", one_b.out}};
  for (const auto& [name, single] : singles) {
    const std::vector<std::string> rows = lines_of(single);
    for (size_t i = 1; i < rows.size(); ++i) expected += name + "," + rows[i] + "\n";
  }
  CHECK(s.out == expected);
  CHECK(lines_of(s.out).size() == 1 + 2 * 8);
  // One flag with several values, and a long file written with --output.
  s = predict("-i " + a + " " + b + " --output " + t.dir + "/long.csv");
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CHECK(slurp(t.dir + "/long.csv") == expected);
  CHECK(contains(s.err, "forecasts of 2 inputs -> " + t.dir + "/long.csv"));
}

TEST_CASE("predict: several inputs with --output DIR/ or {name} write one file per input") {
  const Trained& t = trained();
  const std::string a = t.write("files/shop_a.csv", etth1_rows(0, 100));
  const std::string b = t.write("files/shop_b.csv", etth1_rows(200, 100));
  const std::string want_a = predict("-i " + a).out, want_b = predict("-i " + b).out;
  Split s = predict("-i " + a + " -i " + b + " --output " + t.dir + "/fc/");
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CHECK(slurp(t.dir + "/fc/shop_a.csv") == want_a);  // the folder was created
  CHECK(slurp(t.dir + "/fc/shop_b.csv") == want_b);
  CHECK(count_lines_with(s.err, "forecast of 8 steps x 1 columns -> ") == 2);
  CHECK(s.out.empty());
  s = predict("-i " + a + " -i " + b + " --output '" + t.dir + "/{name}_forecast.csv'");
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CHECK(slurp(t.dir + "/shop_a_forecast.csv") == want_a);
  CHECK(slurp(t.dir + "/shop_b_forecast.csv") == want_b);
  // An existing folder without the trailing slash is a folder too.
  s = predict("-i " + a + " --output " + t.dir + "/fc");
  CHECK(s.code == 0);
  CHECK(slurp(t.dir + "/fc/shop_a.csv") == want_a);
}

TEST_CASE("predict: several inputs refuse outputs over inputs, equal names and --strict findings") {
  const Trained& t = trained();
  const std::string a = t.write("refuse/shop_a.csv", etth1_rows(0, 100));
  const std::string b = t.write("refuse/shop_b.csv", etth1_rows(200, 100));
  const std::string before_a = slurp(a);
  // {name}.csv in the inputs' own folder would overwrite them.
  Split s = predict("-i " + a + " -i " + b + " --output '" + t.dir + "/refuse/{name}.csv'");
  CHECK(s.code == 2);
  CHECK(contains(s.err, "is the same file as --input " + a));
  CHECK(slurp(a) == before_a);
  s = predict("-i " + a + " -i " + b + " --output " + b);
  CHECK(s.code == 2);
  CHECK(contains(s.err, "is the same file as --input " + b));
  // Two inputs with the same name could not be told apart.
  const std::string other = t.write("refuse/other/shop_a.csv", etth1_rows(300, 100));
  s = predict("-i " + a + " -i " + other);
  CHECK(s.code == 2);
  CHECK(contains(s.err, "both are named 'shop_a'"));
  CHECK(s.out.empty());
  // --strict: a finding in the second input writes nothing, not even the first's file.
  const std::string short_csv = t.write("refuse/tiny.csv", etth1_rows(0, 10));
  s = predict("--strict -i " + a + " -i " + short_csv + " --output " + t.dir + "/strict/");
  CHECK(s.code == 2);
  CHECK(lines_of(s.err).size() == 1);
  CHECK(contains(s.err, short_csv + ": 10 rows of history"));
  CHECK_FALSE(fs::exists(t.dir + "/strict"));
  // Without --strict the same pair is forecast, with the one warning.
  s = predict("-i " + a + " -i " + short_csv + " --output " + t.dir + "/lax/");
  CHECK(s.code == 0);
  CHECK(count_lines_with(s.err, "[warning]") == 1);
  CHECK(fs::exists(t.dir + "/lax/tiny.csv"));
  CHECK(fs::exists(t.dir + "/lax/shop_a.csv"));
}

namespace {

// A copy of the micro model at dir/<name>/model.safetensors with tensor `tensor` changed
// by `edit`, then predict on it writing dir/<name>/fc.csv: the run, and the copy's path.
std::pair<Run, std::string> predict_with_edited(
    const std::string& name, const std::string& tensor,
    const std::function<void(std::vector<float>&)>& edit) {
  const Trained& t = trained();
  const std::string path = t.dir + "/" + name + "/model.safetensors";
  fs::create_directories(fs::path(path).parent_path());
  auto file = attnfc::safetensors::read(t.model);
  bool found = false;
  for (auto& each : file.tensors) {
    if (each.name != tensor) continue;
    edit(each.values);
    found = true;
  }
  REQUIRE(found);
  attnfc::safetensors::write(path, file);
  return {run_attnfc("predict --model " + path + " --input " + t.csv + " --output " + t.dir + "/" +
                     name + "/fc.csv"),
          path};
}

}  // namespace

TEST_CASE("predict: a model file with a non-finite weight is refused when loaded, tensor named") {
  const auto [r, path] = predict_with_edited("poisoned", "embed.weight", [](std::vector<float>& v) {
    v.at(3) = std::numeric_limits<float>::infinity();
  });
  CHECK(r.code == 2);
  CHECK_MESSAGE(contains(r.out, path + ": tensor 'embed.weight' holds an infinite value at "
                                       "element 3; expected finite"),
                r.out);
  CHECK_FALSE(fs::exists(trained().dir + "/poisoned/fc.csv"));
}

TEST_CASE("predict: a forecast that overflows names the input, never writes NaN") {
  // Finite weights, so the file loads; the head's products overflow.
  const auto [r, path] = predict_with_edited("huge", "head.weight", [](std::vector<float>& v) {
    for (float& x : v) x = 3e38f;
  });
  CHECK(r.code == 2);
  CHECK_MESSAGE(contains(r.out, trained().csv + ": " + path +
                                    " forecasts NaN or infinite values from its last 32 rows; "
                                    "expected finite values"),
                r.out);
  CHECK_FALSE(fs::exists(trained().dir + "/huge/fc.csv"));
}

TEST_CASE("predict: a column missing in every row the model reads is named, exit 2") {
  const Trained& t = trained();
  std::ifstream in(t.csv);
  std::string text, line;
  for (int row = 0; row <= 100 && std::getline(in, line); ++row)             // header + 100 rows
    text += (row > 60 ? line.substr(0, line.rfind(',') + 1) : line) + "\n";  // OT empty
  const std::string csv = t.write("gap/in.csv", text);
  const Split r = predict("--input " + csv + " --output " + t.dir + "/gap/fc.csv");
  CHECK(r.code == 2);
  CHECK_MESSAGE(
      contains(r.err, csv + ": column 'OT' is missing in all of the last 32 rows, which " +
                          t.model + " reads; expected at least one value there"),
      r.err);
  CHECK_FALSE(fs::exists(t.dir + "/gap/fc.csv"));
}
