// predict's quantile columns (predict_levels.hpp).
#include "predict_levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnfc/base/error.hpp"

namespace attnfc::cli {

namespace {

// The interval a level belongs to (100 (1 - 2q), e.g. 80 for 0.1 and 0.9), or -1 when its
// mirror 1 - q is not a level.
double interval_of(const std::vector<float>& q, float level) {
  const bool paired =
      std::any_of(q.begin(), q.end(), [&](float l) { return std::fabs(l + level - 1.0f) < 1e-6f; });
  return paired ? std::round(1000.0 * std::fabs(1.0 - 2.0 * level)) / 10.0 : -1.0;
}

std::string label(double interval) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", interval);
  return buf;
}

// The intervals --level names, each checked against `available`.
std::vector<double> chosen(const std::string& flag, const std::vector<double>& available,
                           const std::string& model) {
  std::string have;
  for (double a : available) have += (have.empty() ? "" : ", ") + label(a);
  std::vector<double> out;
  for (size_t begin = 0; begin <= flag.size();) {
    const size_t comma = std::min(flag.find(',', begin), flag.size());
    const std::string word = flag.substr(begin, comma - begin);
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    const bool known = end != word.c_str() && *end == '\0' &&
                       std::find(available.begin(), available.end(), v) != available.end();
    if (!known)
      throw InputError(
          "--level: found '" + word + "', but " + model + " has the intervals " +
          (have.empty() ? std::string("(none: no symmetric pair in model.quantiles)") : have) +
          "; expected some of them, comma-separated (e.g. --level " +
          (available.empty() ? std::string("80") : label(available.back())) + ")");
    out.push_back(v);
    begin = comma + 1;
  }
  return out;
}

}  // namespace

LevelColumns level_columns(const std::vector<float>& q, const std::string& flag,
                           const std::string& model) {
  LevelColumns c;
  if (q.empty()) {
    if (!flag.empty())
      throw InputError("--level: " + model +
                       " forecasts points only (no model.quantiles); expected no --level");
    return c;
  }
  c.width = static_cast<int>(q.size());
  std::vector<double> available;
  char buf[64];
  for (float level : q) {
    if (level == 0.5f) continue;
    const double interval = interval_of(q, level);
    if (interval > 0) {
      std::snprintf(buf, sizeof buf, "-%s-%s", level < 0.5f ? "lo" : "hi", label(interval).c_str());
      if (level < 0.5f) available.insert(available.begin(), interval);
    } else {
      std::snprintf(buf, sizeof buf, "-q%g", static_cast<double>(level));
    }
    c.suffix.push_back(buf);
  }
  const std::vector<double> want =
      flag.empty() ? std::vector<double>{} : chosen(flag, available, model);
  int w = 1;
  for (float level : q) {
    if (level == 0.5f) continue;
    const double interval = interval_of(q, level);
    if (flag.empty() || std::find(want.begin(), want.end(), interval) != want.end())
      c.keep.push_back(w);
    ++w;
  }
  return c;
}

}  // namespace attnfc::cli
