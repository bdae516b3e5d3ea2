// parse_json_bounded: nlohmann::json's parser with a callback that tracks the key path,
// bounds the depth and refuses duplicate keys; the parser itself is iterative.
#include "attnfc/base/json_parse.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnfc {
namespace {

using nlohmann::json;

struct Frame {
  bool object = false;
  std::string key;   // objects: the key being read
  size_t index = 0;  // arrays: the element being read
  std::unordered_set<std::string> keys;
};

std::string cut(std::string s, size_t max_chars) {
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "...";
  return s;
}

class PathTracker {
 public:
  PathTracker(const std::string& source, const JsonLimits& limits)
      : source_(source), limits_(limits) {}

  // The key path of the value being parsed: "model.d_model", "data.columns[2]".
  std::string path() const {
    std::string p;
    for (const auto& f : frames_) {
      if (f.object)
        p += (p.empty() ? "" : ".") + cut(f.key, 80);
      else
        p += "[" + std::to_string(f.index) + "]";
    }
    return p.empty() ? "(top level)" : p;
  }

  std::string where() const { return source_ + ": key '" + path() + "'"; }

  bool on_event(json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (frames_.size() >= static_cast<size_t>(limits_.max_depth))
          throw InputError(where() + ": JSON nested deeper than " +
                           std::to_string(limits_.max_depth) + " levels, expected at most " +
                           std::to_string(limits_.max_depth));
        frames_.push_back({event == json::parse_event_t::object_start, {}, 0, {}});
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          throw InputError(where() + " appears twice in one object, expected each key once");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        next_element();
        break;
      case json::parse_event_t::value:
        next_element();
        break;
    }
    return true;
  }

 private:
  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  const std::string& source_;
  const JsonLimits& limits_;
  std::vector<Frame> frames_;
};

[[noreturn]] void syntax_error(std::string_view text, const std::string& source,
                               const json::parse_error& e) {
  // byte is 1-based and points just past the offending character.
  const size_t byte = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text.size());
  long line = 1, column = 1;
  for (size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  std::string what = e.what();
  const auto at = what.find("parse error");
  if (at != std::string::npos) what = what.substr(at);
  throw JsonSyntaxError(locate(source, line, column, "invalid JSON: " + cut(what, 200)));
}

}  // namespace

nlohmann::json parse_json_bounded(std::string_view text, const std::string& source,
                                  const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw InputError(source + ": JSON text of " + std::to_string(text.size()) +
                     " bytes, expected at most " + std::to_string(limits.max_bytes));
  PathTracker tracker(source, limits);
  json::parser_callback_t callback = [&tracker](int, json::parse_event_t event, json& parsed) {
    return tracker.on_event(event, parsed);
  };
  try {
    return json::parse(text, callback);
  } catch (const json::parse_error& e) {
    syntax_error(text, source, e);
  } catch (const json::out_of_range& e) {
    // 406: a number that does not fit a double (1e999, a 400-digit integer).
    std::string what = e.what();
    const auto at = what.find("number overflow");
    if (at != std::string::npos) what = what.substr(at);
    throw InputError(tracker.where() + ": " + cut(what, 80) +
                     ", expected a number within the range of a double (about 1.8e308)");
  }
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
  // A string's dump of a huge value is itself huge: cut the string before dumping.
  if (value.is_string() && value.get_ref<const std::string&>().size() > max_chars)
    return json(value.get_ref<const std::string&>().substr(0, max_chars))
               .dump(-1, ' ', false, json::error_handler_t::replace) +
           "...";
  const bool small = value.size() <= 8;
  if (value.is_array() && !small)
    return "an array of " + std::to_string(value.size()) + " elements";
  if (value.is_object() && !small) return "an object of " + std::to_string(value.size()) + " keys";
  return cut(value.dump(-1, ' ', false, json::error_handler_t::replace), max_chars);
}

}  // namespace attnfc
