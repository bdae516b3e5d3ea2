// The strict JSON section reader shared by every config section, and JSON file
// loading with line:column errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/base/json_config.hpp"

namespace attnfc {
namespace {

std::string type_name(const nlohmann::json& v) {
  if (v.is_number_integer()) return "an integer (" + json_excerpt(v) + ")";
  if (v.is_number()) return "a number (" + json_excerpt(v) + ")";
  if (v.is_string()) return "a string (" + json_excerpt(v) + ")";
  if (v.is_boolean()) return std::string("a boolean (") + v.dump() + ")";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string format_number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = std::numeric_limits<int>::max();
  for (const auto& c : candidates) {
    const int d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // A typo changes a few characters; beyond about a third of the word the
  // suggestion would be a guess that misleads more than it helps.
  const int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  return best_distance <= limit ? best : std::string();
}

nlohmann::json load_json_file(const std::string& path, const JsonLimits& limits) {
  const std::string text = read_input_file(path, limits.max_bytes, "config file");
  return parse_json_bounded(text, path, limits);
}

ConfigSection::ConfigSection(const nlohmann::json& object, std::string path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object() && !object_.is_null()) {
    throw InputError("config key '" + path_ + "': found " + type_name(object_) +
                     ", expected an object {...}");
  }
}

std::string ConfigSection::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool ConfigSection::has(const std::string& key) const {
  return object_.is_object() && object_.contains(key);
}

const nlohmann::json* ConfigSection::find(const std::string& key) {
  known_.insert(key);
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t ConfigSection::get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  int64_t x = 0;
  if (v->is_number_integer()) {
    x = v->get<int64_t>();
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) x = hi + 1;
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
             v->get<double>() == std::floor(v->get<double>()) &&
             std::fabs(v->get<double>()) < 9e15) {
    x = static_cast<int64_t>(v->get<double>());  // 64.0 is accepted as 64
  } else {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) + ", expected " +
                     range);
  }
  if (x < lo || x > hi) {
    throw InputError("config key '" + key_path(key) + "': found " + v->dump() +
                     ", out of range: expected " + range);
  }
  return x;
}

double ConfigSection::get_number(const std::string& key, double fallback, double lo, double hi,
                                 bool lo_open, bool hi_open) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  const std::string range = std::string("a number in ") + (lo_open ? "(" : "[") +
                            format_number(lo) + ", " + format_number(hi) + (hi_open ? ")" : "]");
  if (!v->is_number()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) + ", expected " +
                     range);
  }
  const double x = v->get<double>();
  const bool below = lo_open ? !(x > lo) : !(x >= lo);
  const bool above = hi_open ? !(x < hi) : !(x <= hi);
  if (below || above) {
    throw InputError("config key '" + key_path(key) + "': found " + v->dump() +
                     ", out of range: expected " + range);
  }
  return x;
}

bool ConfigSection::get_bool(const std::string& key, bool fallback) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) +
                     ", expected true or false");
  }
  return v->get<bool>();
}

std::string ConfigSection::get_string(const std::string& key, const std::string& fallback) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_string()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) +
                     ", expected a string");
  }
  return v->get<std::string>();
}

std::string ConfigSection::get_choice(const std::string& key, const std::string& fallback,
                                      const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_string()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) +
                     ", expected one of " + list);
  }
  const std::string s = v->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
  const std::string hint = closest_match(s, allowed);
  throw InputError("config key '" + key_path(key) + "': found " + json_excerpt(*v) +
                   ", expected one of " + list +
                   (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
}

std::vector<std::string> ConfigSection::get_string_list(const std::string& key,
                                                        const std::vector<std::string>& fallback) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  const std::string expected = ", expected an array of strings";
  if (!v->is_array()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) + expected);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& e = (*v)[i];
    if (!e.is_string()) {
      throw InputError("config key '" + key_path(key) + "[" + std::to_string(i) + "]': found " +
                       type_name(e) + expected);
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<int> ConfigSection::get_int_list(const std::string& key,
                                             const std::vector<int>& fallback, int lo, int hi) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  const std::string expected =
      ", expected an array of integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v->is_array()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) + expected);
  }
  std::vector<int> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& e = (*v)[i];
    if (!e.is_number_integer() || e.get<int64_t>() < lo || e.get<int64_t>() > hi) {
      throw InputError("config key '" + key_path(key) + "[" + std::to_string(i) + "]': found " +
                       e.dump() + expected);
    }
    out.push_back(e.get<int>());
  }
  return out;
}

std::vector<double> ConfigSection::get_number_list(const std::string& key,
                                                   const std::vector<double>& fallback, double lo,
                                                   double hi) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  const std::string expected = ", expected an array of numbers in (" + nlohmann::json(lo).dump() +
                               ", " + nlohmann::json(hi).dump() + ")";
  if (!v->is_array()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) + expected);
  }
  std::vector<double> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& e = (*v)[i];
    if (!e.is_number() || !(e.get<double>() > lo && e.get<double>() < hi)) {
      throw InputError("config key '" + key_path(key) + "[" + std::to_string(i) + "]': found " +
                       e.dump() + expected);
    }
    out.push_back(e.get<double>());
  }
  return out;
}

const nlohmann::json& ConfigSection::get_object(const std::string& key) {
  static const nlohmann::json kNull;
  const nlohmann::json* v = find(key);
  if (!v) return kNull;
  if (!v->is_object()) {
    throw InputError("config key '" + key_path(key) + "': found " + type_name(*v) +
                     ", expected an object {...}");
  }
  return *v;
}

void ConfigSection::allow(const std::string& key) {
  known_.insert(key);
}

void ConfigSection::finish() const {
  if (!object_.is_object()) return;
  const std::vector<std::string> known(known_.begin(), known_.end());
  for (const auto& item : object_.items()) {
    if (known_.count(item.key())) continue;
    // A typo is short; a long key gets neither a suggestion nor a full echo.
    const bool long_key = item.key().size() > 80;
    const std::string hint = long_key ? std::string() : closest_match(item.key(), known);
    std::string msg = "unknown config key '" +
                      key_path(long_key ? item.key().substr(0, 60) + "..." : item.key()) + "'";
    if (!hint.empty()) {
      msg += " (did you mean '" + key_path(hint) + "'?)";
    } else {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      msg += "; the keys of '" + path_ + "' are: " + list;
    }
    throw InputError(msg);
  }
}

}  // namespace attnfc
