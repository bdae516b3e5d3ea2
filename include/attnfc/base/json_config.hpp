#pragma once
// The strict JSON reading every config section uses (model, data, train, and the
// checkpoint metadata): an unknown key is an InputError with a "did you mean"
// suggestion, and a wrong type or out-of-range value names the full key path
// ("model.d_model"), what was found and the allowed range.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnfc/base/enum_names.hpp"
#include "attnfc/base/json_parse.hpp"

namespace attnfc {

// Reads a JSON file through read_input_file and parse_json_bounded (size, depth,
// duplicate keys, number range); a syntax error is an InputError "<file>:<line>:<col>: ...".
nlohmann::json load_json_file(const std::string& path, const JsonLimits& limits = {});

// Levenshtein distance (for "did you mean").
int edit_distance(std::string_view a, std::string_view b);
// The closest candidate within a distance that makes sense for a typo, or "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Strict typed reads from one JSON object. Usage:
//   ConfigSection s(json["model"], "model");
//   cfg.d_model = s.get_int("d_model", cfg.d_model, 1, 4096);
//   ...
//   s.finish();  // throws on any key that was not read, suggesting the closest one
class ConfigSection {
 public:
  // Throws InputError if `object` is neither an object nor null (null = empty section).
  ConfigSection(const nlohmann::json& object, std::string path);

  bool has(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi);
  // lo/hi inclusive unless the *_open flag says otherwise.
  double get_number(const std::string& key, double fallback, double lo, double hi,
                    bool lo_open = false, bool hi_open = false);
  bool get_bool(const std::string& key, bool fallback);
  std::string get_string(const std::string& key, const std::string& fallback);
  // One of `allowed`; otherwise an InputError listing them (with a suggestion).
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed);
  std::vector<std::string> get_string_list(const std::string& key,
                                           const std::vector<std::string>& fallback);
  // An array of integers, each in [lo, hi].
  std::vector<int> get_int_list(const std::string& key, const std::vector<int>& fallback, int lo,
                                int hi);
  // An array of numbers, each in the open interval (lo, hi).
  std::vector<double> get_number_list(const std::string& key, const std::vector<double>& fallback,
                                      double lo, double hi);
  // A nested object (null/absent = empty); marks the key as known.
  const nlohmann::json& get_object(const std::string& key);
  // Marks keys as known without reading them (sections parsed elsewhere).
  void allow(const std::string& key);
  // Throws InputError for the first key that was never read or allowed.
  void finish() const;

  std::string key_path(const std::string& key) const;  // "model.d_model"

 private:
  const nlohmann::json* find(const std::string& key);
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string> known_;
};

// An enum with EnumNames (enum_names.hpp) read as one of its words.
template <typename E>
E get_enum(ConfigSection& section, const std::string& key, E fallback) {
  return *enum_from_name<E>(section.get_choice(key, enum_name(fallback), enum_words<E>()));
}

}  // namespace attnfc
