// predict's history checks (predict_checks.hpp).
#include "predict_checks.hpp"

#include <spdlog/spdlog.h>

#include <optional>

#include "attnfc/base/enum_names.hpp"
#include "attnfc/base/error.hpp"

namespace attnfc::cli {

namespace {

// The rows are front-padded with unobserved steps up to the context (cmd_predict.cpp).
std::optional<HistoryFinding> short_history(const train::LoadedModel& lm,
                                            const data::TimeSeries& series) {
  const auto rows = static_cast<int64_t>(series.rows());
  const int64_t L = lm.context();
  if (rows >= L) return std::nullopt;
  return HistoryFinding{
      std::to_string(rows) + (rows == 1 ? " row" : " rows") + " of history, the model reads " +
          std::to_string(L) + " (model.context_length)",
      "the first " + std::to_string(L - rows) + " context steps are treated as missing"};
}

// The step the file's own timestamps show, whatever data.frequency the training config
// gave (read_series applies that one): the model only knows rows, not time.
std::optional<HistoryFinding> other_frequency(const train::LoadedModel& lm,
                                              const data::TimeSeries& series) {
  const data::Frequency seen = data::infer_frequency(series.timestamps);
  if (!seen.known() || lm.frequency.empty() || lm.frequency == "unknown") return std::nullopt;
  data::Frequency trained;
  try {
    trained = data::Frequency::parse(lm.frequency);
  } catch (const InputError&) {
    return std::nullopt;  // metadata this build cannot read: nothing to compare with
  }
  if (seen.name() == trained.name()) return std::nullopt;
  std::string steps = "the forecast continues this file's rows";
  if (series.frequency.known())
    steps += ", with timestamps " + series.frequency.name() + " apart" +
             (series.frequency_inferred ? "" : " (the training config's data.frequency)");
  return HistoryFinding{
      "frequency " + seen.name() + ", the model was trained on " + trained.name() + " data", steps};
}

// Under ffill / interpolate / mask the filled cells stay unobserved, and the model reads
// them as missing; the forecast's first timestamp still follows the file's last row.
std::optional<HistoryFinding> missing_at_end(const data::TimeSeries& series) {
  const size_t rows = series.rows(), C = series.num_channels();
  std::vector<bool> in_channel(C, false);
  size_t n = 0;
  for (; n < rows; ++n) {
    bool any = false;
    for (size_t c = 0; c < C; ++c)
      if (!series.is_observed(rows - 1 - n, c)) any = in_channel[c] = true;
    if (!any) break;
  }
  if (n == 0) return std::nullopt;
  std::string columns;
  for (size_t c = 0; c < C; ++c)
    if (in_channel[c]) columns += (columns.empty() ? "" : ", ") + series.channels[c];
  const std::string from = series.format_time(series.timestamps[rows - n]);
  const std::string which =
      n == 1 ? "the last row (" + from + ") has"
             : "the last " + std::to_string(n) + " rows (from " + from + ") have";
  return HistoryFinding{which + " missing values in " + columns,
                        "the model reads them as missing (data.missing " +
                            std::string(enum_name(series.missing_policy)) +
                            ") and the forecast starts after them"};
}

}  // namespace

std::vector<HistoryFinding> check_history(const train::LoadedModel& lm,
                                          const data::TimeSeries& series) {
  std::vector<HistoryFinding> out;
  for (auto finding :
       {short_history(lm, series), other_frequency(lm, series), missing_at_end(series)})
    if (finding) out.push_back(std::move(*finding));
  return out;
}

void report_history(const std::vector<HistoryFinding>& findings, const std::string& input,
                    bool strict) {
  for (const HistoryFinding& f : findings) {
    if (strict) throw InputError(input + ": " + f.found + "; refused by --strict");
    spdlog::warn("{}: {}; {}", input, f.found, f.consequence);
  }
}

}  // namespace attnfc::cli
