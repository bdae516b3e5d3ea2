#pragma once
// Errors by column and by horizon step: what one pooled number hides (a column that is
// forecast badly, the steps where the error grows). Each entry is scored as the pooled
// metrics are (metrics.hpp): per window, the mean over that column's (that step's) observed
// targets, then the mean over the windows that had one.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attnfc::train {

struct ErrorTable {
  std::vector<double> mse, mae;  // one entry per column (or step)
  std::vector<int64_t> windows;  // windows that had an observed target there (0: none)
};

struct Breakdown {
  ErrorTable columns, steps;
  bool empty() const { return columns.mse.empty(); }
};

// {"columns": {"mse": [...], "mae": [...], "windows": [...]}, "steps": {...}}.
nlohmann::json to_json(const Breakdown& b);

// Accumulates windows in window order (deterministic sums in double).
class BreakdownAccumulator {
 public:
  BreakdownAccumulator(int horizon, int channels);
  // forecast, actual: [horizon, channels]; counted as for MetricAccumulator::add (forecasts
  // are checked there).
  void add(const float* forecast, const float* actual, const uint8_t* counted);
  Breakdown result() const;

 private:
  int horizon_, channels_;
  std::vector<double> col_se_, col_ae_, step_se_, step_ae_;
  std::vector<int64_t> col_windows_, step_windows_;
  std::vector<double> win_se_, win_ae_;  // the current window's sums per column
  std::vector<int64_t> win_n_;
};

// A fixed-width table of the original-unit MSE and MAE per column, one row per model:
// `names` the model names, `columns` the column names (only columns with windows).
std::string format_column_table(const std::vector<std::string>& names,
                                const std::vector<Breakdown>& original,
                                const std::vector<std::string>& columns);

}  // namespace attnfc::train
