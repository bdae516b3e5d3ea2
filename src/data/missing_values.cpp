// Missing-value policies: parsing their names and filling gaps in a column.
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"
#include "internal.hpp"

namespace attnfc::data {

namespace detail {

void fill_missing(std::span<float> v, std::span<const uint8_t> obs, MissingPolicy policy) {
  const size_t n = v.size();
  size_t first = 0;
  while (first < n && !obs[first]) ++first;
  for (size_t i = 0; i < first; ++i) v[i] = v[first];  // leading gap: first observed value
  size_t last = first;                                 // last observed row so far
  for (size_t i = first + 1; i < n; ++i) {
    if (obs[i]) {
      if (policy != MissingPolicy::kFfill && i > last + 1) {
        const double a = v[last], b = v[i];
        const double span = static_cast<double>(i - last);
        for (size_t k = last + 1; k < i; ++k) {
          v[k] = static_cast<float>(a + (b - a) * (static_cast<double>(k - last) / span));
        }
      }
      last = i;
    } else {
      v[i] = v[last];  // ffill; trailing gap under interpolate: last observed value
    }
  }
}

}  // namespace detail

using detail::quote_token;

MissingPolicy parse_missing_policy(std::string_view text) {
  if (const auto p = enum_from_name<MissingPolicy>(detail::lower(detail::trim_blanks(text))))
    return *p;
  throw InputError("missing-value policy: found '" + quote_token(text) + "', expected " +
                   enum_word_list<MissingPolicy>());
}

}  // namespace attnfc::data
