// Checkpoints: save -> load -> identical predictions, and a clear error for a
// wrong name, shape, dtype, format version or reserved metadata key.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "model_test_util.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using namespace attnfc;
using model::Checkpoint;
using model::ModelConfig;
using model::PatchTransformer;
namespace st = attnfc::safetensors;

namespace {

std::string load_error(const std::string& path) {
  try {
    const Checkpoint ck = Checkpoint::read(path);
    ag::ParameterSet params;
    PatchTransformer m(ck.config(), params, 0);
    ck.load_into(m);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("checkpoint: save, load, identical predictions, metadata and extras kept") {
  ModelConfig c = model_test::micro_config();
  c.embedding = model::PatchEmbedding::kResidualMlp;
  c.positional = model::PositionalEncoding::kLearned;
  ag::ParameterSet params;
  PatchTransformer m(c, params, 21);
  model_test::randomize(params, 22);
  const std::string path = "test_checkpoint_roundtrip.safetensors";
  model::save_checkpoint(path, m, {{"columns", "[\"OT\"]"}, {"frequency", "1h"}},
                         {{"adamw.m.head.weight", {1.0f, 2.0f}}});
  const Checkpoint ck = Checkpoint::read(path);
  CHECK(model::to_json(ck.config()) == model::to_json(c));
  CHECK(ck.meta("frequency") == "1h");
  CHECK(ck.meta("columns") == "[\"OT\"]");
  CHECK(ck.meta("format") == "attnfc.patch_transformer");
  CHECK(ck.attnfc_version() == ATTNFC_VERSION);
  REQUIRE(ck.extra().size() == 1);
  CHECK(ck.extra()[0].name == "adamw.m.head.weight");
  CHECK(ck.extra()[0].values == std::vector<float>{1.0f, 2.0f});
  ag::ParameterSet params2;
  PatchTransformer m2(ck.config(), params2, 999);  // different init, then overwritten
  ck.load_into(m2);
  const std::vector<float> s = model_test::make_series(8 * 4, 1, 7);
  CHECK(m.forecast(s.data(), nullptr, 4, 8, 11) == m2.forecast(s.data(), nullptr, 4, 8, 11));
  std::remove(path.c_str());
}

TEST_CASE("checkpoint: wrong name, shape, dtype, version and metadata are named") {
  ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 1);
  const std::string good = "test_checkpoint_good.safetensors";
  const std::string bad = "test_checkpoint_bad.safetensors";
  model::save_checkpoint(good, m);
  CHECK(load_error(good).empty());

  st::File f = st::read(good);
  auto rewrite = [&](auto&& edit) {
    st::File g = f;
    edit(g);
    st::write(bad, g);
    return load_error(bad);
  };
  std::string e = rewrite([](st::File& g) { g.tensors[0].name = "embed.weigth"; });
  CHECK(contains(e, "tensor 'embed.weight' is missing"));
  e = rewrite([](st::File& g) { g.tensors.push_back({"surprise", {1}, {0.0f}}); });
  CHECK(contains(e, "unexpected tensor 'surprise'"));
  e = rewrite([](st::File& g) {
    for (auto& t : g.tensors) {
      if (t.name == "head.weight") t.shape = {t.shape[1], t.shape[0]};
    }
  });
  CHECK(contains(e, "tensor 'head.weight' has shape [8, 3], expected [3, 8]"));
  e = rewrite([](st::File& g) { g.metadata["format_version"] = "3"; });
  CHECK(contains(e, "format_version is 3"));
  CHECK(contains(e, "reads versions 1 and 2"));
  // Version 2 is an ensemble: a one-network file cannot claim it.
  e = rewrite([](st::File& g) { g.metadata["format_version"] = "2"; });
  CHECK(contains(e, "metadata 'members' is \"1\", expected a whole number from 2 to 64"));
  // Files written before ensembles have no 'members' key and hold one network.
  CHECK(rewrite([](st::File& g) { g.metadata.erase("members"); }).empty());
  e = rewrite([](st::File& g) { g.metadata.erase("model_config"); });
  CHECK(contains(e, "'model_config' is missing"));
  e = rewrite([](st::File& g) { g.metadata["format"] = "something.else"; });
  CHECK(contains(e, "expected \"attnfc.patch_transformer\""));
  e = rewrite([](st::File& g) { g.metadata["model_config"] = R"({"d_modl": 8})"; });
  CHECK(contains(e, "did you mean 'model.d_model'?"));
  // A non-F32 tensor is refused by the reader, naming the tensor.
  {
    std::string bytes = st::serialize(f);
    const auto at = bytes.find("\"F32\"");
    bytes.replace(at, 5, "\"I32\"");
    std::FILE* out = std::fopen(bad.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
    CHECK(contains(load_error(bad), "has dtype I32, expected F32"));
  }
  CHECK_THROWS_WITH_AS(model::save_checkpoint(bad, m, {{"format", "x"}}),
                       doctest::Contains("reserved"), InputError);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("checkpoint: an ensemble keeps every member; a one-network load refuses it") {
  const ModelConfig c = model_test::micro_config();
  ag::ParameterSet p1, p2, p3;
  PatchTransformer m1(c, p1, 1), m2(c, p2, 2), m3(c, p3, 3);
  model_test::randomize(p1, 11);
  model_test::randomize(p2, 12);
  model_test::randomize(p3, 13);
  const std::string path = "test_checkpoint_ensemble.safetensors";
  model::save_ensemble_checkpoint(path, {&m1, &m2, &m3}, {{"frequency", "1h"}});
  const Checkpoint ck = Checkpoint::read(path);
  CHECK(ck.members() == 3);
  CHECK(ck.meta("format_version") == "2");
  CHECK(ck.meta("frequency") == "1h");
  ag::ParameterSet q1, q2, q3;
  PatchTransformer n1(ck.config(), q1, 0), n2(ck.config(), q2, 0), n3(ck.config(), q3, 0);
  ck.load_members({&n1, &n2, &n3});
  // Each member comes back as itself, in order.
  const std::vector<float> s = model_test::make_series(8 * 2, 1, 5);
  CHECK(m1.forecast(s.data(), nullptr, 2, 8, 4) == n1.forecast(s.data(), nullptr, 2, 8, 4));
  CHECK(m2.forecast(s.data(), nullptr, 2, 8, 4) == n2.forecast(s.data(), nullptr, 2, 8, 4));
  CHECK(m3.forecast(s.data(), nullptr, 2, 8, 4) == n3.forecast(s.data(), nullptr, 2, 8, 4));
  CHECK(m1.forecast(s.data(), nullptr, 2, 8, 4) != n2.forecast(s.data(), nullptr, 2, 8, 4));
  CHECK_THROWS_WITH_AS(ck.load_into(n1), doctest::Contains("holds an ensemble of 3 networks"),
                       InputError);

  // A member's tensor missing is named with its member prefix; stray tensors are refused.
  st::File f = st::read(path);
  const std::string bad = "test_checkpoint_ensemble_bad.safetensors";
  st::File g = f;
  for (auto& t : g.tensors)
    if (t.name == "member2.head.weight") t.name = "member4.head.weight";
  st::write(bad, g);
  // Checked when the file is read, before anyone builds the members.
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad),
                       doctest::Contains("tensor 'member2.head.weight' is missing"), InputError);
  g = f;
  g.metadata["members"] = "65";
  st::write(bad, g);
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad), doctest::Contains("a whole number from 2 to 64"),
                       InputError);
  g = f;
  g.metadata["members"] = "two";
  st::write(bad, g);
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad), doctest::Contains("metadata 'members' is \"two\""),
                       InputError);
  CHECK_THROWS_WITH_AS(model::save_checkpoint(bad, m1, {{"members", "1"}}),
                       doctest::Contains("reserved"), InputError);
  std::remove(path.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("checkpoint: parameter_specs lists exactly the parameters a built model has") {
  std::vector<ModelConfig> configs;
  ModelConfig c = model_test::micro_config();
  configs.push_back(c);
  c.embedding = model::PatchEmbedding::kResidualMlp;
  c.positional = model::PositionalEncoding::kLearned;
  configs.push_back(c);
  c.linear_lookback = 5;
  c.n_layers = 3;
  configs.push_back(c);
  c = model_test::micro_config();
  c.channel_mode = decltype(c.channel_mode)::kMixed;
  c.channels = 3;
  c.positional = model::PositionalEncoding::kNone;
  c.n_layers = 0;
  configs.push_back(c);
  for (const auto& cfg : configs) {
    ag::ParameterSet params;
    PatchTransformer m(cfg, params, 1);
    const auto specs = model::parameter_specs(cfg);
    REQUIRE(specs.size() == params.all().size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const auto& p = params.all()[i];
      CHECK(specs[i].name == p.name);
      std::vector<int64_t> dims;
      for (int k = 0; k < p.tensor.ndim(); ++k) dims.push_back(p.tensor.size(k));
      CHECK(specs[i].shape == dims);
    }
  }
}

TEST_CASE("checkpoint: a small file claiming a huge model_config is refused before any build") {
  // Issue 18 item 2: a 19 KB file whose model_config says d_model 4096 x 64 layers made
  // LoadedModel::load build a ~154 GB model before comparing a tensor shape.
  const ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 1);
  const std::string good = "test_checkpoint_bomb_good.safetensors";
  const std::string bad = "test_checkpoint_bomb.safetensors";
  model::save_checkpoint(good, m);
  st::File f = st::read(good);
  ModelConfig huge = c;
  huge.d_model = 4096;
  huge.n_heads = 64;
  huge.n_layers = 64;
  f.metadata["model_config"] = model::to_json(huge).dump();
  st::write(bad, f);
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad),
                       doctest::Contains("tensor 'embed.weight' has shape [8, 4], expected "
                                         "[4096, 4] for the model_config"),
                       InputError);
  // Parameters are backed by the file; the sinusoidal table is not, so it has a budget.
  ModelConfig wide = c;
  wide.context_length = 65536;
  wide.patch_len = 1;
  wide.d_model = 4096;
  wide.n_heads = 1;
  wide.n_layers = 0;
  wide.horizon = 1;
  st::File w;
  w.metadata = f.metadata;
  w.metadata["model_config"] = model::to_json(wide).dump();
  for (const auto& spec : model::parameter_specs(wide)) {
    size_t n = 1;
    for (int64_t d : spec.shape) n *= static_cast<size_t>(d);
    w.tensors.push_back({spec.name, spec.shape, std::vector<float>(n)});
  }
  st::write(bad, w);
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad), doctest::Contains("-byte position table"),
                       InputError);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("checkpoint: model_config metadata is parsed bounded (depth, duplicates, range)") {
  const ModelConfig c = model_test::micro_config();
  ag::ParameterSet params;
  PatchTransformer m(c, params, 1);
  const std::string good = "test_checkpoint_json_good.safetensors";
  const std::string bad = "test_checkpoint_json.safetensors";
  model::save_checkpoint(good, m);
  const st::File f = st::read(good);
  auto with_config = [&](const std::string& text) {
    st::File g = f;
    g.metadata["model_config"] = text;
    st::write(bad, g);
    return load_error(bad);
  };
  // 100k levels crashed every command that opened the file (stack overflow).
  std::string e =
      with_config(R"({"d_model": )" + std::string(100000, '[') + std::string(100000, ']') + "}");
  CHECK(contains(e, bad + ": metadata 'model_config': key 'd_model"));
  CHECK(contains(e, "nested deeper than 64 levels"));
  e = with_config(R"({"d_model": 8, "d_model": 4096})");
  CHECK(contains(e, "key 'd_model' appears twice"));
  e = with_config(R"({"d_model": 1e999})");
  CHECK(contains(e, "metadata 'model_config': key 'd_model'"));
  CHECK(contains(e, "range of a double"));
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

namespace {

// One line of tests/model/data/step_major_forecasts.txt: "<name> <what> <count> <hex floats>".
std::vector<float> recorded(const std::string& name, const std::string& what) {
  const std::string path =
      std::string(ATTNFC_SOURCE_DIR) + "/tests/model/data/step_major_forecasts.txt";
  std::FILE* f = std::fopen(path.c_str(), "r");
  REQUIRE(f != nullptr);
  char n[64], w[16];
  size_t count = 0;
  std::vector<float> out;
  while (std::fscanf(f, "%63s %15s %zu", n, w, &count) == 3) {
    std::vector<float> v(count);
    for (float& x : v) REQUIRE(std::fscanf(f, "%a", &x) == 1);
    if (name == n && what == w) out = v;
  }
  std::fclose(f);
  REQUIRE(!out.empty());
  return out;
}

}  // namespace

TEST_CASE("checkpoint: a step-major quantile head (written before 2026-12-05) forecasts its bits") {
  // Two models saved by the old code with the forecasts it made (data/make_step_major_fixture.cc):
  // read now, their head rows (and the head's optimiser state) move to the level-major order.
  for (const std::string name : {"step_major_shortcut", "step_major_mixed"}) {
    CAPTURE(name);
    const Checkpoint ck = Checkpoint::read(std::string(ATTNFC_SOURCE_DIR) + "/tests/model/data/" +
                                           name + ".safetensors");
    CHECK(ck.meta(model::kHeadLayoutKey).empty());
    ag::ParameterSet params;
    PatchTransformer m(ck.config(), params, 0);
    ck.load_into(m);
    const ModelConfig& c = ck.config();
    const int64_t C = c.token_channels(), B = 3, Q = c.levels(), H = c.horizon;
    const bool rollout = c.linear_lookback > 0;
    const std::vector<float> s =
        model_test::make_series(B * c.context_length, C, rollout ? 33 : 43);
    std::vector<float> levels;
    const std::vector<float> point =
        m.forecast(s.data(), nullptr, B, c.context_length, rollout ? 5 : 3, {}, &levels);
    const std::vector<float> want_point = recorded(name, "point"),
                             want_levels = recorded(name, "levels");
    CHECK(std::memcmp(point.data(), want_point.data(), sizeof(float) * point.size()) == 0);
    REQUIRE(levels.size() == want_levels.size());
    CHECK(std::memcmp(levels.data(), want_levels.data(), sizeof(float) * levels.size()) == 0);
    // The optimiser state held each head row's old index: row (k Q + j) C + ch is now at
    // (j H + k) C + ch, every value of the row with it.
    for (const ag::StateTensor& t : ck.extra()) {
      const size_t width = t.values.size() / static_cast<size_t>(H * Q * C);
      for (int64_t k = 0; k < H; ++k)
        for (int64_t j = 0; j < Q; ++j)
          for (int64_t ch = 0; ch < C; ++ch)
            for (size_t i = 0; i < width; ++i)
              CHECK(t.values[((j * H + k) * C + ch) * width + i] ==
                    static_cast<float>(((k * Q + j) * C + ch) * width + i));
    }
    // Saved again, the file says its layout and reads back unmoved.
    const std::string path = "test_checkpoint_level_major.safetensors";
    model::save_checkpoint(path, m, {});
    const Checkpoint again = Checkpoint::read(path);
    CHECK(again.meta(model::kHeadLayoutKey) == model::kHeadLayout);
    ag::ParameterSet params2;
    PatchTransformer m2(again.config(), params2, 5);
    again.load_into(m2);
    std::vector<float> levels2;
    m2.forecast(s.data(), nullptr, B, c.context_length, rollout ? 5 : 3, {}, &levels2);
    CHECK(levels2 == levels);
    // A layout this attnfc does not know is refused, naming the key.
    st::File file = st::read(path);
    file.metadata[model::kHeadLayoutKey] = "step_major";
    st::write(path, file);
    CHECK(contains(load_error(path),
                   "metadata 'head_layout' is \"step_major\", expected \"level_major\""));
    std::remove(path.c_str());
  }
}
