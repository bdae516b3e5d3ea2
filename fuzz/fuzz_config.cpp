// libFuzzer target for the JSON config path: parse_json_bounded (the one JSON parser),
// then the run config reader, as `attnfc train --config` runs them (scripts/fuzz.sh).
// Any input must end in a RunConfig or an attnfc::InputError of one line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_parse.hpp"
#include "attnfc/train/run_config.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json root = attnfc::parse_json_bounded(text, "fuzz.json");
    const attnfc::train::RunConfig cfg = attnfc::train::parse_run_config(root);
    // The resolved config is written to config.json and read back on --resume.
    const std::string saved = attnfc::train::to_json(cfg).dump(2);
    const auto again = attnfc::train::parse_run_config(attnfc::parse_json_bounded(saved, "x"));
    check(attnfc::train::to_json(again) == attnfc::train::to_json(cfg));
  } catch (const attnfc::InputError& e) {
    const std::string msg = e.what();
    check(!msg.empty() && msg.find('\n') == std::string::npos && msg.size() < 4096);
  }
  return 0;
}
