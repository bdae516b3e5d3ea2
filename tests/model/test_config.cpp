// Config parsing: defaults, round trip, unknown keys with suggestions, wrong types,
// ranges, cross-key rules, and the shipped config files.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/model/config.hpp"

#include "../support/text.hpp"

using attnfc_test::contains;

using attnfc::InputError;
using attnfc::load_json_file;
using namespace attnfc::model;
using nlohmann::json;

namespace {
// The message of the InputError that parsing `j` throws ("" if none).
std::string error_of(const json& j) {
  try {
    parse_model_config(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("config: defaults and round trip through JSON") {
  const ModelConfig d = parse_model_config(json::object());
  CHECK(d.context_length == 336);
  CHECK(d.patch_len == 16);
  CHECK(d.num_patches() == 21);
  CHECK(d.norm == InputNorm::kCausal);
  CHECK(d.target == HeadTarget::kDeltaFromLast);
  ModelConfig c;
  c.context_length = 64;
  c.patch_len = 8;
  c.norm = InputNorm::kInstance;
  c.loss_positions = LossPositions::kLast;
  c.embedding = PatchEmbedding::kResidualMlp;
  c.positional = PositionalEncoding::kLearned;
  c.loss = LossKind::kHuber;
  c.huber_delta = 0.5f;
  c.dropout = 0.25f;
  const json j = to_json(c);
  const ModelConfig r = parse_model_config(j);
  CHECK(to_json(r) == j);
  CHECK(r.embedding == PatchEmbedding::kResidualMlp);
  CHECK(r.dropout == 0.25f);
  CHECK(parse_model_config(json(nullptr)).d_model == 64);              // null section = defaults
  CHECK(parse_model_config(json{{"d_model", 128.0}}).d_model == 128);  // 128.0 is an integer
}

TEST_CASE("config: unknown key names the key and suggests the closest") {
  const std::string e = error_of(json{{"d_modle", 32}});
  CHECK(contains(e, "unknown config key 'model.d_modle'"));
  CHECK(contains(e, "did you mean 'model.d_model'?"));
  const std::string far = error_of(json{{"completely_unrelated", 1}});
  CHECK(contains(far, "unknown config key 'model.completely_unrelated'"));
  CHECK(!contains(far, "did you mean"));
  CHECK(contains(far, "patch_len"));  // lists the valid keys instead
  const std::string choice = error_of(json{{"norm", "casual"}});
  CHECK(contains(choice, "model.norm"));
  CHECK(contains(choice, "did you mean \"causal\"?"));
}

TEST_CASE("config: wrong types and out-of-range values name key and range") {
  std::string e = error_of(json{{"d_model", "64"}});
  CHECK(contains(e, "'model.d_model'"));
  CHECK(contains(e, "found a string"));
  CHECK(contains(e, "an integer in [1, 4096]"));
  e = error_of(json{{"n_layers", 100}});
  CHECK(contains(e, "'model.n_layers'"));
  CHECK(contains(e, "out of range"));
  CHECK(contains(e, "[0, 64]"));
  e = error_of(json{{"dropout", 1.5}});
  CHECK(contains(e, "'model.dropout'"));
  CHECK(contains(e, "[0, 0.9]"));
  e = error_of(json{{"norm_eps", 0}});
  CHECK(contains(e, "(0, 1]"));
  e = error_of(json{{"patch_len", 2.5}});
  CHECK(contains(e, "'model.patch_len'"));
  e = error_of(json{{"positional", true}});
  CHECK(contains(e, "\"sinusoidal\", \"learned\", \"none\""));
  e = error_of(json::array());
  CHECK(contains(e, "expected an object"));
}

TEST_CASE("config: cross-key rules") {
  std::string e = error_of(json{{"context_length", 100}, {"patch_len", 16}});
  CHECK(contains(e, "multiple of model.patch_len"));
  CHECK(contains(e, "96 or 112"));
  e = error_of(json{{"d_model", 30}, {"n_heads", 4}});
  CHECK(contains(e, "multiple of model.n_heads"));
  e = error_of(json{{"norm", "instance"}});  // with the default loss on all positions
  CHECK(contains(e, "loss_positions"));
  CHECK(error_of(json{{"norm", "instance"}, {"loss_positions", "last"}}).empty());
  CHECK(error_of(json{{"patch_len", 1}, {"context_length", 7}}).empty());
  e = error_of(json{{"linear_lookback", 16}, {"channel_mode", "mixed"}});
  CHECK(contains(e, "model.linear_lookback"));
  CHECK(contains(e, "independent"));
  CHECK(error_of(json{{"linear_lookback", 0}, {"channel_mode", "mixed"}}).empty());
}

TEST_CASE("config: overlapping patches (model.patch_stride)") {
  const ModelConfig s = parse_model_config(json{{"context_length", 104}, {"patch_stride", 8}});
  CHECK(s.stride() == 8);
  CHECK(s.num_patches() == 12);  // (104 - 16) / 8 + 1
  CHECK(s.patch_end(0) == 16);
  CHECK(s.patch_end(11) == 104);  // the last token ends at the forecast origin
  const ModelConfig d = parse_model_config(json::object());
  CHECK(d.stride() == 16);
  CHECK(d.patch_end(20) == 336);
  CHECK(to_json(parse_model_config(to_json(s))) == to_json(s));
  std::string e = error_of(json{{"patch_stride", 17}});
  CHECK(contains(e, "'model.patch_stride'"));
  CHECK(contains(e, "found 17, expected 1 to model.patch_len (16)"));
  e = error_of(json{{"context_length", 100}, {"patch_stride", 8}});
  CHECK(contains(e, "'model.context_length': found 100"));
  CHECK(contains(e, "model.patch_len (16) plus a multiple of model.patch_stride (8)"));
  CHECK(contains(e, "96 or 104"));
  e = error_of(json{{"context_length", 8}, {"patch_stride", 4}});  // shorter than one patch
  CHECK(contains(e, "16 or 20"));
  CHECK(error_of(json{{"context_length", 100}, {"patch_stride", 4}}).empty());
  CHECK(error_of(json{{"patch_stride", 16}}).empty());  // = patch_len: no overlap
}

TEST_CASE("config: shipped configs have valid model sections") {
  for (const char* name : {"default.json", "etth1_S.json"}) {
    const std::string path = std::string(ATTNFC_SOURCE_DIR) + "/configs/" + name;
    const json j = load_json_file(path);
    REQUIRE(j.contains("model"));
    json model = j["model"];
    // "auto" sizes are the run config's to resolve from the data (train/auto_sizes.hpp).
    for (const char* size : {"context_length", "horizon", "patch_len", "linear_lookback"})
      if (model.contains(size) && model[size] == "auto") model.erase(size);
    CHECK_NOTHROW(parse_model_config(model));
  }
}

TEST_CASE("config: configs/schema.json agrees with the parser (keys, defaults, ranges, words)") {
  const json schema = load_json_file(std::string(ATTNFC_SOURCE_DIR) + "/configs/schema.json");
  const json& props = schema["properties"]["model"]["properties"];
  const json defaults = to_json(ModelConfig{});
  CHECK(props.size() == defaults.size());
  // A leak-free pairing so that every single-key change below is valid on its own (and
  // quantile levels, without which quantile_positions "last" is refused).
  const json base = {{"loss_positions", "last"}, {"quantiles", {0.1, 0.5, 0.9}}};
  for (const auto& [name, spec] : props.items()) {
    CAPTURE(name);
    REQUIRE(defaults.contains(name));
    if (spec["default"].is_number_float()) {
      CHECK(static_cast<float>(spec["default"].get<double>()) ==
            static_cast<float>(defaults[name].get<double>()));
    } else {
      CHECK(spec["default"] == defaults[name]);
    }
    // value(): an enum's spec has no "type", and operator[] of a const json on a missing key
    // is undefined (ASan saw it read freed memory).
    if (spec.value("type", "") == "array") {  // each entry in range
      json above = base;
      if (spec["items"].value("type", "") == "integer") {  // static_categories
        above[name] = json::array({spec["items"]["maximum"].get<int64_t>() + 1});
        CHECK(contains(error_of(above), "expected an array of integers"));
      } else {  // quantiles
        above[name] = json::array({0.5, spec["items"]["exclusiveMaximum"].get<double>()});
        CHECK(contains(error_of(above), "expected an array of numbers in (0.0, 1.0)"));
      }
      continue;
    }
    if (spec.contains("enum")) {
      for (const auto& word : spec["enum"]) {
        json j = base;
        j[name] = word;
        // quantile_positions "last" means something only with losses at every position.
        if (name == "quantile_positions") j["loss_positions"] = "all";
        CHECK(error_of(j).empty());
      }
      json j = base;
      j[name] = "not-a-choice";
      CHECK(!error_of(j).empty());
      continue;
    }
    // A size that may also be "auto" (resolved by the run config, train/auto_sizes.hpp):
    // the model parser reads its numeric branch.
    const json& num = spec.contains("anyOf") ? spec["anyOf"][0] : spec;
    if (spec.contains("anyOf")) CHECK(spec["anyOf"][1] == json{{"const", "auto"}});
    const bool integer = num.value("type", "") == "integer";
    const double hi = num["maximum"].get<double>();
    json above = base;
    above[name] = integer ? json(static_cast<int64_t>(hi) + 1) : json(hi * 1.5 + 0.1);
    CHECK(contains(error_of(above), "out of range"));
    if (num.contains("minimum")) {
      const double lo = num["minimum"].get<double>();
      json below = base;
      below[name] = integer ? json(static_cast<int64_t>(lo) - 1) : json(lo - 0.5);
      CHECK(contains(error_of(below), "out of range"));
    } else {
      json at = base;
      at[name] = spec["exclusiveMinimum"].get<double>();  // exclusive bound itself fails
      CHECK(contains(error_of(at), "out of range"));
    }
  }
}
