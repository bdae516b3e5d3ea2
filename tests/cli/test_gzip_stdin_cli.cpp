// Issue 22: a CSV from standard input ("-") and gzip-compressed CSVs, end to end. Each
// output is compared byte for byte with the one the plain file gives.
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <string>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::sh;

namespace {

// `from` gzip-compressed into `to` (zlib's gzip writer), so no gzip program is needed.
void gzip_file(const std::string& from, const std::string& to) {
  const std::string text = cli_test::slurp(from);
  gzFile g = gzopen(to.c_str(), "wb");
  REQUIRE(g != nullptr);
  REQUIRE(gzwrite(g, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  REQUIRE(gzclose(g) == Z_OK);
}

const std::string kBin = ATTNFC_BINARY;

}  // namespace

TEST_CASE("inspect reads a .csv.gz, gzip under any name, and standard input") {
  cli_test::ScratchDir s("attnfc_gzip_inspect_");
  namespace fs = std::filesystem;
  const std::string csv = cli_test::write_etth1_head(s.dir, 400);
  fs::create_directories(s.dir + "/gz");
  gzip_file(csv, s.dir + "/gz/etth1_head.csv");  // gzip content, a .csv name
  gzip_file(csv, s.dir + "/etth1_head.csv.gz");
  const Run plain = sh("cd " + s.dir + " && " + kBin + " inspect etth1_head.csv");
  REQUIRE_MESSAGE(plain.code == 0, plain.out);
  // The same relative path: the output, the "file" line included, is the same.
  const Run magic = sh("cd " + s.dir + "/gz && " + kBin + " inspect etth1_head.csv");
  CHECK(magic.code == 0);
  CHECK(magic.out == plain.out);
  // Past the "file" line, every other line is the same for .csv.gz and standard input.
  const auto after_file_line = [](const std::string& out) { return out.substr(out.find('\n')); };
  const Run gz = run_attnfc("inspect " + s.dir + "/etth1_head.csv.gz");
  CHECK(gz.code == 0);
  CHECK(after_file_line(gz.out) == after_file_line(plain.out));
  const Run piped = sh("cat " + csv + " | " + kBin + " inspect -");
  CHECK(piped.code == 0);
  CHECK(after_file_line(piped.out) == after_file_line(plain.out));
  CHECK(contains(piped.out, "file       <stdin>\n"));
  const Run piped_gz = sh("cat " + s.dir + "/etth1_head.csv.gz | " + kBin + " inspect -");
  CHECK(piped_gz.code == 0);
  CHECK(after_file_line(piped_gz.out) == after_file_line(plain.out));
  const Run redirected = sh(kBin + " inspect - < " + s.dir + "/etth1_head.csv.gz");
  CHECK(redirected.code == 0);
  CHECK(after_file_line(redirected.out) == after_file_line(plain.out));
}

TEST_CASE("a broken gzip or standard-input CSV is one error line naming <stdin> or the file") {
  cli_test::ScratchDir s("attnfc_gzip_errors_");
  const std::string csv = cli_test::write_etth1_head(s.dir, 400);
  const std::string gz = s.dir + "/etth1_head.csv.gz";
  gzip_file(csv, gz);
  const Run cut = sh("head -c 2000 " + gz + " | " + kBin + " inspect -");
  CHECK(cut.code == 2);
  CHECK(contains(cut.out, "<stdin>: the CSV file is truncated: it ends inside gzip member 1"));
  CHECK(cut.out.find('\n') == cut.out.size() - 1);
  sh("head -c 2000 " + gz + " > " + s.dir + "/cut.csv.gz");
  const Run cut_file = run_attnfc("inspect " + s.dir + "/cut.csv.gz");
  CHECK(cut_file.code == 2);
  CHECK(contains(cut_file.out, s.dir + "/cut.csv.gz: the CSV file is truncated"));
  // A CSV error on standard input names <stdin> and the line.
  const Run bad = sh("printf 'date,v\\n2020-01-01,1\\n2020-01-02,x\\n' | " + kBin + " inspect -");
  CHECK(bad.code == 2);
  CHECK(contains(bad.out, "<stdin>"));
  // An empty standard input.
  const Run empty = sh(kBin + " inspect - < /dev/null");
  CHECK(empty.code == 2);
  // train refuses data.path "-" before anything is written, and says why.
  std::ofstream(s.dir + "/stdin.json") << R"({"data": {"path": "-", "columns": ["OT"]}})";
  const Run train = run_attnfc("train --config " + s.dir + "/stdin.json --out " + s.dir + "/run");
  CHECK(train.code == 2);
  CHECK(contains(train.out, "data.path: found \"-\" (standard input), expected a file"));
  CHECK_FALSE(std::filesystem::exists(s.dir + "/run"));
}

TEST_CASE("predict -i - and -i data.csv.gz forecast what the plain file forecasts") {
  cli_test::MicroModel m("attnfc_gzip_predict_");
  const std::string gz = m.dir + "/etth1_head.csv.gz";
  gzip_file(m.csv, gz);
  const std::string predict = kBin + " predict -m " + m.model;
  const Run plain = sh(predict + " -i " + m.csv);
  REQUIRE_MESSAGE(plain.code == 0, plain.out);
  for (const std::string& cmd :
       {predict + " -i " + gz, "cat " + m.csv + " | " + predict + " -i -",
        "cat " + gz + " | " + predict + " -i -", predict + " -i - < " + m.csv}) {
    const Run r = sh(cmd);
    CHECK_MESSAGE(r.code == 0, cmd);
    CHECK_MESSAGE(r.out == plain.out, cmd);
  }
  // evaluate on the .csv.gz scores what the plain file scores.
  const Run eval_plain =
      run_attnfc("evaluate -m " + m.model + " -i " + m.csv + " --json " + m.dir + "/plain.json");
  const Run eval_gz =
      run_attnfc("evaluate -m " + m.model + " -i " + gz + " --json " + m.dir + "/gz.json");
  CHECK(eval_plain.code == 0);
  CHECK(eval_gz.code == 0);
  CHECK(contains(eval_gz.out, "test"));
  const Run eval_stdin = sh("cat " + gz + " | " + kBin + " evaluate -m " + m.model +
                            " -i - --json " + m.dir + "/stdin.json");
  CHECK_MESSAGE(eval_stdin.code == 0, eval_stdin.out);
  CHECK(contains(cli_test::slurp(m.dir + "/stdin.json"), "\"input\": \"<stdin>\""));
  // Several inputs: standard input is named "stdin" in the long CSV's series column.
  const Run two = sh("cat " + gz + " | " + predict + " -i - -i " + m.csv);
  CHECK_MESSAGE(two.code == 0, two.out);
  CHECK(contains(two.out, "\nstdin,"));
  CHECK(contains(two.out, "\netth1_head,"));
  // Standard input is read once: a second "-" says so.
  const Run same = sh("cat " + m.csv + " | " + predict + " -i - -i -");
  CHECK(same.code == 2);
  CHECK(contains(same.out, "stdin"));
  std::ofstream(m.dir + "/long.csv") << "id,v\na,1\na,2\n";
  const Run twice =
      sh("cat " + m.dir + "/long.csv | " + kBin + " score --forecast - --actual - --history " +
         m.dir + "/long.csv --id-column id --value-column v --season 1");
  CHECK(twice.code == 2);
  CHECK(contains(twice.out, "<stdin>: standard input was read already"));
}
