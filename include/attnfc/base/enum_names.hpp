#pragma once
// The one enum <-> word mechanism (config values, metadata, messages). An enum opts in
// with a specialisation that lists its words in the order of its enumerators:
//   template <> struct attnfc::EnumNames<LossKind> {
//     static constexpr std::array<const char*, 3> words{"mse", "mae", "huber"};
//   };
// and then enum_name(LossKind::kMae) == "mae", enum_from_name<LossKind>("mae"), and
// get_enum (json_config.hpp) reads it from a config with the strict checks.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnfc {

template <typename E>
struct EnumNames;  // specialise: static constexpr std::array<const char*, N> words

template <typename E>
const char* enum_name(E value) {
  const auto i = static_cast<size_t>(value);
  return i < EnumNames<E>::words.size() ? EnumNames<E>::words[i] : "?";
}

template <typename E>
std::optional<E> enum_from_name(std::string_view word) {
  for (size_t i = 0; i < EnumNames<E>::words.size(); ++i)
    if (word == EnumNames<E>::words[i]) return static_cast<E>(i);
  return std::nullopt;
}

template <typename E>
std::vector<std::string> enum_words() {
  return {EnumNames<E>::words.begin(), EnumNames<E>::words.end()};
}

// "a, b or c", for messages.
template <typename E>
std::string enum_word_list() {
  std::string out;
  const auto& w = EnumNames<E>::words;
  for (size_t i = 0; i < w.size(); ++i) {
    if (i > 0) out += i + 1 == w.size() ? " or " : ", ";
    out += w[i];
  }
  return out;
}

}  // namespace attnfc
