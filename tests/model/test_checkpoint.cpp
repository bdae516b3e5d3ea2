// Checkpoints: save -> load -> identical predictions, and a clear error for a
// wrong name, shape, dtype, format version or reserved metadata key.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::Checkpoint;
using model::ModelConfig;
using model::PatchTransformer;
namespace st = attnfc::model::safetensors;

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

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
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
  e = rewrite([](st::File& g) { g.metadata["format_version"] = "2"; });
  CHECK(contains(e, "format_version is 2"));
  CHECK(contains(e, "reads version 1"));
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
