// Static features of a long file (data.static): one value per series, numeric or
// categorical, read by the cross-attention decoder. Trained and predicted as a user runs
// them; a value that changes within a series and an unseen category handled as documented.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "cli_run.hpp"

using cli_test::contains;
using cli_test::Run;
using cli_test::run_attnfc;
using cli_test::slurp;

namespace {

struct Statics : cli_test::ScratchDir {
  Statics() : ScratchDir("attnfc_static_") {}
  // Three hourly series A, B, C of 240 rows: id,date,value,region,size. `region_c` is
  // series C's region; `flip_row` >= 0 changes series B's size on that row.
  std::string panel(const std::string& name, const std::string& region_c = "north",
                    int flip_row = -1) const {
    const std::string path = dir + "/" + name;
    std::ofstream out(path);
    out << "id,date,value,region,size\n";
    const char* ids[] = {"A", "B", "C"};
    for (int k = 0; k < 3; ++k)
      for (int t = 0; t < 240; ++t) {
        const int day = 1 + t / 24, hour = t % 24;
        char date[32];
        std::snprintf(date, sizeof date, "2021-03-%02d %02d:00", day, hour);
        const double v = 10 * (k + 1) + (k + 1) * std::sin(0.2618 * t) + 0.01 * ((t * 7) % 5);
        const std::string region = k == 0 ? "north" : k == 1 ? "south" : region_c;
        const double size = (k == 1 && t == flip_row) ? 9.5 : 1.0 + k;
        out << ids[k] << "," << date << "," << v << "," << region << "," << size << "\n";
      }
    return path;
  }
  std::string config(const std::string& csv) const {
    const std::string path = dir + "/static.json";
    std::ofstream(path) << R"({
  "data": {"path": ")" + csv + R"(", "id_column": "id", "targets": ["value"],
           "static": ["region", "size"], "split": {"train_frac": 0.6, "test_frac": 0.2}},
  "model": {"context_length": 24, "patch_len": 6, "horizon": 6, "d_model": 8, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "linear_lookback": 0,
            "decoder": "cross_attention", "loss_positions": "last"},
  "train": {"epochs": 1, "batch_size": 16, "max_steps_per_epoch": 4, "lr": 0.003, "seed": 3,
            "linear_init": "zero"}
})";
    return path;
  }
};

}  // namespace

TEST_CASE("static features: trained per series; an unseen category predicts with a warning") {
  Statics s;
  const Run train =
      run_attnfc("train --config " + s.config(s.panel("p.csv")) + " --out " + s.dir + "/run");
  REQUIRE_MESSAGE(train.code == 0, train.out);
  const std::string resolved = slurp(s.dir + "/run/config.json");
  CHECK(contains(resolved, "\"static_numeric\": 1"));
  CHECK(contains(resolved, "\"static_categories\": [\n      3\n    ]"));
  const std::string model = s.dir + "/run/model.safetensors";
  const Run seen = run_attnfc("predict -m " + model + " -i " + s.panel("p.csv"));
  REQUIRE_MESSAGE(seen.code == 0, seen.out);
  CHECK(contains(seen.out, "id,date,value\nA,2021-03-11 00:00,"));
  const Run unseen = run_attnfc("predict -m " + model + " -i " + s.panel("q.csv", "east"));
  REQUIRE_MESSAGE(unseen.code == 0, unseen.out);
  CHECK(contains(unseen.out, "1 static value(s) name a category the model was not trained on"));
  // Series C's forecast differs, A's and B's do not: only C's region changed.
  const auto series_rows = [](const std::string& out, const std::string& id) {
    std::string rows;
    for (size_t at = out.find("\n" + id + ","); at != std::string::npos;
         at = out.find("\n" + id + ",", at + 1))
      rows += out.substr(at, out.find('\n', at + 1) - at);
    return rows;
  };
  CHECK(series_rows(seen.out, "A") == series_rows(unseen.out, "A"));
  CHECK(series_rows(seen.out, "C") != series_rows(unseen.out, "C"));
  // A file holding only series C, whose region is "10": still read as a category (as
  // training read the column), an unseen one, not refused as a number.
  std::string only_c = "id,date,value,region,size\n";
  const std::string all = slurp(s.panel("r.csv", "10"));
  for (size_t at = all.find("\nC,"); at != std::string::npos; at = all.find("\nC,", at + 1))
    only_c += all.substr(at + 1, all.find('\n', at + 1) - at);
  std::ofstream(s.dir + "/only_c.csv") << only_c;
  const Run c = run_attnfc("predict -m " + model + " -i " + s.dir + "/only_c.csv");
  REQUIRE_MESSAGE(c.code == 0, c.out);
  CHECK(contains(c.out, "1 static value(s) name a category"));
}

TEST_CASE("static features: a value that changes within a series is refused, exit 2") {
  Statics s;
  const Run r = run_attnfc("train --config " + s.config(s.panel("p.csv", "north", 17)) + " --out " +
                           s.dir + "/run");
  CHECK(r.code == 2);
  CHECK_MESSAGE(contains(r.out, "size"), r.out);
  CHECK_MESSAGE(contains(r.out, "'B'"), r.out);
}
