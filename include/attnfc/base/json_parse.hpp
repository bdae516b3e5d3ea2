#pragma once
// The one JSON parser every attnfc input goes through (config files, --set values,
// safetensors headers, checkpoint metadata). Bounded so that a hostile file can neither
// exhaust the stack nor the memory, and strict where nlohmann::json is lenient:
//   * at most `max_bytes` of text and `max_depth` nested arrays/objects (checked while
//     parsing, without recursion);
//   * a key that appears twice in one object is refused (nlohmann keeps the last);
//   * a number beyond double range (1e999, a 400-digit integer) is refused.
// Every error is one InputError line naming the source and the key path, e.g.
//   "runs/a/config.json: key 'model.d_model' appears twice in one object, expected once".
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/base/error.hpp"

namespace attnfc {

struct JsonLimits {
  size_t max_bytes = size_t{64} << 20;  // 64 MiB
  int max_depth = 64;
};

// The text is not JSON at all (a syntax error): "<source>:<line>:<col>: invalid JSON: ...".
// A subclass so that --set can take a bare word as a string, yet refuse JSON that
// breaks a limit.
class JsonSyntaxError : public InputError {
 public:
  using InputError::InputError;
};

// Throws JsonSyntaxError for a syntax error, InputError for a broken limit.
nlohmann::json parse_json_bounded(std::string_view text, const std::string& source,
                                  const JsonLimits& limits = {});

// A value for an error message: dump() cut to about `max_chars` ("..." appended).
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 60);

}  // namespace attnfc
