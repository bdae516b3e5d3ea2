// configs/schema.json describes every key of the data section the parser writes back
// (train::to_json): an editor validating a config against the schema must not flag a key
// attnfc reads, and the shipped configs must pass it.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/base/json_config.hpp"
#include "attnfc/train/run_config.hpp"

using namespace attnfc;

TEST_CASE("schema: every data key the parser writes is in configs/schema.json") {
  const nlohmann::json schema =
      load_json_file(std::string(ATTNFC_SOURCE_DIR) + "/configs/schema.json");
  const nlohmann::json& props = schema["properties"]["data"]["properties"];
  const nlohmann::json config = {
      {"data",
       {{"path", "x.csv"},
        {"delimiter", ";"},
        {"decimal", ","},
        {"thousands", "."},
        {"date_format", "%d.%m.%Y"},
        {"id_column", "id"},
        {"targets", {"y"}},
        {"past_covariates", {"p"}},
        {"future_covariates", {"f"}},
        {"calendar", "auto"},
        {"holidays", "h.csv"},
        {"static", {"s"}},
        {"transform", {{"box_cox", 0.25}}}}},
      {"model",
       {{"channel_mode", "mixed"}, {"decoder", "cross_attention"}, {"loss_positions", "last"}}}};
  const nlohmann::json written = train::to_json(train::parse_run_config(config));
  for (const auto& [key, value] : written["data"].items()) {
    CAPTURE(key);
    CHECK(props.contains(key));
  }
  // The shipped configs use only keys the schema knows.
  for (const char* name : {"pollution_both.json", "pollution_calendar.json", "m4_hourly.json",
                           "m4_hourly_quantiles.json", "m4_hourly_intervals.json"}) {
    const nlohmann::json j = load_json_file(std::string(ATTNFC_SOURCE_DIR) + "/configs/" + name);
    for (const auto& [key, value] : j["data"].items()) {
      CAPTURE(name);
      CAPTURE(key);
      CHECK(props.contains(key));
    }
  }
}

TEST_CASE("schema: the train section's defaults are the parser's") {
  const nlohmann::json schema =
      load_json_file(std::string(ATTNFC_SOURCE_DIR) + "/configs/schema.json");
  const nlohmann::json& props = schema["properties"]["train"]["properties"];
  const nlohmann::json written =
      train::to_json(train::parse_run_config({{"data", {{"path", "x.csv"}}}}))["train"];
  for (const auto& [key, spec] : props.items()) {
    CAPTURE(key);
    // Keys written only when given (ensemble_contexts) have no default to compare.
    if (!written.contains(key) || !spec.contains("default")) continue;
    if (spec["default"].is_number_float() || written[key].is_number_float())
      CHECK(spec["default"].get<double>() == doctest::Approx(written[key].get<double>()));
    else
      CHECK(spec["default"] == written[key]);
  }
}
