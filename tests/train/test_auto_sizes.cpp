// "auto" sizes (train/auto_sizes.hpp): chosen from the series length and frequency, the
// known benchmarks' protocols kept, and sizes that cannot fit named with a value that does.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/train/auto_sizes.hpp"
#include "attnfc/train/run_config.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc;
using nlohmann::json;

namespace {

// One series of `rows` steps of `freq` (a wide file), or a panel of several.
data::TimeSeries make_series(const std::vector<size_t>& lengths, const char* freq) {
  data::TimeSeries s;
  s.source = "file.csv";
  s.channels = {"y"};
  s.frequency = data::Frequency::parse(freq);
  if (lengths.size() > 1) s.id_column = "id";
  for (size_t k = 0; k < lengths.size(); ++k) {
    const size_t begin = s.rows();
    for (size_t t = 0; t < lengths[k]; ++t) {
      s.timestamps.push_back(s.frequency.advance(0, static_cast<int64_t>(t)));
      s.values.push_back(static_cast<float>(t % 7));
      s.observed.push_back(1);
    }
    if (lengths.size() > 1) s.segments.push_back({"S" + std::to_string(k), begin, s.rows()});
  }
  s.missing_per_channel = {0};
  return s;
}

// default.json's sizes, with `model` edits, for the file `path`.
train::RunConfig sized_config(const std::string& path, const json& model = json::object(),
                              const json& split = "auto") {
  json m = {{"context_length", "auto"},
            {"horizon", "auto"},
            {"patch_len", "auto"},
            {"linear_lookback", "auto"}};
  m.update(model);
  return train::parse_run_config(
      json{{"data", {{"path", path}, {"split", split}}}, {"model", m}, {"train", json::object()}});
}

std::string sizes_error_of(train::RunConfig c, const data::TimeSeries& s) {
  try {
    train::resolve_sizes(c, s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("auto sizes: a 60-row monthly file gets sizes its 70/10/20 split can hold") {
  train::RunConfig c = sized_config("sales.csv");
  CHECK(c.auto_sizes.context);
  CHECK(c.auto_sizes.lookback);
  train::resolve_sizes(c, make_series({60}, "1mo"));
  // val has 60 - 42 - 12 = 6 target rows: M4's monthly 18 is cut to 6; the context takes
  // half the 42 - 6 training rows the horizon leaves (18), in patches of 2: 19 training
  // windows for the 18 weights of the least-squares fits.
  CHECK(c.model.horizon == 6);
  CHECK(c.model.context_length == 18);
  CHECK(c.model.patch_len == 2);
  CHECK(c.model.linear_lookback == 18);
  const data::PanelSplit sp = train::make_panel_split(c.data, make_series({60}, "1mo"), 18, 6);
  CHECK(sp.splits.size() == 1);
}

TEST_CASE("auto sizes: ETTh1 keeps its protocol, other hourly data M4's horizon") {
  train::RunConfig ett = sized_config("datasets/ETTh1.csv");
  train::resolve_sizes(ett, make_series({17420}, "1h"));
  CHECK(ett.model.horizon == 96);
  CHECK(ett.model.context_length == 336);
  CHECK(ett.model.patch_len == 16);
  CHECK(ett.model.linear_lookback == 336);

  train::RunConfig other = sized_config("load.csv");
  train::resolve_sizes(other, make_series({2000}, "1h"));
  CHECK(other.model.horizon == 48);
  CHECK(other.model.context_length == 192);  // 4 horizons
  CHECK(other.model.patch_len == 16);

  train::RunConfig weekly = sized_config("flu.csv");
  train::resolve_sizes(weekly, make_series({900}, "1w"));
  CHECK(weekly.model.horizon == 13);
  CHECK(weekly.model.context_length == 104);  // 2 seasons of 52 weeks, patches of 13
}

TEST_CASE("auto sizes: mixed channels have no shortcut; a given context keeps its number") {
  train::RunConfig mixed = sized_config("sales.csv", {{"channel_mode", "mixed"}});
  train::resolve_sizes(mixed, make_series({144}, "1mo"));
  CHECK(mixed.model.linear_lookback == 0);
  CHECK(mixed.model.context_length == 40);  // (100 - 16) / 2 = 42, in patches of 5

  train::RunConfig given = sized_config("sales.csv", {{"context_length", 40}});
  CHECK(!given.auto_sizes.context);
  train::resolve_sizes(given, make_series({144}, "1mo"));
  CHECK(given.model.context_length == 40);
  CHECK(given.model.patch_len == 5);  // 8 tokens
  CHECK(given.model.linear_lookback == 40);
}

TEST_CASE("auto sizes: a panel is fitted to its median series") {
  train::RunConfig c = sized_config("panel.csv");
  train::resolve_sizes(c, make_series({60, 400, 400}, "1d"));
  CHECK(c.model.horizon == 14);
  CHECK(c.model.context_length == 56);
}

TEST_CASE("given sizes that cannot fit name the key and a value that works") {
  const data::TimeSeries s = make_series({60}, "1mo");
  std::string e = sizes_error_of(sized_config("sales.csv", {{"horizon", 12}}), s);
  CHECK(contains(e, "model.horizon: found 12"));
  CHECK(contains(e, "expected at most 6"));
  e = sizes_error_of(sized_config("sales.csv", {{"horizon", 6}, {"context_length", 48}}), s);
  CHECK(contains(e, "model.context_length: found 48"));
  CHECK(contains(e, "a context of at most 36"));
  e = sizes_error_of(sized_config("sales.csv", json::object(), "etth"), s);
  CHECK(contains(e, "data.split"));
  CHECK(contains(e, "\"auto\""));
  e = sizes_error_of(sized_config("sales.csv", {{"patch_len", 32}}), s);
  CHECK(contains(e, "model.patch_len: found 32"));
  CHECK(contains(e, "expected at most 18"));
  CHECK(contains(sizes_error_of(sized_config("tiny.csv"), make_series({3}, "1mo")), "too short"));
}

TEST_CASE("take_auto_sizes: only the word auto, and only for the four sizes") {
  json m = {{"context_length", "auto"}, {"d_model", "auto"}, {"horizon", "lots"}};
  const train::AutoSizes a = train::take_auto_sizes(m);
  CHECK(a.context);
  CHECK(!a.horizon);
  CHECK(m["context_length"] == 1);  // a placeholder until resolve_sizes
  CHECK(m["d_model"] == "auto");    // left for the model parser to refuse
  CHECK_THROWS_AS(sized_config("x.csv", {{"d_model", "auto"}}), InputError);
  CHECK_THROWS_AS(sized_config("x.csv", {{"horizon", "lots"}}), InputError);
}
