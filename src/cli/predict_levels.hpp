#pragma once
// Which of a quantile model's levels predict writes beside the point forecast (--level),
// and their column names (NeuralForecast's: OT-lo-80, OT-hi-80, ...).
#include <string>
#include <vector>

namespace attnfc::cli {

struct LevelColumns {
  int width = 1;                        // values per target a forecast holds: point + levels
  std::vector<int> keep{0};             // the ones written, the point (0) first
  std::vector<std::string> suffix{""};  // per value of `width`: its column suffix
};

// quantiles: the model's levels (empty: a point model). A forecast holds, per target, the
// point then every level other than 0.5 in increasing order. A level q < 0.5 whose 1 - q is
// a level too is "-lo-<100 (1 - 2q)>", its partner "-hi-<...>"; a level without a partner
// "-q<q>". levels_flag: "" = all; else the intervals to write, e.g. "80,95" (only those
// pairs). An interval the model does not have, or --level on a point model, is an
// InputError naming --level, what was found and what the model has.
LevelColumns level_columns(const std::vector<float>& quantiles, const std::string& levels_flag,
                           const std::string& model);

}  // namespace attnfc::cli
