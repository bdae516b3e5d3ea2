// Errors by column and by horizon step (breakdown.hpp).
#include "attnfc/train/breakdown.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace attnfc::train {

namespace {

ErrorTable mean_of(const std::vector<double>& se, const std::vector<double>& ae,
                   const std::vector<int64_t>& windows) {
  ErrorTable t{std::vector<double>(se.size(), 0.0), std::vector<double>(se.size(), 0.0), windows};
  for (size_t i = 0; i < se.size(); ++i) {
    if (windows[i] == 0) continue;
    t.mse[i] = se[i] / static_cast<double>(windows[i]);
    t.mae[i] = ae[i] / static_cast<double>(windows[i]);
  }
  return t;
}

nlohmann::json to_json(const ErrorTable& t) {
  return {{"mse", t.mse}, {"mae", t.mae}, {"windows", t.windows}};
}

}  // namespace

nlohmann::json to_json(const Breakdown& b) {
  return {{"columns", to_json(b.columns)}, {"steps", to_json(b.steps)}};
}

BreakdownAccumulator::BreakdownAccumulator(int horizon, int channels)
    : horizon_(horizon),
      channels_(channels),
      col_se_(channels, 0.0),
      col_ae_(channels, 0.0),
      step_se_(horizon, 0.0),
      step_ae_(horizon, 0.0),
      col_windows_(channels, 0),
      step_windows_(horizon, 0),
      win_se_(channels, 0.0),
      win_ae_(channels, 0.0),
      win_n_(channels, 0) {}

void BreakdownAccumulator::add(const float* forecast, const float* actual, const uint8_t* counted) {
  // One pass over [H, C]: a step's row is finished at the end of its row, a column's sums
  // (in step order) once every row is read.
  std::fill(win_se_.begin(), win_se_.end(), 0.0);
  std::fill(win_ae_.begin(), win_ae_.end(), 0.0);
  std::fill(win_n_.begin(), win_n_.end(), 0);
  for (int h = 0; h < horizon_; ++h) {
    double se = 0, ae = 0;
    int64_t n = 0;
    for (int c = 0; c < channels_; ++c) {
      const int64_t i = static_cast<int64_t>(h) * channels_ + c;
      if (std::isnan(actual[i]) || (counted != nullptr && !counted[i])) continue;
      const double e = static_cast<double>(forecast[i]) - actual[i];
      se += e * e, ae += std::fabs(e), ++n;
      win_se_[c] += e * e, win_ae_[c] += std::fabs(e), ++win_n_[c];
    }
    if (n == 0) continue;
    step_se_[h] += se / static_cast<double>(n);
    step_ae_[h] += ae / static_cast<double>(n);
    ++step_windows_[h];
  }
  for (int c = 0; c < channels_; ++c) {
    if (win_n_[c] == 0) continue;
    col_se_[c] += win_se_[c] / static_cast<double>(win_n_[c]);
    col_ae_[c] += win_ae_[c] / static_cast<double>(win_n_[c]);
    ++col_windows_[c];
  }
}

Breakdown BreakdownAccumulator::result() const {
  return {mean_of(col_se_, col_ae_, col_windows_), mean_of(step_se_, step_ae_, step_windows_)};
}

std::string format_column_table(const std::vector<std::string>& names,
                                const std::vector<Breakdown>& original,
                                const std::vector<std::string>& columns) {
  if (original.empty() || original.front().empty()) return "";
  std::vector<size_t> shown;  // columns that were scored (targets, not covariates)
  for (size_t c = 0; c < columns.size() && c < original.front().columns.windows.size(); ++c)
    if (original.front().columns.windows[c] > 0) shown.push_back(c);
  size_t width = 5;
  for (const std::string& n : names) width = std::max(width, n.size());
  std::string out;
  char buf[256];
  for (const char* metric : {"MSE", "MAE"}) {
    std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), metric);
    out += std::string("original units per column, ") + metric + ":\n" + buf;
    for (size_t c : shown) {
      std::snprintf(buf, sizeof buf, " %12.12s", columns[c].c_str());
      out += buf;
    }
    out += "\n";
    for (size_t m = 0; m < names.size() && m < original.size(); ++m) {
      std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), names[m].c_str());
      out += buf;
      const ErrorTable& t = original[m].columns;
      for (size_t c : shown) {
        std::snprintf(buf, sizeof buf, " %12.5g", metric[1] == 'S' ? t.mse[c] : t.mae[c]);
        out += buf;
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace attnfc::train
