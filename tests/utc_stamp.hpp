#pragma once
// "2026-12-02T04:10:03Z": the progress lines' UTC stamp, matched by hand (GCC 12 warns,
// -Werror, inside libstdc++'s <regex> in the sanitizer build's -O1).
#include <cctype>
#include <string_view>

namespace test_stamp {

// Whether `s` starts with a stamp (20 characters).
inline bool starts_with_stamp(std::string_view s) {
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() < shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    if (shape[i] == 'd' ? !digit : s[i] != shape[i]) return false;
  }
  return true;
}

inline bool is_stamp(std::string_view s) {
  return s.size() == 20 && starts_with_stamp(s);
}

// Whether a clock time "hh:mm:ssZ" appears anywhere in `text`.
inline bool has_clock(std::string_view text) {
  for (size_t i = 0; i + 9 <= text.size(); ++i) {
    const std::string_view t = text.substr(i, 9);
    bool ok = t[2] == ':' && t[5] == ':' && t[8] == 'Z';
    for (size_t k : {0, 1, 3, 4, 6, 7}) ok = ok && std::isdigit(static_cast<unsigned char>(t[k]));
    if (ok) return true;
  }
  return false;
}

}  // namespace test_stamp
