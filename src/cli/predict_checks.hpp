#pragma once
// What `attnfc predict` checks in a history before forecasting from it: conditions under
// which it still forecasts, but the user should know (a warning each, one line), or which
// --strict refuses (InputError, exit 2, nothing written).
#include <string>
#include <vector>

#include "attnfc/data/series.hpp"
#include "attnfc/train/loaded_model.hpp"

namespace attnfc::cli {

struct HistoryFinding {
  std::string found;        // "10 rows of history, the model reads 112 (model.context_length)"
  std::string consequence;  // "the first 102 context steps are treated as missing"
};

// The findings for `series` (read from `input` by lm.read_series, before predict gives an
// unknown frequency the model's): a history shorter than the model's context, a time step
// other than the model's, trailing rows with missing values.
std::vector<HistoryFinding> check_history(const train::LoadedModel& lm,
                                          const data::TimeSeries& series);

// Logs "<input>: <found>; <consequence>" for each finding as a warning, or with `strict`
// throws InputError "<input>: <found>; refused by --strict" for the first.
void report_history(const std::vector<HistoryFinding>& findings, const std::string& input,
                    bool strict);

}  // namespace attnfc::cli
